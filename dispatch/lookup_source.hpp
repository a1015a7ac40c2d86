#pragma once
// The family-independent part of every generated header: the lookup code. It is C++17 text that
// codegen pastes after the family's declarations; it relies on these generated names:
//   Key, Kernel, Selection                       (namespace ktune_dispatch::<family>)
//   detail::Row, detail::ArchTable, detail::kArches, kArchCount
//   detail::field(key, i)                         key fields in lookup order:
//     [0, kFixed) must match, [kFixed, kCovering) may be covered by larger tuned values,
//     [kCovering, kFields) the batch bucket (none or one field)
//   detail::kMin, kMax, kOutOfRange               per lookup field
//   detail::kLookupIndex                          lookup index of each field of Key, in Key order
//   detail::kCoverReason
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::dispatch {

// detail:: helpers (comparison, binary search, batch and covering rules, table self-check).
std::string_view lookup_helpers() noexcept;
// The static_asserts of the table's self-check (detail::well_formed), for arches of these many
// rows, in lookup_helpers' detail:: order: after it.
std::string well_formed_checks(const std::vector<size_t>& rows_per_arch);
// The definition of select(); codegen puts the family's documentation in front of it.
std::string_view select_definition() noexcept;

}  // namespace ktune::dispatch
