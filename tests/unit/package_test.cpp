// `ktune package` as a library (dispatch/package.hpp): real mla_decode configs compiled with
// NVRTC for sm_90a and hipRTC for gfx90a (no device needed). The manifest's hashes must match
// the files, the generated headers must compile and map select()'s kernels to the right code
// object, every symbol must be in its code object, and the validators of codegen must refuse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "backend/backend.hpp"
#include "dispatch/package.hpp"
#include "package_support.hpp"

namespace ktune::dispatch {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using namespace package_test;

bool compiler_ready(const std::string& arch, std::string& why) {
  const auto& b = backend::for_arch(arch);
  if (b.compiler_available(arch)) return true;
  why = b.compiler_unavailable_reason(arch);
  return false;
}

PackageRequest request(const std::string& arch, const std::string& out, const jit::CodeCache* cache = nullptr) {
  PackageRequest r;
  r.table.arch = arch;
  r.table.template_hash = current_hash();
  r.out_dir = out;
  r.cache = cache;
  r.jobs = 1;  // hipRTC of ROCm 5.2 must not compile on two threads of one process
  return r;
}

// The files of the manifest whose size or hashes differ from the files on disk.
std::vector<std::string> mismatched_files(const std::string& dir, const json& manifest) {
  std::vector<std::string> bad;
  for (const auto& f : manifest.at("files")) {
    const auto path = f.at("path").get<std::string>();
    const auto actual = describe_file(path, db::test::read_file(dir + "/" + path));
    if (actual.bytes != f.at("bytes").get<uint64_t>() || actual.xxh64 != f.at("xxh64") ||
        actual.xxh3_64 != f.at("xxh3_64"))
      bad.push_back(path);
  }
  return bad;
}

// Symbols of the manifest that are not a NUL-terminated string of their code object (an ELF
// symbol table holds each name that way, in cubin and hsaco alike).
std::vector<std::string> missing_symbols(const std::string& dir, const json& manifest) {
  std::vector<std::string> missing;
  for (const auto& c : manifest.at("code_objects")) {
    const auto code = db::test::read_file(dir + "/" + c.at("file").get<std::string>());
    for (const auto& s : c.at("symbols")) {
      const auto symbol = s.get<std::string>();
      if (code.find(std::string(symbol) + '\0') == std::string::npos) missing.push_back(symbol);
    }
  }
  return missing;
}

// A translation unit that checks with static_assert that select() sends `key` (aggregate
// initialisers of Key) on `arch` to a kernel of code object `file`.
std::string selection_check(const std::string& arch, const std::string& key, const std::string& file) {
  return fmt::format(R"(#include "mla_decode_package.hpp"
namespace d = ktune_dispatch::mla_decode;
constexpr d::Selection s = d::select("{}", d::Key{{{}}});
static_assert(s.kind == d::Selection::Kind::kernel, "select() found no kernel");
static_assert(std::string_view(d::kCodeObjects[d::code_object_index(*s.kernel)].file) == "{}", "wrong code object");
static_assert(d::kPackageArch == "{}", "wrong arch");
)",
                     arch, key, file, arch);
}

class PackageTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!compiler_ready(GetParam(), why)) GTEST_SKIP() << "no compiler for " << GetParam() << ": " << why;
  }
  std::string device() const {
    if (GetParam() == "gfx942") return "AMD Instinct MI300X";
    if (GetParam() == "gfx950") return "AMD Instinct MI355X";
    return GetParam().starts_with("gfx") ? "AMD Instinct MI250X" : "NVIDIA H200";
  }
};

