// The identity-rope precondition survives the whole path to a serving engine: a database whose
// full-rope keys are won by variants that do not clamp positions (faster, and right for them) and
// whose identity keys are won by clamping ones is turned into a dispatch header, and the header's
// own select(), evaluated by the C++ compiler over every head count, dtype pair, pair layout and
// token count, never answers an identity-rope query with a non-clamping kernel — while it does
// hand the full-rope neighbours theirs. Negative controls: a database holding a non-clamping
// identity winner is refused by the table's precondition validator, and with the family's
// precondition dropped the same database yields a header whose select() breaks the rule (the
// program reports the query), so the check is what it claims to be.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "db_test_support.hpp"
#include "dispatch/codegen.hpp"
#include "dispatch/table.hpp"
#include "jit/templates.hpp"
#include "kernels/qk_rope_cache/family.hpp"
#include "kernels/qk_rope_cache/problem.hpp"

namespace ktune::rope {
namespace {

using testing::HasSubstr;

constexpr const char* kArch = "sm_90a";
constexpr const char* kHash = "00000000feedf00d";

const Family& family() { return qk_rope_cache_family(); }

Params key(int heads, RopeMode rope, int tokens, num::KvDtype q = num::KvDtype::fp8_e4m3fn) {
  return to_params(Key{heads, num::KvDtype::fp8_e4m3fn, q, rope, true, tokens});
}
const Params kClamping = to_params(Config{Layout::token, 8, 1, 128, true, true});
const Params kClampingWide = to_params(Config{Layout::token_head, 8, 4, 256, true, true});
const Params kTrusting = to_params(Config{Layout::token, 8, 1, 128, false, true});
const Params kTrustingWide = to_params(Config{Layout::token_head, 4, 4, 256, false, true});

class RopeDb {
 public:
  RopeDb() : db_(db::Database::open(dir_.file("rope.db"), /*create=*/true)) {
    auto run = db::test::sample_run("qk_rope_cache", "NVIDIA H200", kArch, kHash);
    run.command = "ktune sweep --kernel qk_rope_cache";
    run_ = db_->begin_run(run);
  }
  void win(const Params& k, const Params& c, double median_us) {
    auto m = db::test::timed(run_, k, c, median_us);
    m.shape = to_params(Shape{0, 64, 163840, 0});
    db_->record(m);
  }
  db::Database& db() { return *db_; }
  const db::test::TempDir& dir() const { return dir_; }

