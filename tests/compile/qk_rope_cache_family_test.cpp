// The qk_rope_cache family's compile-time decisions, on the CPU: its fields, the kernels each
// config launches, which configs are pruned and why (the identity-rope precondition first), the
// dispatch hints it gives, and its spaces. Each check sits next to a case that makes it fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "kernels/family.hpp"
#include "kernels/qk_rope_cache/family.hpp"
#include "kernels/qk_rope_cache/problem.hpp"
#include "sweep/space.hpp"

namespace ktune::rope {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

const Family& family() { return qk_rope_cache_family(); }

constexpr Key kIdentity{16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fn, RopeMode::identity, true, 64};
constexpr Key kFull{16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fn, RopeMode::full, true, 64};
constexpr Config kClamping{Layout::token, 8, 1, 128, true, true};
constexpr Config kTrusting{Layout::token, 8, 1, 128, false, true};

std::optional<std::string> why_not(const Key& k, const Config& c, const char* arch = "sm_90a") {
  return family().infeasible(to_params(k), to_params(c), target_limits(arch));
}

TEST(QkRopeCacheFamily, IsRegisteredUnderItsName) {
  EXPECT_EQ(&ktune::family("qk_rope_cache"), &family());
  EXPECT_THROW(ktune::family("qk_rope"), Error);
}

TEST(QkRopeCacheFamily, FieldsRoundTripThroughParams) {
  const Key key{96, num::KvDtype::fp8_e4m3fnuz, num::KvDtype::bf16, RopeMode::identity, false, 256};
  const Params p = to_params(key);
  EXPECT_EQ(p.canonical(), "heads=96,kv_dtype=2,q_dtype=0,rope=1,is_neox=0,tokens=256");
  EXPECT_EQ(key_of(p).rope, RopeMode::identity);
  EXPECT_EQ(key_of(p).kv_dtype, num::KvDtype::fp8_e4m3fnuz);
  EXPECT_EQ(to_params(config_of(to_params(kClamping))), to_params(kClamping));
  EXPECT_THROW(
      key_of(Params{{"heads", 0}, {"kv_dtype", 0}, {"q_dtype", 0}, {"rope", 0}, {"is_neox", 0}, {"tokens", 1}}), Error);
  EXPECT_THROW(config_of(p), Error) << "a key is not a config";
}

TEST(QkRopeCacheFamily, IdentityRopeNeedsAClampingVariant) {
  EXPECT_EQ(why_not(kIdentity, kTrusting), "identity rope reads a 1-row table: only clamping variants serve it");
  EXPECT_EQ(why_not(kIdentity, kClamping), std::nullopt);
  EXPECT_EQ(why_not(kFull, kTrusting), std::nullopt) << "a full rope's positions lie in its table";
  Config unfused = kTrusting;
  unfused.fused = false;
  EXPECT_THAT(why_not(kIdentity, unfused).value_or(""), HasSubstr("only clamping variants"))
      << "the unfused baseline reads the table too";
}

TEST(QkRopeCacheFamily, ThePreconditionIsTheCorrectnessPartOfTheConstraints) {
  EXPECT_EQ(family().precondition_violated(to_params(kIdentity), to_params(kTrusting)),
            "identity rope reads a 1-row table: only clamping variants serve it");
  EXPECT_EQ(family().precondition_violated(to_params(kIdentity), to_params(kClamping)), std::nullopt);
  EXPECT_EQ(family().precondition_violated(to_params(kFull), to_params(kTrusting)), std::nullopt);
  // A speed rule (most threads idle) prunes, but breaks no precondition.
  const Config idle{Layout::token_head, 8, 1, 256, true, true};
  EXPECT_NE(why_not(kIdentity, idle), std::nullopt);
  EXPECT_EQ(family().precondition_violated(to_params(kIdentity), to_params(idle)), std::nullopt);
}

TEST(QkRopeCacheFamily, NamesTheFusedKernelOrTheUnfusedSequence) {
  EXPECT_THAT(family().name_expressions(to_params(kFull), to_params(kClamping)),
              ElementsAre("ktune::qk_rope_cache<0, 8, 1, 128, 1, 1, 1>"));
  Config unfused = kClamping;
  unfused.fused = false;
  EXPECT_THAT(family().name_expressions(to_params(kFull), to_params(unfused)),
              ElementsAre("ktune::unfused_rope<8, 128, 1>", "ktune::unfused_cache<8, 128, 1>",
                          "ktune::unfused_concat<8, 128>", "ktune::unfused_quantise<8, 128, 1>"));
  Key bf16_q = kFull;
  bf16_q.q_dtype = num::KvDtype::bf16;
  EXPECT_EQ(family().name_expressions(to_params(bf16_q), to_params(unfused)).size(), 3u)
      << "a bf16 q_out is the concatenation: no quantise kernel";
}

TEST(QkRopeCacheFamily, PrunesWhatCannotRunOrWouldIdleAndSaysWhy) {
  auto with = [](Config c, auto change) {
    change(c);
    return c;
  };
  EXPECT_THAT(why_not(kFull, with(kClamping, [](Config& c) { c.vec = 3; })).value_or(""), HasSubstr("vec=3"));
  EXPECT_THAT(why_not(kFull, with(kClamping, [](Config& c) { c.tokens_per_cta = 3; })).value_or(""),
              HasSubstr("tokens_per_cta=3"));
  EXPECT_THAT(why_not(kFull, with(kClamping, [](Config& c) { c.threads = 96; })).value_or(""), HasSubstr("threads=96"));
  EXPECT_THAT(
      why_not(kFull, with(kClamping, [](Config& c) { c.fused = false, c.layout = Layout::token_head; })).value_or(""),
      HasSubstr("unfused baseline"));
  // token_head with 8-element vectors: 72 chunks per row; 256 threads would leave most idle.
  const Config token_head{Layout::token_head, 8, 1, 256, true, true};
  EXPECT_THAT(why_not(kFull, token_head).value_or(""), HasSubstr("72 work items per CTA"));
  EXPECT_EQ(why_not(kFull, with(token_head, [](Config& c) { c.threads = 128; })), std::nullopt);
  EXPECT_EQ(why_not(kFull, with(token_head, [](Config& c) { c.tokens_per_cta = 4; })), std::nullopt);
  // One head: the token layout has 2 x 72 items at vec 8.
  Key one_head = kFull;
  one_head.heads = 1;
  EXPECT_THAT(why_not(one_head, with(kClamping, [](Config& c) { c.threads = 512; })).value_or(""),
              HasSubstr("144 work items"));
  // gfx90a's wave is 64 wide: 64 threads are fine there and everywhere.
  EXPECT_EQ(why_not(kFull, with(token_head, [](Config& c) { c.threads = 64; }), "gfx90a"), std::nullopt);
}

TEST(QkRopeCacheFamily, DispatchHints) {
  EXPECT_EQ(family().bucket_field(), "tokens");
  EXPECT_TRUE(family().covers_larger("heads"));
  EXPECT_FALSE(family().covers_larger("rope")) << "a rope mode never stands in for another";
  EXPECT_FALSE(family().covers_larger("tokens"));
  EXPECT_EQ(family().launch_info(to_params(kFull), to_params(kClamping)).threads_per_block, 128);
}

TEST(QkRopeCacheFamily, VerifyShapesCoverPagesOfOneAndPaddedTokens) {
  const auto shapes = family().verify_shapes(to_params(kIdentity));
  ASSERT_EQ(shapes.size(), 3u);
  bool page_of_one = false, padded = false;
  for (const Params& s : shapes) {
    page_of_one = page_of_one || shape_of(s).page_size == 1;
    padded = padded || shape_of(s).padded_every > 0;
  }
  EXPECT_TRUE(page_of_one);
  EXPECT_TRUE(padded);
}

// In both built-in spaces, on both compile targets: every key has a feasible fused config and a
// feasible unfused one (so a sweep measures the gain of fusion), and no identity key has a
// feasible config that does not clamp.
TEST(QkRopeCacheFamily, SpacesMeasureFusedAgainstUnfusedAndServeIdentityOnlyByClamping) {
  for (const char* space_name : {"smoke", "default"})
    for (const char* arch : {"gfx90a", "sm_90a"}) {
      const sweep::Space space = sweep::load_space(space_name, family());
      size_t identity_keys = 0;
      for (const Params& key : sweep::combinations(family().key_fields(), space.key_values)) {
        bool fused = false, unfused = false;
        for (const Params& config : sweep::space_configs(space)) {
          if (family().infeasible(key, config, target_limits(arch))) continue;
          const Config c = config_of(config);
          (c.fused ? fused : unfused) = true;
          if (key_of(key).rope == RopeMode::identity) {
            ASSERT_TRUE(c.clamp) << space_name << " " << arch << ": " << key.canonical() << " / " << config.canonical();
          }
        }
        EXPECT_TRUE(fused && unfused) << space_name << " " << arch << ": " << key.canonical();
        identity_keys += key_of(key).rope == RopeMode::identity;
      }
      EXPECT_GT(identity_keys, 0u) << space_name;
    }
}

}  // namespace
}  // namespace ktune::rope