TEST_P(PackageTest, ManifestHashesMatchTheFilesAndSymbolsAreInTheCodeObjects) {
  const auto arch = GetParam();
  MlaDb m;
  fill_two_programs(m, arch, device());
  TempDir out;
  const auto p = write_package(m.db(), mla_family(), jit::BackendCompiler(backend::for_arch(arch), arch),
                               request(arch, out.path()));
  const auto ext = arch.starts_with("gfx") ? ".hsaco" : ".cubin";

  const auto manifest = read_manifest(out.path());
  EXPECT_EQ(manifest.at("arch"), arch);
  EXPECT_EQ(manifest.at("family"), "mla_decode");
  EXPECT_EQ(manifest.at("template_hash"), current_hash());
  EXPECT_EQ(manifest.at("compiler_version"), backend::for_arch(arch).compiler_version(arch));
  EXPECT_EQ(manifest.at("ktune_version"), KTUNE_VERSION);
  ASSERT_EQ(manifest.at("code_objects").size(), 2u);  // three kernels, two programs
  ASSERT_EQ(manifest.at("files").size(), 4u);         // two code objects, two headers
  for (const auto& c : manifest.at("code_objects")) {
    EXPECT_THAT(c.at("file").get<std::string>(), ::testing::EndsWith(ext));
    EXPECT_EQ(c.at("symbols").size(), 2u);  // main kernel and combine
    EXPECT_THAT(c.at("symbols")[0].get<std::string>(), ::testing::StartsWith("_Z"));
  }
  EXPECT_THAT(mismatched_files(out.path(), manifest), ::testing::IsEmpty());
  EXPECT_THAT(missing_symbols(out.path(), manifest), ::testing::IsEmpty());

  // The checks can fail: one changed byte of a code object, one changed symbol.
  const auto first = manifest.at("code_objects")[0].at("file").get<std::string>();
  auto code = db::test::read_file(out.file(first));
  code[code.size() / 2] ^= 1;
  db::test::write_file(out.file(first), code);
  EXPECT_THAT(mismatched_files(out.path(), manifest), ::testing::ElementsAre(first));
  auto wrong = manifest;
  auto& symbol = wrong.at("code_objects")[1].at("symbols")[0];
  symbol = symbol.get<std::string>() + "x";
  EXPECT_THAT(missing_symbols(out.path(), wrong), ::testing::ElementsAre(symbol.get<std::string>()));
  EXPECT_EQ(p.code_objects.size(), 2u);
}

TEST_P(PackageTest, HeadersCompileAndMapEachKernelToItsCodeObject) {
  const auto arch = GetParam();
  MlaDb m;
  fill_two_programs(m, arch, device());
  TempDir out, cache_dir;
  const jit::CodeCache cache(cache_dir.path());
  const auto p = write_package(m.db(), mla_family(), jit::BackendCompiler(backend::for_arch(arch), arch),
                               request(arch, out.path(), &cache));
  // The kernel of {16, 1, bf16} and of {16, 2, bf16} share a program; {16, 4, bf16} has its own.
  std::string first_file, second_file;
  for (const auto& c : p.code_objects)
    (c.name_expressions[0].find("<16, 16,") != std::string::npos ? first_file : second_file) = c.file;
  ASSERT_FALSE(first_file.empty());
  ASSERT_FALSE(second_file.empty());

  const std::string key_16_1 = "16, 1, 0, d::KvDtype::bf16, 32", key_16_4 = "16, 4, 0, d::KvDtype::bf16, 32";
  auto compile = [&](const std::string& name, const std::string& key, const std::string& file) {
    db::test::write_file(out.file(name), selection_check(arch, key, file));
    return shell(fmt::format("'{}' -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I'{}' '{}'", KTUNE_CXX, out.path(),
                             out.file(name)),
                 out.file(name + ".log"));
  };
  const auto first = compile("first.cpp", key_16_1, first_file);
  EXPECT_EQ(first.status, 0) << first.output;
  const auto second = compile("second.cpp", key_16_4, second_file);
  EXPECT_EQ(second.status, 0) << second.output;
  // The check can fail: the other key's code object.
  const auto wrong = compile("wrong.cpp", key_16_4, first_file);
  EXPECT_NE(wrong.status, 0);
  EXPECT_THAT(wrong.output, HasSubstr("wrong code object"));

  // Deterministic: packaging again gives the same bytes (code from the cache, text rendered anew).
  TempDir again;
  write_package(m.db(), mla_family(), jit::BackendCompiler(backend::for_arch(arch), arch),
                request(arch, again.path(), &cache));
  for (const auto& f : p.files)
    EXPECT_EQ(db::test::read_file(out.file(f.path)), db::test::read_file(again.file(f.path))) << f.path;
  EXPECT_EQ(db::test::read_file(out.file(kManifestFile)), db::test::read_file(again.file(kManifestFile)));
}

