#pragma once
// Shared pieces of the dispatch and codegen tests: a small kernel family with the shape of
// mla_decode (an enum key field, a batch bucket, two fields its kernels cover), and a database
// filled through db::Database.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db_test_support.hpp"
#include "dispatch/table.hpp"
#include "kernels/family.hpp"

namespace ktune::dispatch::test {

inline constexpr const char* kFamily = "toy_decode";
inline constexpr const char* kHash = "0123456789abcdef";  // the "current" template hash

class ToyFamily : public Family {
 public:
  std::string_view name() const noexcept override { return kFamily; }
  std::string_view summary() const noexcept override { return "dispatch test family"; }
  const std::vector<FieldSpec>& key_fields() const noexcept override {
    static const std::vector<FieldSpec> f = {
        {"heads", "query heads", 1, 128},
        {"block_len", "query tokens per request", 1, 16},
        {"causal", "causal mask in the block", 0, 1},
        {"kv_dtype", "KV cache element type", 0, 2, {"bf16", "fp8_e4m3fn", "fp8_e4m3fnuz"}},
        {"batch", "batch bucket", 1, 4096},
    };
    return f;
  }
  const std::vector<FieldSpec>& config_fields() const noexcept override {
    // "auto" is a C++ keyword: codegen must rename the enumerator.
    static const std::vector<FieldSpec> f = {
        {"rows", "rows per CTA", 16, 128},
        {"splits", "KV splits", 1, 64},
        {"policy", "split policy", 0, 1, {"auto", "fixed"}},
    };
    return f;
  }
  const std::vector<FieldSpec>& shape_fields() const noexcept override {
    static const std::vector<FieldSpec> f = {{"ctx", "context length", 1, 1 << 20}};
    return f;
  }
  std::string_view template_file() const noexcept override { return "toy_decode/kernel.hpp"; }
  std::vector<std::string> name_expressions(const Params& key, const Params& config) const override {
    return {fmt::format("toy::attn<{}, {}, {}>", config.at("rows"), key.at("causal"), key.at("kv_dtype")),
            fmt::format("toy::combine<{}>", config.at("splits"))};
  }
  std::optional<std::string> infeasible(const Params&, const Params&, const TargetLimits&) const override {
    return std::nullopt;
  }
  LaunchInfo launch_info(const Params&, const Params& config) const override {
    return {static_cast<int>(config.at("rows") * 2), config.at("rows") * 1152};
  }
  bool covers_larger(std::string_view field) const noexcept override {
    return field == "heads" || field == "block_len";
  }
  std::vector<Params> verify_shapes(const Params&) const override { return {}; }
  std::unique_ptr<Instance> instantiate(backend::Context&, const Params&, const Params&, uint64_t,
                                        bool) const override {
    throw Error("the dispatch test family has no kernels");
  }
};

inline const ToyFamily& toy() {
  static const ToyFamily f;
  return f;
}

inline Params key(int64_t heads, int64_t block_len, int64_t causal, int64_t kv_dtype, int64_t batch) {
  return {{"heads", heads}, {"block_len", block_len}, {"causal", causal}, {"kv_dtype", kv_dtype}, {"batch", batch}};
}

inline Params config(int64_t rows, int64_t splits = 1, int64_t policy = 0) {
  return {{"rows", rows}, {"splits", splits}, {"policy", policy}};
}

// A database file in a temporary directory, filled through db::Database.
class ToyDb {
 public:
  ToyDb() : db_(db::Database::open(dir_.file("toy.db"), /*create=*/true)) {}

  db::Database& db() { return *db_; }
  const std::string& path() const { return db_->path(); }

  int64_t run(std::string arch = "sm_90a", std::string device = "NVIDIA H200", std::string hash = kHash,
              std::string compiler = "nvrtc 13.0", std::string started_at = "") {
    auto r = db::test::sample_run(kFamily, std::move(device), std::move(arch), std::move(hash));
    r.compiler_version = std::move(compiler);
    // Distinct, increasing start times unless given: "newest" must not depend on ids alone.
    r.started_at = started_at.empty() ? fmt::format("2025-06-01T10:{:02}:00Z", ++runs_) : std::move(started_at);
    return db_->begin_run(r);
  }
  // A verified, timed candidate; the fastest per key and run is that run's winner.
  void ok(int64_t run, const Params& k, const Params& c, double median_us) {
    db_->record(db::test::timed(run, k, c, median_us));
  }
  void failed(int64_t run, const Params& k, const Params& c, db::Status s, std::string detail) {
    db_->record(db::test::untimed(run, k, c, s, std::move(detail)));
  }
  void measured_gap(int64_t run, const std::string& arch, const Params& k, db::GapReason reason, std::string detail) {
    db::Gap g;
    g.family = kFamily;
    g.arch = arch;
    g.key = k;
    g.reason = reason;
    g.detail = std::move(detail);
    g.source = "measured";
    g.run_id = run;
    g.fallback = "none";
    db_->add_gap(g);
  }
  void declared_gap(const std::string& arch, const Params& k, std::string source, std::string detail,
                    std::string fallback = "none", std::string note = "") {
    db::Gap g = db::test::declared_gap(arch, k, std::move(fallback), std::move(note));
    g.family = kFamily;
    g.source = std::move(source);
    g.detail = std::move(detail);
    db_->add_gap(g);
  }

 private:
  db::test::TempDir dir_;
  std::unique_ptr<db::Database> db_;
  int runs_ = 0;
};

inline Request request(std::string hash = kHash) {
  Request r;
  r.template_hash = std::move(hash);
  return r;
}

// The entry of `key` in the table of `arch` (nullptr when absent).
inline const Entry* find(const Table& t, const std::string& arch, const Params& k) {
  for (const auto& a : t.arches)
    if (a.arch == arch)
      for (const auto& e : a.entries)
        if (e.key == k) return &e;
  return nullptr;
}

}  // namespace ktune::dispatch::test
