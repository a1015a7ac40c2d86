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
#include "kernels/mla_decode/problem.hpp"
#include "sweep/space.hpp"

namespace {

// mla_decode's fields (kernels/mla_decode/problem.cpp) in a family that only describes them: the
// parser reads nothing else of a family, and the fuzzer links the parser without the kernels.
class MlaDecodeFields final : public ktune::Family {
 public:
  std::string_view name() const noexcept override { return "mla_decode"; }
  std::string_view summary() const noexcept override { return "mla_decode's fields, for the space parser"; }
  const std::vector<ktune::FieldSpec>& key_fields() const noexcept override { return ktune::mla::key_fields(); }
  const std::vector<ktune::FieldSpec>& config_fields() const noexcept override { return ktune::mla::config_fields(); }
  const std::vector<ktune::FieldSpec>& shape_fields() const noexcept override { return ktune::mla::shape_fields(); }
  std::string_view template_file() const noexcept override { return "mla_decode/mla_decode.hip"; }
  std::vector<std::string> name_expressions(const ktune::Params&, const ktune::Params&) const override {
    unreachable("name_expressions");
  }
  std::optional<std::string> infeasible(const ktune::Params&, const ktune::Params&,
                                        const ktune::TargetLimits&) const override {
    unreachable("infeasible");
  }
  ktune::LaunchInfo launch_info(const ktune::Params&, const ktune::Params&) const override {
    unreachable("launch_info");
  }
  std::vector<ktune::Params> verify_shapes(const ktune::Params&) const override { unreachable("verify_shapes"); }
  std::unique_ptr<ktune::Instance> instantiate(ktune::backend::Context&, const ktune::Params&, const ktune::Params&,
                                               uint64_t, bool) const override {
    unreachable("instantiate");
  }

 private:
  [[noreturn]] static void unreachable(const char* what) {
    std::fprintf(stderr, "fuzz_space: parse_space() called Family::%s\n", what);
    std::abort();
  }
};

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
    if (space.config_grids.empty()) broken("a space without a config grid");
    for (const auto& grid : space.config_grids) check_lists(family.config_fields(), grid);
    for (const auto& spec : family.shape_fields()) spec.format(space.shape.at(spec.name));
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "fuzz_space: %s\n", e.what());
    broken("holds a value its field rejects");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const MlaDecodeFields family;
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
