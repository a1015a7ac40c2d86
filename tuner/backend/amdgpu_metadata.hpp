#pragma once
// The kernel descriptions an AMDGPU code object carries: the NT_AMDGPU_METADATA note of the ELF
// (code object v3 and later: a MessagePack map with "amdhsa.kernels"), which the compiler writes
// and the HIP runtime reads to launch. hipRTC's objects and those of clang's offline HIP compile
// have the same note, so ktune reads a kernel's registers, spills, scratch and LDS from it without a
// device.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ktune::backend {

// One entry of "amdhsa.kernels"; a field the note does not have is none.
struct AmdgpuKernelMetadata {
  std::string name;    // ".name": the kernel's (mangled) name
  std::string symbol;  // ".symbol": its kernel descriptor, name + ".kd"
  std::optional<int64_t> vgpr_count, agpr_count, sgpr_count;
  std::optional<int64_t> vgpr_spill_count, sgpr_spill_count;
  std::optional<int64_t> private_segment_fixed_size;  // scratch bytes per lane
  std::optional<int64_t> group_segment_fixed_size;    // static LDS bytes per workgroup
  std::optional<int64_t> wavefront_size;
  std::optional<int64_t> max_flat_workgroup_size;
};

struct AmdgpuMetadata {
  std::string target;  // "amdhsa.target", e.g. "amdgcn-amd-amdhsa--gfx90a"
  std::vector<AmdgpuKernelMetadata> kernels;
  // The kernel named `name` (".name"), or nullptr.
  const AmdgpuKernelMetadata* find(std::string_view name) const noexcept;
};

// Reads the metadata note of the AMDGPU ELF code object `elf`. Throws Error saying what is wrong:
// not a 64-bit little-endian ELF, not AMDGPU, no metadata note, a note that is not MessagePack or
// has no kernel list, a truncated file.
AmdgpuMetadata read_amdgpu_metadata(std::span<const char> elf);

}  // namespace ktune::backend
