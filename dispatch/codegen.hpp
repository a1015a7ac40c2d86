#pragma once
// Renders a dispatch Table as one self-contained C++17 header (standard library only) that a
// serving engine compiles in: namespace ktune_dispatch::<family> with Key, Config, Kernel,
// Selection, a sorted constexpr table per arch and `select(arch, key) noexcept`, whose
// resolution rules are documented in the header itself (and in lookup_source.cpp).
//
// Deterministic: the same table gives byte-identical text. Rows are sorted, and the only
// dates and versions in it are the provenance of the database rows (plus ktune's version). The
// text depends on the request only through what it selects (arch, device, compiler): neither
// the current template hash nor --allow-stale appear, so that a header regenerated from the same
// database after a template change is the same file (scripts/regen_headers.sh relies on it).
#include <string>

#include "dispatch/table.hpp"

namespace ktune::dispatch {

struct RenderedHeader {
  std::string text;
  // The inline namespace its definitions sit in ("table_" and 16 hex digits of a hash of them),
  // for headers generated next to it (the package header).
  std::string inline_namespace;
};

// Throws Error when the table cannot be expressed (a family without key fields, two fields or
// labels that map to one C++ name, a non-finite time).
RenderedHeader render_dispatch_header(const Table& table);
// Its text alone.
std::string render_header(const Table& table);

}  // namespace ktune::dispatch
