#include "kernels/template_lineage.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "jit/templates.hpp"

namespace ktune {

std::vector<AdoptableHash> adoptable_template_hashes(std::string_view today, std::string_view today_source,
                                                     std::span<const EquivalentTemplates> pairs) {
  std::vector<AdoptableHash> out;
  const auto known = [&](std::string_view h) {
    return h == today || std::any_of(out.begin(), out.end(), [&](const AdoptableHash& a) { return a.from == h; });
  };
  if (today_source != today) out.push_back({std::string(today_source), {}});
  // Until no pair adds a hash: each round follows every chain one pair further.
  for (bool added = true; added;) {
    added = false;
    for (const auto& p : pairs) {
      if (known(p.from) || !known(p.to)) continue;
      std::vector<std::string> evidence{std::string(p.evidence)};
      if (p.to != today) {
        const auto& next =
            *std::find_if(out.begin(), out.end(), [&](const AdoptableHash& a) { return a.from == p.to; });
        evidence.insert(evidence.end(), next.evidence.begin(), next.evidence.end());
      }
      out.push_back({std::string(p.from), std::move(evidence)});
      added = true;
    }
  }
  return out;
}

std::vector<AdoptableHash> adoptable_template_hashes(const Family& family) {
  const std::string_view file = family.template_file();
  return adoptable_template_hashes(jit::template_hash(file), jit::source_hash(file), family.equivalent_templates());
}

std::string describe(const AdoptableHash& h) {
  if (h.evidence.empty()) return "these very templates, under the whole-source hash of older ktune builds";
  return fmt::format("the same machine code as today's templates ({})", fmt::join(h.evidence, ", "));
}

}  // namespace ktune
