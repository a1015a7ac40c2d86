#pragma once
// toml++ 3.3 (Debian 12) tests characters for whitespace with a table that reaches
// __builtin_unreachable() (undefined behaviour) for most non-ASCII code points (upstream
// marzer/tomlplusplus#190 and marzer/tomlplusplus#295, fixed by marzer/tomlplusplus#305). It does
// so wherever it looks for the end of a token: outside strings and comments, where a non-ASCII
// character is never valid TOML, but where that is depends on how toml++ reads invalid text (a
// bare value runs on through quotes and brackets; a date's time takes the character after its
// first digit whatever it is: inputs that tests/fuzz/fuzz_space found, see its README). Modelling
// that reading proved fragile, so the guard lets toml++ itself find where the non-ASCII
// characters stand:
//  1. it parses the text with each non-ASCII character replaced by '@', which is valid TOML exactly
//     where a non-ASCII character is (in strings and comments): toml++ meets no non-ASCII character
//     and refuses every text whose non-ASCII characters it would have read outside a string or
//     comment, naming the character and its line and column;
//  2. inside a multi-line basic string toml++ tests the character after a backslash and blanks for
//     whitespace, so a non-ASCII character after a backslash and blanks is refused anywhere
//     (valid TOML only in a literal string or a comment, of no use in a space file);
//  3. only then the text itself is parsed.
#include <string_view>

#include <toml++/toml.h>

namespace ktune::sweep {

// The parsed text; throws Error "origin:line:column: not valid TOML: ..." for invalid TOML and for
// the non-ASCII characters above.
toml::table parse_toml(std::string_view text, std::string_view origin);

}  // namespace ktune::sweep
