#pragma once
// Shared pieces of the package and runtime tests: an mla_decode database with real configs
// (filled through db::Database), made for the current templates unless told otherwise.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <memory>
#include <string>

#include "db/database.hpp"
#include "db_test_support.hpp"
#include "dispatch/package.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/problem.hpp"

namespace ktune::package_test {

using TempDir = db::test::TempDir;

inline const Family& mla_family() { return family("mla_decode"); }

inline nlohmann::json read_manifest(const std::string& dir) {
  return nlohmann::json::parse(db::test::read_file(dir + "/" + std::string(dispatch::kManifestFile)));
}
inline std::string current_hash() { return jit::template_hash(mla_family().template_file()); }

inline Params mla_key(int heads, int block_len, bool causal, num::KvDtype kv, int batch = 32) {
  return mla::to_params(mla::Key{heads, block_len, causal, kv, batch});
}
inline Params mla_config(int rows, int keys, int stages, int split) {
  return mla::to_params(mla::Config{rows, keys, 256, stages, split, 0});
}

struct ShellResult {
  int status = -1;
  std::string output;
};

// Runs `command` through the shell, its output in `log`.
inline ShellResult shell(const std::string& command, const std::string& log) {
  const int raw = std::system(fmt::format("{} >'{}' 2>&1", command, log).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128, db::test::read_file(log)};
}

class MlaDb {
 public:
  MlaDb() : db_(db::Database::open(dir_.file("mla.db"), /*create=*/true)) {}
  db::Database& db() { return *db_; }
  const std::string& path() const { return db_->path(); }

  int64_t run(const std::string& arch, std::string device, std::string hash = current_hash()) {
    auto r = db::test::sample_run("mla_decode", std::move(device), arch, std::move(hash));
    r.backend = arch.starts_with("gfx") ? "hip" : "cuda";
    r.compiler_version = arch.starts_with("gfx") ? "hiprtc 5.2.21153" : "nvrtc 13.0";
    r.started_at = fmt::format("2026-11-01T10:{:02}:00Z", ++runs_);
    return db_->begin_run(r);
  }
  void ok(int64_t run, const Params& key, const Params& config, double median_us) {
    db_->record(db::test::timed(run, key, config, median_us));
  }
  void declared_gap(const std::string& arch, const Params& key, std::string fallback = "none") {
    db::Gap g = db::test::declared_gap(arch, key, std::move(fallback));
    g.detail = "abort() in the CSV lookup";
    db_->add_gap(g);
  }

 private:
  TempDir dir_;
  std::unique_ptr<db::Database> db_;
  int runs_ = 0;
};

// Three kernels in two programs and a declared gap with a fallback, on `arch`; configs that fit
// both sm_90a and gfx90a (64 KiB of LDS: rows=16, one stage).
inline void fill_two_programs(MlaDb& m, const std::string& arch, const std::string& device) {
  using num::KvDtype;
  const auto run = m.run(arch, device);
  m.ok(run, mla_key(16, 1, false, KvDtype::bf16), mla_config(16, 16, 1, 2), 10.0);
  m.ok(run, mla_key(16, 1, false, KvDtype::bf16), mla_config(16, 32, 1, 0), 12.0);  // slower
  m.ok(run, mla_key(16, 4, false, KvDtype::bf16), mla_config(16, 32, 1, 0), 20.0);
  m.ok(run, mla_key(16, 2, false, KvDtype::bf16), mla_config(16, 16, 1, 0), 15.0);  // shares the first program
  m.declared_gap(arch, mla_key(16, 2, false, KvDtype::fp8_e4m3fn), mla_key(16, 2, false, KvDtype::bf16).canonical());
}

}  // namespace ktune::package_test