// Every file of `dir` (recursively) with its bytes; directories as "<dir>".
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    files[std::filesystem::relative(e.path(), dir).string()] =
        e.is_directory() ? std::string("<dir>") : db::test::read_file(e.path().string());
  return files;
}

std::set<std::string> code_object_files(const json& manifest) {
  std::set<std::string> files;
  for (const auto& c : manifest.at("code_objects")) files.insert(c.at("file").get<std::string>());
  return files;
}

// A package that cannot be written leaves the one already there whole (no file of the new one
// beside it, no temporary file); one that is written removes the code objects of the one it
// replaced that it does not use, and nothing else of the directory.
TEST_P(PackageTest, ReplacingAPackageIsAllOrNothingAndRemovesItsUnusedCodeObjects) {
  using num::KvDtype;
  const auto arch = GetParam();
  MlaDb m;
  fill_two_programs(m, arch, device());
  TempDir root, cache_dir, scratch;
  const jit::CodeCache cache(cache_dir.path());  // the same code for the same program, every time
  const auto out = root.file("pkg");
  const jit::BackendCompiler compiler(backend::for_arch(arch), arch);
  write_package(m.db(), mla_family(), compiler, request(arch, out, &cache));
  const auto earlier = code_object_files(read_manifest(out));
  db::test::write_file(out + "/notes.txt", "the engine's own file\n");

  // A newer run: {16, 4} moves to the first program, which leaves the second unused, and a causal
  // and an fp8 key bring two programs the earlier package lacks.
  const auto run = m.run(arch, device());
  m.ok(run, mla_key(16, 4, false, KvDtype::bf16), mla_config(16, 16, 1, 2), 18.0);
  m.ok(run, mla_key(16, 1, true, KvDtype::bf16), mla_config(16, 16, 1, 2), 11.0);
  m.ok(run, mla_key(16, 1, false, KvDtype::fp8_e4m3fn), mla_config(16, 16, 1, 2), 7.0);
  write_package(m.db(), mla_family(), compiler, request(arch, scratch.path(), &cache));
  const auto next = code_object_files(read_manifest(scratch.path()));
  std::vector<std::string> added, unused;
  std::set_difference(next.begin(), next.end(), earlier.begin(), earlier.end(), std::back_inserter(added));
  std::set_difference(earlier.begin(), earlier.end(), next.begin(), next.end(), std::back_inserter(unused));
  ASSERT_EQ(added.size(), 2u);
  ASSERT_FALSE(unused.empty());

  // The second new code object cannot be written (a directory holds its name): the first, before
  // it, must not appear either.
  std::filesystem::create_directory(out + "/" + added.back());
  const auto before = snapshot(out);
  try {
    write_package(m.db(), mla_family(), compiler, request(arch, out, &cache));
    ADD_FAILURE() << "a package was written over a directory";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(added.back() + " is a directory"));
  }
  EXPECT_EQ(snapshot(out), before) << "the earlier package is as it was";
  std::filesystem::remove(out + "/" + added.back());

  // A manifest naming files outside the package's code objects does not get them removed: nor a
  // name of the other vendor's code objects.
  db::test::write_file(root.file("outside.cubin"), "not ktune's\n");
  const std::string other_vendors = std::string(16, 'b') + (arch.starts_with("gfx") ? ".cubin" : ".hsaco");
  db::test::write_file(out + "/" + other_vendors, "not this arch's code\n");
  auto manifest = read_manifest(out);
  for (const auto& [foreign, entry] :
       {std::pair{"../outside.cubin", json::object()}, std::pair{"notes.txt", json::object()},
        std::pair{other_vendors.c_str(), json::object()}, std::pair{"", json::array({"an entry that is no object"})}}) {
    auto e = entry;
    if (e.is_object()) e["file"] = foreign;
    manifest.at("code_objects").push_back(e);
  }
  db::test::write_file(out + "/" + kManifestFile, manifest.dump(2));
  const auto p = write_package(m.db(), mla_family(), compiler, request(arch, out, &cache));
  EXPECT_EQ(p.removed_code_objects, unused);
  EXPECT_TRUE(p.not_removed.empty());
  for (const auto& f : unused) EXPECT_FALSE(std::filesystem::exists(out + "/" + f)) << f;
  EXPECT_EQ(code_object_files(read_manifest(out)), next);
  EXPECT_THAT(mismatched_files(out, read_manifest(out)), ::testing::IsEmpty());
  EXPECT_EQ(db::test::read_file(out + "/notes.txt"), "the engine's own file\n");
  EXPECT_EQ(db::test::read_file(root.file("outside.cubin")), "not ktune's\n");
  EXPECT_EQ(db::test::read_file(out + "/" + other_vendors), "not this arch's code\n");

  // The manifest of another family's package (or another arch's) names code objects that are not
  // this package's to remove.
  const std::string theirs = std::string(16, 'a') + (arch.starts_with("gfx") ? ".hsaco" : ".cubin");
  db::test::write_file(out + "/" + theirs, "another family's code\n");
  for (const auto& [family, manifest_arch] : {std::pair<std::string, std::string>{"qk_rope_cache", arch},
                                              std::pair<std::string, std::string>{"mla_decode", "sm_80"}}) {
    json entry = json::object(), other = json::object();
    entry["file"] = theirs;
    other["family"] = family;
    other["arch"] = manifest_arch;
    other["code_objects"] = json::array({entry});
    db::test::write_file(out + "/" + kManifestFile, other.dump());
    EXPECT_TRUE(write_package(m.db(), mla_family(), compiler, request(arch, out, &cache)).removed_code_objects.empty());
    EXPECT_TRUE(std::filesystem::exists(out + "/" + theirs)) << family << " " << manifest_arch;
  }
}

