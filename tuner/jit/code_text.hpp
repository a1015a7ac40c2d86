#pragma once
// What of a template's source the compiler acts on, for the template hash: results are stale
// when this changes, and only then (a comment or a blank line cannot change a binary, so a review
// that rewords one leaves every tuned result current; the code-object cache still keys on the
// exact source).
#include <string>
#include <string_view>

namespace ktune::jit {

// `source` without its comments (each // and /* */ comment a single space, as the compiler takes
// it, a // comment running on over line splices; string and character literals kept whole,
// escapes included), every line trimmed of spaces and tabs at both ends, and the lines left empty
// dropped. code_text(code_text(s)) == code_text(s). Raw string literals are not recognised, nor
// literals spliced across lines (the templates have neither).
std::string code_text(std::string_view source);

}  // namespace ktune::jit
