// Reading an AMDGPU code object's metadata note, on ELF files built here byte by byte (a real
// hipRTC object is read by tests/compile/kernel_resources_compile_test.cpp): the fields are found,
// absent ones are none, and every malformed file is refused with what is wrong. Then the
// occupancy arithmetic and the pruning rule on the targets' facts.
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "amdgpu_elf.hpp"
#include "backend/amdgpu_metadata.hpp"
#include "backend/target_facts.hpp"
#include "common/error.hpp"
#include "kernels/kernel_resources.hpp"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using test_support::elf_with_note;
using test_support::msgpack;
using test_support::sample_kernel;

std::string error_of(const std::vector<char>& elf) {
  try {
    backend::read_amdgpu_metadata(elf);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(AmdgpuMetadata, ReadsTheKernelsOfTheNote) {
  auto lean = sample_kernel("_Z4leanv");
  lean.erase(".agpr_count");  // gfx90a's objects without MFMA may leave it out
  const auto elf = elf_with_note(msgpack({{"amdhsa.version", {1, 1}},
                                          {"amdhsa.target", "amdgcn-amd-amdhsa--gfx942"},
                                          {"amdhsa.kernels", {sample_kernel("_Z4mainv"), lean}}}));
  const auto md = backend::read_amdgpu_metadata(elf);
  EXPECT_EQ(md.target, "amdgcn-amd-amdhsa--gfx942");
  ASSERT_EQ(md.kernels.size(), 2u);
  const auto* k = md.find("_Z4mainv");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->symbol, "_Z4mainv.kd");
  EXPECT_EQ(k->vgpr_count, 96);
  EXPECT_EQ(k->agpr_count, 16);
  EXPECT_EQ(k->sgpr_count, 34);
  EXPECT_EQ(k->private_segment_fixed_size, 0);
  EXPECT_EQ(k->group_segment_fixed_size, 1024);
  EXPECT_EQ(k->wavefront_size, 64);
  EXPECT_EQ(k->max_flat_workgroup_size, 256);
  EXPECT_FALSE(md.find("_Z4leanv")->agpr_count.has_value());
  EXPECT_EQ(md.find("_Z5otherv"), nullptr);
}

TEST(AmdgpuMetadata, MalformedObjectsAreRefusedSayingWhy) {
  const auto good = msgpack({{"amdhsa.kernels", {sample_kernel("_Z1kv")}}});
  EXPECT_THAT(error_of({'n', 'o', 't'}), HasSubstr("not an ELF file"));
  auto elf32 = elf_with_note(good);
  elf32[4] = 1;
  EXPECT_THAT(error_of(elf32), HasSubstr("not a 64-bit little-endian ELF"));
  EXPECT_THAT(error_of(elf_with_note(good, 32, "AMDGPU", 62)), HasSubstr("is not AMDGPU"));
  EXPECT_THAT(error_of(elf_with_note(good, 33)), HasSubstr("no AMDGPU metadata note"));
  EXPECT_THAT(error_of(elf_with_note(good, 32, "AMD")), HasSubstr("no AMDGPU metadata note"));
  EXPECT_THAT(error_of(elf_with_note({0xc1, 0xc1})), HasSubstr("not MessagePack"));
  EXPECT_THAT(error_of(elf_with_note(msgpack({{"amdhsa.version", {1, 1}}}))), HasSubstr("no amdhsa.kernels list"));
  auto truncated = elf_with_note(good);
  truncated.resize(truncated.size() - 8);
  EXPECT_THAT(error_of(truncated), HasSubstr("truncated"));
  EXPECT_EQ(error_of(elf_with_note(good)), "");
}

TEST(KernelResources, WavesPerSimdFollowTheRegisterFilesAndTheLds) {
  const backend::TargetFacts& mi300 = *backend::target_facts("gfx942");
  EXPECT_EQ(waves_per_simd(mi300, 64, 32, 0, 256), 8) << "the most a SIMD holds";
  EXPECT_EQ(waves_per_simd(mi300, 128, 32, 0, 256), 4);
  EXPECT_EQ(waves_per_simd(mi300, 129, 32, 0, 256), 3) << "VGPRs are allocated in granules of 8";
  EXPECT_EQ(waves_per_simd(mi300, 512, 32, 0, 256), 1);
  EXPECT_EQ(waves_per_simd(mi300, 64, 102, 0, 256), 7) << "102 SGPRs take 112 of 800";
  EXPECT_EQ(waves_per_simd(mi300, 64, 32, 32 * 1024, 256), 2) << "two workgroups of 4 waves in 64 KiB";
  EXPECT_EQ(waves_per_simd(mi300, 64, 32, 64 * 1024 + 1, 256), 0) << "one workgroup does not fit the CU's LDS";
  EXPECT_EQ(waves_per_simd(*backend::target_facts("gfx950"), 64, 32, 64 * 1024 + 1, 256), 2)
      << "gfx950's 160 KiB hold two";
}

TEST(KernelResources, SpillsAndNoWaveArePrunedUnknownIsNot) {
  KernelUse k{"ktune::k<1>", "_Z1k", {}};
  EXPECT_EQ(resource_infeasible({k}), std::nullopt) << "nothing known, nothing pruned";
  k.resources.scratch_bytes = 0;
  k.resources.waves_per_simd = 1;
  EXPECT_EQ(resource_infeasible({k}), std::nullopt);
  auto spills = k;
  spills.resources.scratch_bytes = 48;
  EXPECT_THAT(resource_infeasible({k, spills}).value_or(""), HasSubstr("spills: ktune::k<1> uses 48 bytes of scratch"));
  auto no_wave = k;
  no_wave.resources.waves_per_simd = 0;
  EXPECT_THAT(resource_infeasible({no_wave}).value_or(""), HasSubstr("fits not one wave per SIMD"));
}

TEST(KernelResources, NoTargetFactsMeansNothingIsRead) {
  backend::CompileResult code;
  code.code = {'n', 'o', 't'};
  code.lowered_names = {"_Z1kv"};
  const auto r = read_resources(target_limits("sm_90a"), {"k<1>"}, code, {});
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.unread, "") << "an NVIDIA object is not read at all, so nothing failed";
  EXPECT_FALSE(r.kernels[0].resources.vgprs.has_value());
  const auto amd = read_resources(target_limits("gfx942"), {"k<1>"}, code, {});
  EXPECT_THAT(amd.unread, HasSubstr("not an ELF file"));
}