// gfx90a with hipRTC, gfx942 and gfx950 with the offline clang (no GPU runs anything).
INSTANTIATE_TEST_SUITE_P(Arches, PackageTest, ::testing::Values("sm_90a", "gfx90a", "gfx942", "gfx950"));

// An arch with declared gaps alone (brought up before any sweep) is packaged like any other, and
// its headers compile into the runtime's table (dispatch/runtime/package_table.cpp.in, configured
// here as cmake/KtuneRuntimePackages.cmake does), which answers every key with its gap.
TEST(PackageGapsOnly, TheRuntimeTableOfAPackageWithoutKernelsCompiles) {
  using num::KvDtype;
  std::string why;
  if (!compiler_ready("gfx942", why)) GTEST_SKIP() << why;
  MlaDb m;
  m.declared_gap("gfx942", mla_key(16, 2, false, KvDtype::fp8_e4m3fn), "none");
  TempDir out;
  const auto p = write_package(m.db(), mla_family(), jit::BackendCompiler(backend::for_arch("gfx942"), "gfx942"),
                               request("gfx942", out.path()));
  EXPECT_TRUE(p.code_objects.empty());

  std::string table = db::test::read_file(std::string(KTUNE_SOURCE_DIR) + "/dispatch/runtime/package_table.cpp.in");
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"@KTUNE_PACKAGE_NAME@", "mla_decode-gfx942"},
                                                        {"@KTUNE_PACKAGE_HEADER@", out.file("mla_decode_package.hpp")},
                                                        {"@KTUNE_FAMILY@", "mla_decode"},
                                                        {"@KTUNE_FAMILY_VARIABLE@", "kMlaDecode"},
                                                        {"@KTUNE_TABLE_FUNCTION@", "test_mla_decode_gfx942"}})
    for (auto at = table.find(name); at != std::string::npos; at = table.find(name))
      table.replace(at, name.size(), value);
  table += R"(
