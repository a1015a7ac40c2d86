// libFuzzer target: arbitrary bytes as a space file of mla_decode. parse_space() must either
// return a space that holds what its contract promises or throw ktune::Error; any other
// exception, a crash or a sanitizer report is a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "common/error.hpp"
#include "kernels/family.hpp"
#include "sweep/space.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_space: parse_space() accepted the input but %s\n", what);
  std::abort();
}

// One non-empty list of distinct, valid values per field (format() throws for an invalid one).
void check_lists(const std::vector<ktune::FieldSpec>& specs, const std::vector<std::vector<int64_t>>& lists) {
  if (lists.size() != specs.size()) broken("the number of value lists differs from the number of fields");
  for (size_t f = 0; f < specs.size(); ++f) {
    const auto& values = lists[f];
    if (values.empty()) broken("a value list is empty");
    for (size_t i = 0; i < values.size(); ++i) {
      if (specs[f].parse(specs[f].format(values[i])) != values[i]) broken("a value does not round-trip");
      if (std::count(values.begin(), values.end(), values[i]) != 1) broken("a value is listed twice");
    }
  }
}

// Called on an accepted space only: an Error here is a broken promise, not a rejection.
void check_space(const ktune::sweep::Space& space, const ktune::Family& family) {
  if (space.family != &family) broken("the space names another family");
  try {
    check_lists(family.key_fields(), space.key_values);
    check_lists(family.config_fields(), space.config_values);
    for (const auto& spec : family.shape_fields()) spec.format(space.shape.at(spec.name));
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "fuzz_space: %s\n", e.what());
    broken("holds a value its field rejects");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ktune::Family& family = ktune::family("mla_decode");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<ktune::sweep::Space> space;
  try {
    space = ktune::sweep::parse_space(text, "fuzz.toml", family);
  } catch (const ktune::Error&) {
    return 0;  // the documented rejection
  }
  check_space(*space, family);
  return 0;
}
