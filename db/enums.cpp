// Text forms of Status, GapReason and RunKind: the values the CHECK constraints of schema.sql accept.
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "db/database.hpp"

namespace ktune::db {
namespace {

constexpr std::array<std::string_view, 6> status_names = {"ok",    "verify_failed", "compile_error",
                                                          "fault", "timeout",       "infeasible"};
constexpr std::array<std::string_view, 6> gap_reason_names = {"no_config", "compile_error", "verify_failed",
                                                              "fault",     "timeout",       "declared"};
constexpr std::array<std::string_view, 2> run_kind_names = {"sweep", "compile"};

template <size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, size_t i) noexcept {
  return i < N ? names[i] : std::string_view("invalid");
}

template <class Enum, size_t N>
Enum from_name(const std::array<std::string_view, N>& names, std::string_view s, std::string_view what) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<Enum>(i);
  throw Error(fmt::format("unknown {} '{}' (one of {})", what, s, fmt::join(names, ", ")));
}

}  // namespace

std::string_view to_string(Status s) noexcept { return name_of(status_names, static_cast<size_t>(s)); }
Status status_from_string(std::string_view s) { return from_name<Status>(status_names, s, "status"); }

std::string_view to_string(GapReason r) noexcept { return name_of(gap_reason_names, static_cast<size_t>(r)); }
GapReason gap_reason_from_string(std::string_view s) { return from_name<GapReason>(gap_reason_names, s, "gap reason"); }

std::string_view to_string(RunKind k) noexcept { return name_of(run_kind_names, static_cast<size_t>(k)); }
RunKind run_kind_from_string(std::string_view s) { return from_name<RunKind>(run_kind_names, s, "run kind"); }

}  // namespace ktune::db