 private:
  db::test::TempDir dir_;
  std::unique_ptr<db::Database> db_;
  int64_t run_ = 0;
};

// Full-rope neighbours of every identity key are won by variants that trust the positions; the
// identity keys by clamping ones (the only kind a sweep measures for them).
void fill(RopeDb& db) {
  for (int heads : {16, 128})
    for (int tokens : {1, 64, 4096}) {
      db.win(key(heads, RopeMode::full, tokens), kTrusting, 2.0);
      db.win(key(heads, RopeMode::full, tokens), kClamping, 2.5);  // slower: not the winner
      db.win(key(heads, RopeMode::full, tokens, num::KvDtype::bf16), kTrustingWide, 3.0);
    }
  db.win(key(16, RopeMode::identity, 64), kClamping, 2.1);
  db.win(key(128, RopeMode::identity, 4096), kClampingWide, 40.0);
}

dispatch::Request request() {
  dispatch::Request r;
  r.template_hash = kHash;
  return r;
}

struct Shell {
  int status = -1;
  std::string output;
};

Shell shell(const std::string& command, const std::string& log) {
  const int raw = std::system(fmt::format("{} >'{}' 2>&1", command, log).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128, db::test::read_file(log)};
}

// Compiles `source` against the header into a program and runs it; the result is the compiler's
// when it fails, else the program's.
Shell compile_and_run(const db::test::TempDir& dir, const std::string& header, const std::string& source) {
  db::test::write_file(dir.file("qk_rope_cache_dispatch.hpp"), header);
  db::test::write_file(dir.file("use.cpp"), source);
  const Shell compiled = shell(fmt::format("'{}' -std=c++17 -O1 -Wall -Wextra -Werror -I'{}' '{}' -o '{}'", KTUNE_CXX,
                                           dir.path(), dir.file("use.cpp"), dir.file("use")),
                               dir.file("compile.log"));
  if (compiled.status != 0) return compiled;
  return shell("'" + dir.file("use") + "'", dir.file("run.log"));
}

// Every identity query of the key space (heads beyond both ends of 1..128, every dtype pair and
// pair layout, token counts on, between and beyond the buckets) gets no kernel or a clamping one;
// and the rule is not vacuous: identity queries do get kernels, full-rope neighbours get trusting
// ones (checked by the compiler).
constexpr const char* kRoutingChecks = R"src(#include "qk_rope_cache_dispatch.hpp"
#include <cstdint>
#include <cstdio>
namespace r = ktune_dispatch::qk_rope_cache;
using Kind = r::Selection::Kind;

constexpr r::Key query(std::int64_t heads, int kv, int q, r::Rope rope, std::int64_t neox, std::int64_t tokens) {
  return r::Key{heads, static_cast<decltype(r::Key::kv_dtype)>(kv), static_cast<decltype(r::Key::q_dtype)>(q), rope,
                neox, tokens};
}

static_assert(r::select("sm_90a", query(12, 1, 1, r::Rope::identity, 1, 50)).kind == Kind::fallback,
              "12 heads are covered by the 16-head identity winner");
static_assert(r::select("sm_90a", query(16, 1, 1, r::Rope::full, 1, 64)).kernel->config.clamp == 0,
              "the full-rope neighbour is won by a trusting variant");
static_assert(r::select("sm_90a", query(12, 1, 0, r::Rope::full, 1, 50)).kernel->config.clamp == 0,
              "and so are the covered full-rope queries");

int main() {
  const std::int64_t token_counts[] = {-1, 0, 1, 2, 63, 64, 65, 1000, 4095, 4096, 4097, 65536, 65537};
  long kernels = 0;
  for (std::int64_t heads = -1; heads <= 130; ++heads)
    for (int kv = 0; kv < 3; ++kv)
      for (int q = 0; q < 3; ++q)
        for (std::int64_t neox = 0; neox < 2; ++neox)
          for (std::int64_t tokens : token_counts) {
            const r::Selection s = r::select("sm_90a", query(heads, kv, q, r::Rope::identity, neox, tokens));
            if (s.kernel == nullptr) continue;
            if (s.kernel->config.clamp != 1) {
              std::printf("identity query heads=%lld kv=%d q=%d is_neox=%lld tokens=%lld was routed to a kernel "
                          "that does not clamp (%s)\n",
                          static_cast<long long>(heads), kv, q, static_cast<long long>(neox),
                          static_cast<long long>(tokens), s.kernel->name_expressions[0]);
              return 1;
            }
            ++kernels;
          }
  std::printf("%ld identity queries served, all by clamping kernels\n", kernels);
  return kernels > 100 ? 0 : 2;
}
)src";

TEST(QkRopeDispatch, IdentityRopeIsNeverRoutedToANonClampingVariant) {
  RopeDb db;
  fill(db);
  const auto table = dispatch::build_table(db.db(), family(), request());
  const std::string header = dispatch::render_header(table);
  const Shell r = compile_and_run(db.dir(), header, kRoutingChecks);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1280 identity queries served, all by clamping kernels"));
  EXPECT_THAT(header, HasSubstr("clamp")) << "the precondition is data of every kernel row";
}

// Forwards to qk_rope_cache but drops the identity-rope constraint: what a family that forgot
// the precondition would let through.
class WithoutIdentityConstraint final : public Family {
 public:
  std::string_view name() const noexcept override { return family().name(); }
  std::string_view summary() const noexcept override { return family().summary(); }
  const std::vector<FieldSpec>& key_fields() const noexcept override { return family().key_fields(); }
  const std::vector<FieldSpec>& config_fields() const noexcept override { return family().config_fields(); }
  const std::vector<FieldSpec>& shape_fields() const noexcept override { return family().shape_fields(); }
  std::string_view template_file() const noexcept override { return family().template_file(); }
  std::string_view bucket_field() const noexcept override { return family().bucket_field(); }
  bool covers_larger(std::string_view f) const noexcept override { return family().covers_larger(f); }
  std::vector<std::string> name_expressions(const Params& k, const Params& c) const override {
    return family().name_expressions(k, c);
  }
  std::optional<std::string> infeasible(const Params& k, const Params& c, const TargetLimits& t) const override {
    Key as_full = key_of(k);
    as_full.rope = RopeMode::full;
    return family().infeasible(to_params(as_full), c, t);
  }
  std::optional<std::string> precondition_violated(const Params&, const Params&) const override { return std::nullopt; }
  LaunchInfo launch_info(const Params& k, const Params& c) const override { return family().launch_info(k, c); }
  std::vector<Params> verify_shapes(const Params& k) const override { return family().verify_shapes(k); }
  std::unique_ptr<Instance> instantiate(backend::Context& ctx, const Params& k, const Params& s, uint64_t seed,
                                        bool with_reference) const override {
    return family().instantiate(ctx, k, s, seed, with_reference);
  }
};

TEST(QkRopeDispatch, ANonClampingIdentityWinnerIsRefusedAndWouldOtherwiseBeRouted) {
  RopeDb db;
  fill(db);
  db.win(key(16, RopeMode::identity, 64), kTrusting, 1.5);  // faster than the clamping winner
  try {
    dispatch::build_table(db.db(), family(), request());
    ADD_FAILURE() << "the table accepted a non-clamping winner of an identity-rope key";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("precondition validator"));
    EXPECT_THAT(e.what(), HasSubstr("rope=identity"));
    EXPECT_THAT(e.what(), HasSubstr("identity rope reads a 1-row table: only clamping variants serve it"));
  }
  // Without the precondition the row goes through, and the routing check catches it.
  const WithoutIdentityConstraint forgetful;
  const auto table = dispatch::build_table(db.db(), forgetful, request());
  const Shell r = compile_and_run(db.dir(), dispatch::render_header(table), kRoutingChecks);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("was routed to a kernel that does not clamp (ktune::qk_rope_cache<0, 8, 1, 128, 0,"));
}

