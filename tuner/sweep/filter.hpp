#pragma once
// Command-line filters that narrow a space: `--where field=v1,v2` (and the family-specific
// shorthands like `--heads 16`, which are the same filter on one field). A filter keeps only the
// listed values of a key or config field; it never adds values the space does not have.
#include <string>
#include <string_view>
#include <vector>

#include "sweep/space.hpp"

namespace ktune::sweep {

struct FieldFilter {
  std::string field;
  std::vector<std::string> values;  // labels or integers, parsed by the field's FieldSpec
  std::string option;               // how the user wrote it, for messages ("--heads", "--where")
};

// "field=v1,v2,..." -> FieldFilter. Throws Error on malformed text.
FieldFilter parse_where(std::string_view text);
// "v1,v2" given to a shorthand option for `field`.
FieldFilter field_filter(std::string field, std::string_view values, std::string option);

// Narrows `space` in place. Throws Error when a filter names no key or config field of the
// family, a value does not parse, or no value of a field is left.
void apply_filters(Space& space, const std::vector<FieldFilter>& filters);

}  // namespace ktune::sweep
