#pragma once
// mla_decode's earlier templates whose machine code is that of the templates of a later hash
// (Family::equivalent_templates): one line per pair,
//   EquivalentTemplates{"<older template hash>", "<template hash of the same code>", "experiments/<slug>"},
// with the size of the array the number of lines. `ktune migrate` then gives the runs under the
// older hash today's; scripts/migrate_results.sh does so for the dumps under results/.
#include <array>

#include "kernels/family.hpp"

namespace ktune::mla {

inline constexpr std::array<EquivalentTemplates, 0> equivalent_templates{};

}  // namespace ktune::mla
