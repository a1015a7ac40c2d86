#pragma once
// A qk_rope_cache tuning database for the runtime tests (KTUNE_DB), filled through db::Database
// with the template hash of this build's packages.
#include <memory>
#include <string>

#include "db/database.hpp"
#include "kernels/qk_rope_cache/problem.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::runtime::test {

inline Params rope_key(int heads, int kv, int q, int rope, int neox, int tokens) {
  return rope::to_params(rope::Key{heads, static_cast<num::KvDtype>(kv), static_cast<num::KvDtype>(q),
                                   static_cast<rope::RopeMode>(rope), neox != 0, tokens});
}
// An unfused baseline config (layout token, one token per CTA, as the family sweeps it).
inline Params unfused_config(int vec, int threads, bool clamp) {
  return rope::to_params(rope::Config{rope::Layout::token, vec, 1, threads, clamp, false});
}

class RopeDb {
 public:
  explicit RopeDb(std::string template_hash, std::string arch = "sm_90a")
      : db_(db::Database::open(dir_.file("rope.db"), /*create=*/true)) {
    auto r = db::test::sample_run("qk_rope_cache", arch.starts_with("gfx") ? "AMD MI210" : "NVIDIA H200", arch,
                                  std::move(template_hash));
    r.backend = arch.starts_with("gfx") ? "hip" : "cuda";
    run_ = db_->begin_run(r);
  }
  const std::string& path() const { return db_->path(); }
  void ok(const Params& key, const Params& config, double median_us = 5.0) {
    db_->record(db::test::timed(run_, key, config, median_us));
  }

 private:
  db::test::TempDir dir_;
  std::unique_ptr<db::Database> db_;
  int64_t run_ = 0;
};

}  // namespace ktune::runtime::test
