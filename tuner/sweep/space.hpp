#pragma once
// A tuning space: which problem keys and which configs of one family to sweep, and the shape
// to time them on. Written as TOML:
//
//   family = "mla_decode"
//   description = "optional free text"
//   [keys]      # a list (or one value) per key field: integers or enum labels
//   heads = [16, 128]
//   kv_dtype = ["bf16", "fp8_e4m3fn"]
//   [configs]   # a list (or one value) per config field
//   [shape]     # one value per shape field
//
// The configs may instead be several grids, [[configs]] tables each listing every config field:
// the space's configs are their union, so that each math path sweeps the tile shapes that suit
// it without the product of all of them.
//
// Every field of the family must be given, and nothing else; errors name the file, the line,
// the field and the value.
#include <string>
#include <string_view>
#include <vector>

#include "common/params.hpp"
#include "kernels/family.hpp"

namespace ktune::sweep {

struct Space {
  std::string origin;  // the file, or "built-in space 'smoke' of mla_decode"
  const Family* family = nullptr;
  std::vector<std::vector<int64_t>> key_values;  // per key field, in declaration order
  // Per grid, per config field; the space's configs are the union of the grids' combinations.
  std::vector<std::vector<std::vector<int64_t>>> config_grids;
  Params shape;
  // The command-line filters that narrowed its configs, as written ("--where math=wgmma"): a key
  // they leave without a config is the filter's doing, not a gap of the family.
  std::vector<std::string> config_filters;
};

// Parses space text for `family`. Throws Error naming `origin`, the field and the value.
Space parse_space(std::string_view text, std::string_view origin, const Family& family);

// A built-in space of the family ("smoke", "default": tuner/kernels/<family>/spaces/<name>.toml,
// embedded in the binary), or a TOML file. An argument with a '/' or ending in ".toml" is
// always a file.
Space load_space(std::string_view name_or_path, const Family& family);

// Names of the family's built-in spaces, sorted.
std::vector<std::string> builtin_spaces(std::string_view family);

// Every combination of `values` (one list per field of `specs`), the first field varying slowest.
std::vector<Params> combinations(const std::vector<FieldSpec>& specs, const std::vector<std::vector<int64_t>>& values);

// The configs of `space`: each grid's combinations in turn, a config in several grids once.
std::vector<Params> space_configs(const Space& space);

}  // namespace ktune::sweep