namespace ktune::runtime {
namespace {
constexpr d::Selection gap = d::select(d::kPackageArch, d::Key{16, 2, 0, d::KvDtype::fp8_e4m3fn, 32});
static_assert(gap.kind == d::Selection::Kind::gap && gap.kernel == nullptr, "the declared gap");
static_assert(kChoices.empty() && kObjects.empty());
}  // namespace
}  // namespace ktune::runtime
)";
  db::test::write_file(out.file("table.cpp"), table);
  const auto built = shell(
      fmt::format("'{}' -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I'{}' -I'{}' '{}'", KTUNE_CXX, KTUNE_SOURCE_DIR,
                  std::string(KTUNE_SOURCE_DIR) + "/dispatch/runtime/include", out.file("table.cpp")),
      out.file("table.log"));
  EXPECT_EQ(built.status, 0) << built.output;
}

// The refusals need no compiler: they come before anything is compiled or written.
std::string refusal(MlaDb& m, const PackageRequest& req) {
  try {
    write_package(m.db(), mla_family(), jit::BackendCompiler(backend::for_arch("sm_90a"), "sm_90a"), req);
  } catch (const Error& e) {
    EXPECT_FALSE(std::filesystem::exists(req.out_dir)) << "a refused package wrote " << req.out_dir;
    return e.what();
  }
  return "";
}

TEST(PackageRefusal, StaleTemplateHashIsRefusedLikeCodegen) {
  MlaDb m;
  const auto run = m.run("sm_90a", "NVIDIA H200", "00000000deadbeef");
  m.ok(run, mla_key(16, 1, false, num::KvDtype::bf16), mla_config(16, 16, 1, 0), 10.0);
  TempDir out;
  EXPECT_THAT(refusal(m, request("sm_90a", out.file("pkg"))),
              AllOf(HasSubstr("template hash validator"), HasSubstr("--allow-stale")));
  // The same database with --allow-stale packages (the refusal was the validator's).
  std::string why;
  if (!compiler_ready("sm_90a", why)) GTEST_SKIP() << "no NVRTC to show that --allow-stale packages: " << why;
  auto stale = request("sm_90a", out.file("pkg"));
  stale.table.allow_stale = true;
  const auto p =
      write_package(m.db(), mla_family(), jit::BackendCompiler(backend::for_arch("sm_90a"), "sm_90a"), stale);
  EXPECT_EQ(p.code_objects.size(), 1u);
  EXPECT_EQ(read_manifest(out.file("pkg")).at("tuned_template_hashes"), json::array({"00000000deadbeef"}));
}

TEST(PackageRefusal, MixedDevicesAreRefusedLikeCodegen) {
  MlaDb m;
  const auto h200 = m.run("sm_90a", "NVIDIA H200"), h100 = m.run("sm_90a", "NVIDIA H100");
  m.ok(h200, mla_key(16, 1, false, num::KvDtype::bf16), mla_config(16, 16, 1, 0), 10.0);
  m.ok(h100, mla_key(16, 2, false, num::KvDtype::bf16), mla_config(16, 16, 1, 0), 10.0);
  TempDir out;
  EXPECT_THAT(refusal(m, request("sm_90a", out.file("pkg"))),
              AllOf(HasSubstr("device validator"), HasSubstr("NVIDIA H100"), HasSubstr("--device")));
}

TEST(PackageRefusal, UnknownOrMissingArchErrorsClearly) {
  MlaDb m;
  fill_two_programs(m, "sm_90a", "NVIDIA H200");
  TempDir out;
  EXPECT_THAT(refusal(m, request("gfx1234", out.file("pkg"))),
              AllOf(HasSubstr("unknown target 'gfx1234'"), HasSubstr("sm_90a"), HasSubstr("gfx90a")));
  auto no_arch = request("sm_90a", out.file("pkg"));
  no_arch.table.arch.reset();
  EXPECT_THAT(refusal(m, no_arch), HasSubstr("needs an arch"));
  // Known arch, nothing tuned for it.
  EXPECT_THAT(refusal(m, request("gfx942", out.file("pkg"))), HasSubstr("no results of mla_decode on gfx942"));
  EXPECT_EQ(code_object_extension("sm_90a"), "cubin");
  EXPECT_EQ(code_object_extension("gfx90a"), "hsaco");
}

}  // namespace
}  // namespace ktune::dispatch
