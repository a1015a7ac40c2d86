#pragma once
// The older template hashes whose runs measured today's kernels: what `ktune migrate` gives
// today's template hash, and what the stale refusals of codegen, package and the runtime name it
// for. Two kinds: the whole-source hash of today's templates (jit::source_hash, the template hash
// that older ktune builds recorded), and the family's earlier templates of today's machine code
// (Family::equivalent_templates).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/family.hpp"

namespace ktune {

struct AdoptableHash {
  std::string from;
  // The evidence of each pair from `from` to today's hash, in order ("experiments/<slug>"); empty
  // for the whole-source hash of today's templates.
  std::vector<std::string> evidence;
};

// The hashes to adopt for today's template hash `today`, whose whole-source hash is
// `today_source` (none where it equals `today`), given a family's pairs. A pair applies only while
// its `to` is `today` or a hash adopted already: a later template change that alters the machine
// code changes `today` and leaves the old pairs without effect by themselves, and pairs chain
// (a -> b, b -> today adopts a and b). Ordered: the whole-source hash first, then as the chains
// reach them.
std::vector<AdoptableHash> adoptable_template_hashes(std::string_view today, std::string_view today_source,
                                                     std::span<const EquivalentTemplates> pairs);
// The same for `family`'s templates under the current template root and its own pairs.
std::vector<AdoptableHash> adoptable_template_hashes(const Family& family);

// What the runs under `h` measured, for messages that name `h.from` themselves: "these very
// templates, under the whole-source hash of older ktune builds" or "the same machine code as
// today's templates (experiments/...)". Short: the runtime's messages have a bounded length.
std::string describe(const AdoptableHash& h);

}  // namespace ktune
