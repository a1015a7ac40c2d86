#pragma once
// toml++ 3.3 (Debian 12) reaches __builtin_unreachable() (undefined behaviour) on some non-ASCII
// characters outside strings and comments, and on one after a backslash in a multi-line basic
// string (upstream marzer/tomlplusplus#190, #295, fixed by PR #305). The first is never valid
// TOML; the second is valid but has no use in a space file. Both are refused before toml++ runs.
// A bare value (one that starts with anything but a quote, '[' or '{', e.g. `x = +!"é`) runs to
// the next blank, ',', ']', '}' or '#' for toml++, quotes included: the guard reads it the same way.
#include <string_view>

namespace ktune::sweep {

// Throws Error naming origin:line:column for a non-ASCII byte outside a string or comment, or
// after a backslash (and any blanks) in a multi-line basic string.
void require_toml_safe_for_parser(std::string_view text, std::string_view origin);

}  // namespace ktune::sweep
