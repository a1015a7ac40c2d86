// AMD targets' published facts. Each row names the part its figures are of and where they are
// published; the register files and allocation granules are the ISA's (the CDNA ISA references and
// LLVM's AMDGPU backend documentation, AMDGPUUsage). One device of gfx90a is one GCD of an MI250X.
#include "backend/target_facts.hpp"

#include <array>

namespace ktune::backend {
namespace {

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * KiB;

// CDNA 2 to 4: 4 SIMDs per CU; per lane of a SIMD 512 VGPRs (the VGPR file of 512 KiB per CU:
// 4 SIMDs x 64 lanes x 512 x 4 bytes), architectural and accumulation registers from one file,
// allocated in granules of 8; 800 SGPRs per SIMD in granules of 16; at most 8 waves per SIMD.
constexpr TargetFacts cdna(std::string_view arch, std::string_view product, int compute_units, int64_t lds_per_cu,
                           int64_t l2, int64_t last_level_cache, double peak_hbm_gbps, std::string_view sources) {
  return {arch, product,          compute_units, 64,     lds_per_cu, 4, 512, 8, 800, 16, 8,
          l2,   last_level_cache, peak_hbm_gbps, sources};
}

constexpr std::array<TargetFacts, 3> kFacts = {
    cdna("gfx90a", "AMD Instinct MI250X, one GCD", 110, 64 * KiB, 8 * MiB, 8 * MiB, 1638.4,
         "AMD GPU specifications (ROCm documentation, "
         "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html): 220 CUs and 16 MiB of L2 over two GCDs; AMD "
         "Instinct MI250X data sheet "
         "(https://www.amd.com/content/dam/amd/en/documents/instinct-business-docs/product-briefs/"
         "amd-instinct-mi250x-data-sheet.pdf): 3.2768 TB/s peak memory bandwidth over two GCDs"),
    cdna("gfx942", "AMD Instinct MI300X", 304, 64 * KiB, 32 * MiB, 256 * MiB, 5300,
         "AMD GPU specifications (ROCm documentation, https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html): "
         "304 CUs, wave64, 64 KiB LDS, 256 MiB L3 (Infinity Cache), 32 MiB L2; AMD Instinct MI300X data sheet "
         "(https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
         "amd-instinct-mi300x-data-sheet.pdf): 5.3 TB/s peak memory bandwidth; AMD CDNA 3 architecture white paper "
         "(https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/"
         "amd-cdna-3-white-paper.pdf)"),
    cdna("gfx950", "AMD Instinct MI355X", 256, 160 * KiB, 32 * MiB, 256 * MiB, 8000,
         "AMD GPU specifications (ROCm documentation, https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html): "
         "256 CUs, wave64, 160 KiB LDS, 256 MiB L3 (Infinity Cache), 32 MiB L2; AMD Instinct MI355X data sheet "
         "(https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/product-briefs/"
         "amd-instinct-mi355x-gpu-brochure.pdf): 8 TB/s peak memory bandwidth; AMD CDNA 4 architecture white paper "
         "(https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/"
         "amd-cdna-4-architecture-whitepaper.pdf)"),
};

}  // namespace

const TargetFacts* target_facts(std::string_view arch) noexcept {
  for (const auto& f : kFacts)
    if (f.arch == arch) return &f;
  return nullptr;
}

}  // namespace ktune::backend
