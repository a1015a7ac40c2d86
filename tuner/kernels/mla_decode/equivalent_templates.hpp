#pragma once
// mla_decode's earlier templates whose machine code is that of the templates of a later hash
// (Family::equivalent_templates): one line per pair,
//   EquivalentTemplates{"<older template hash>", "<template hash of the same code>", "experiments/<slug>"},
// each proven by scripts/code_objects_diff.py over the default space for every arch ktune builds. `ktune migrate` then
// gives the runs under the older hash today's; scripts/migrate_results.sh does so for the dumps under results/.
#include <array>

#include "kernels/family.hpp"

namespace ktune::mla {

inline constexpr std::array equivalent_templates{
    // The matrix-core kernel's variant named in the shared geometry (MmaGeometry::variant).
    EquivalentTemplates{"a9fc882d3b6cef5f", "8d646d357fda1824", "experiments/2026-12-07-mla-decode-variant-split"},
    // The matrix-core kernel cut into phase headers (templates/mla_decode/mma/).
    EquivalentTemplates{"8d646d357fda1824", "2c8b854f32820aef", "experiments/2026-12-07-mla-decode-phase-headers"},
    // math = "mfma_native" (gfx942, gfx950) beside the other paths: no other instance's code changed.
    EquivalentTemplates{"2c8b854f32820aef", "46b3b7b5070b9a89", "experiments/2026-12-07-mla-decode-mfma-native"},
};

}  // namespace ktune::mla