TEST(QkRopeDispatch, TokensAreTheBucketFieldOfTheGeneratedLookup) {
  RopeDb db;
  fill(db);
  const auto table = dispatch::build_table(db.db(), family(), request());
  EXPECT_EQ(table.bucket_field, "tokens");
  EXPECT_EQ(table.covering_fields, std::vector<std::string>{"heads"});
  const std::string header = dispatch::render_header(table);
  EXPECT_THAT(header, HasSubstr("the smallest tuned tokens >= key.tokens"));
  const Shell r = compile_and_run(db.dir(), header, R"src(#include "qk_rope_cache_dispatch.hpp"
namespace r = ktune_dispatch::qk_rope_cache;
constexpr r::Key query(long tokens) {
  return r::Key{16, decltype(r::Key::kv_dtype)::fp8_e4m3fn, decltype(r::Key::q_dtype)::fp8_e4m3fn, r::Rope::full, 1, tokens};
}
static_assert(r::select("sm_90a", query(65)).fallback_key.tokens == 4096, "65 tokens: the 4096 bucket");
static_assert(r::select("sm_90a", query(9000)).fallback_key.tokens == 4096, "beyond: the largest bucket");
static_assert(r::select("sm_90a", query(2)).fallback_key.tokens == 64, "2 tokens: the 64 bucket");
int main() { return 0; }
)src");
  EXPECT_EQ(r.status, 0) << r.output;
}

}  // namespace
}  // namespace ktune::rope
