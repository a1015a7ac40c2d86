// The compiled-in tables are those of the committed sweeps the build packaged (KTUNE_RUNTIME_RESULTS,
// KTUNE_RUNTIME_SPACE; by default the H200's default sweep of mla_decode): every key a sweep has a
// winner for selects exactly that winner, whose code object is in the package on disk, so no key
// of the table answers UNSUPPORTED or waits for a run-time compile. And the shapes the smoke tables
// lacked (8 heads x 16 tokens, 128 heads x 16 tokens) resolve through the library's C++ API.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/runtime/compiled_table.hpp"
#include "dispatch/runtime/family.hpp"
#include "ktune/runtime.hpp"
#include "package/runtime_support.hpp"
#include "unit/package_support.hpp"

namespace ktune::runtime {
namespace {

using namespace package_test;

struct PackagedDump {
  std::string family, arch, sql;
};

// KTUNE_RUNTIME_PACKAGED_DUMPS: "<family>-<arch>=<dump>" joined by '|'.
std::vector<PackagedDump> packaged_dumps() {
  std::vector<PackagedDump> dumps;
  const std::string all = KTUNE_RUNTIME_PACKAGED_DUMPS;
  for (size_t begin = 0; begin < all.size();) {
    size_t end = all.find('|', begin);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(begin, end - begin);
    const size_t dash = item.find('-'), equals = item.find('=');
    if (dash == std::string::npos || equals == std::string::npos || equals < dash)
      throw Error("KTUNE_RUNTIME_PACKAGED_DUMPS holds '" + item + "', which is no <family>-<arch>=<dump>");
    dumps.push_back({item.substr(0, dash), item.substr(dash + 1, equals - dash - 1), item.substr(equals + 1)});
    begin = end + 1;
  }
  return dumps;
}

const RuntimeFamily& runtime_family(const std::string& name) {
  for (const RuntimeFamily* f : families())
    if (f->name == name) return *f;
  throw Error("no runtime family " + name);
}

Values values_of(const Params& p, std::span<const std::string_view> fields) {
  Values v{};
  for (size_t i = 0; i < fields.size(); ++i) v[i] = p.at(std::string(fields[i]));
  return v;
}

// The winner of each key of `dump`, as its newest run measured it: what codegen puts in the table.
std::map<Values, Values> winners_of(const PackagedDump& dump, const RuntimeFamily& family, TempDir& dir) {
  const std::string path = dir.file(dump.family + ".db");
  const auto restored =
      shell(fmt::format("'{}' -batch '{}' \".read '{}'\"", KTUNE_SQLITE3, path, dump.sql), dir.file("sqlite3.log"));
  if (restored.status != 0) throw Error("cannot restore " + dump.sql + ": " + restored.output);
  auto db = db::Database::open(path, /*create=*/false, /*read_only=*/true);
  db::Filter filter;
  filter.family = dump.family;
  filter.arch = dump.arch;
  std::map<int64_t, std::pair<std::string, int64_t>> order;  // run id -> (started_at, id)
  for (const auto& run : db->runs(filter)) order[run.id] = {run.started_at, run.id};
  std::map<Values, std::pair<std::pair<std::string, int64_t>, Values>> newest;
  for (const auto& w : db->winners(filter)) {
    const auto key = values_of(w.m.key, family.key_fields);
    const auto when = order.at(w.m.run_id);
    auto [it, inserted] = newest.try_emplace(key, when, values_of(w.m.config, family.config_fields));
    if (!inserted && it->second.first < when) it->second = {when, values_of(w.m.config, family.config_fields)};
  }
  std::map<Values, Values> out;
  for (const auto& [key, entry] : newest) out.emplace(key, entry.second);
  return out;
}

std::string pretty(const Values& v, std::span<const std::string_view> fields) {
  std::string s;
  for (size_t i = 0; i < fields.size(); ++i) s += fmt::format("{}{}={}", i ? "," : "", fields[i], v[i]);
  return s;
}

TEST(RuntimeDefaultTables, EveryWinnerOfThePackagedSweepsSelectsItsPackagedKernel) {
  const auto dumps = packaged_dumps();
  if (dumps.empty()) GTEST_SKIP() << "this build compiled in packages made elsewhere (KTUNE_RUNTIME_PACKAGES)";
  // On the GPU machine the tests run without the source tree (tests/package/remote_pack.sh).
  if (::access(KTUNE_SQLITE3, X_OK) != 0 || ::access(dumps[0].sql.c_str(), R_OK) != 0)
    GTEST_SKIP() << "needs " << KTUNE_SQLITE3 << " and the committed dumps the build packaged (" << dumps[0].sql << ")";
  for (const auto& dump : dumps) {
    SCOPED_TRACE(dump.family + "-" + dump.arch + " from " + dump.sql);
    const RuntimeFamily& family = runtime_family(dump.family);
    const CompiledTable* table = find_table(compiled_tables(), family, dump.arch);
    ASSERT_NE(table, nullptr) << "the build packaged this dump but compiled in no table of it";
    TempDir dir;
    const auto winners = winners_of(dump, family, dir);
    ASSERT_FALSE(winners.empty()) << "the dump has no winner";
    size_t wrong = 0;
    for (const auto& [key, config] : winners) {
      const Choice c = table->select(key.data());
      const std::string k = pretty(key, family.key_fields);
      const bool served = c.status == KTUNE_OK && c.kernel != nullptr && c.kernel->object != nullptr &&
                          std::string_view(c.reason) == "exact match";
      if (!served) {
        if (++wrong <= 5) ADD_FAILURE() << k << ": " << ktune_status_name(c.status) << " (" << c.reason << ")";
        continue;
      }
      if (c.kernel->config != config && ++wrong <= 5)
        ADD_FAILURE() << k << ": the table's kernel is " << pretty(c.kernel->config, family.config_fields)
                      << ", the sweep's winner " << pretty(config, family.config_fields);
      const CodeObject& o = *c.kernel->object;
      const auto file = std::filesystem::path(test::package_root()) / o.package / o.file;
      if (!std::filesystem::is_regular_file(file) && ++wrong <= 5)
        ADD_FAILURE() << k << ": its code object " << file << " is not in the package";
    }
    EXPECT_EQ(wrong, 0u) << "of " << winners.size() << " winner keys";
  }
}

// 8 heads x a block of 8 and 128 heads x 16: keys only the default sweep tuned (the smoke sweep
// answered UNSUPPORTED), through the shared library's C++ API.
TEST(RuntimeDefaultTables, KeysOnlyTheDefaultSweepTunedResolveToAPackagedKernel) {
  bool default_mla = false;
  for (const auto& dump : packaged_dumps())
    default_mla |= dump.family == "mla_decode" && dump.arch == "sm_90a" &&
                   std::filesystem::path(dump.sql).parent_path().filename() == "default";
  if (!default_mla) GTEST_SKIP() << "this build packaged no default sweep of mla_decode for sm_90a";
  for (const ktune_mla_decode_key key : {ktune_mla_decode_key{16, 8, 1, 0, 8}, ktune_mla_decode_key{128, 16, 1, 0, 32},
                                         ktune_mla_decode_key{128, 16, 0, 1, 128}}) {
    SCOPED_TRACE(fmt::format("heads={} block_len={} causal={} kv_dtype={} batch={}", key.heads, key.block_len,
                             key.causal, key.kv_dtype, key.batch));
    const ktune::Result r = ktune::mla_decode_select("sm_90a", key);
    EXPECT_EQ(r.status, ktune::Status::ok) << r.message;
    EXPECT_EQ(r.message, "exact match");
    const Choice c = test::compiled(key);
    ASSERT_NE(c.kernel, nullptr);
    EXPECT_NE(c.kernel->object, nullptr) << "packaged, not left to a run-time compile";
  }
}

}  // namespace
}  // namespace ktune::runtime