TEST(KernelResources, TheMainKernelCountsItsDynamicLds) {
  backend::CompileResult code;
  const auto elf =
      elf_with_note(msgpack({{"amdhsa.kernels", {sample_kernel("_Z4mainv"), sample_kernel("_Z7combinev")}}}));
  code.code = elf;
  code.lowered_names = {"_Z4mainv", "_Z7combinev"};
  const auto r = read_resources(target_limits("gfx942"), {"main<1>", "combine<1>"}, code, {256, 40 * 1024});
  ASSERT_EQ(r.unread, "");
  EXPECT_EQ(r.kernels[0].resources.lds_bytes, 1024 + 40 * 1024);
  EXPECT_EQ(r.kernels[0].resources.waves_per_simd, 1) << "one workgroup of 41 KiB per CU";
  EXPECT_EQ(r.kernels[1].resources.lds_bytes, 1024);
  EXPECT_EQ(r.kernels[1].resources.waves_per_simd, 5) << "96 VGPRs: 512 / 96 rounded to 8";
  code.lowered_names = {"_Z4mainv", "_Z5otherv"};
  EXPECT_THAT(read_resources(target_limits("gfx942"), {"main<1>", "other<1>"}, code, {}).unread,
              HasSubstr("describes no kernel _Z5otherv"));
}

}  // namespace
}  // namespace ktune
