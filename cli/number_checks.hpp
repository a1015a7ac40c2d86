#pragma once
// Checks of numeric options, run on the text before CLI11 converts it: CLI11 reads integers with
// base 0 (so "010" is 8 and "0x10" is 16) and its range checks let a NaN through (every
// comparison with it is false).
#include <string>

#include <CLI/CLI.hpp>

namespace ktune::cli {

// A decimal integer within [low, high] ("010": refused, not 8).
CLI::Validator decimal_within(long long low, long long high);
// A finite number of seconds within [low, high].
CLI::Validator seconds_within(double low, double high);

}  // namespace ktune::cli
