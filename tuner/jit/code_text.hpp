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
// escapes included; a ' between digits is a digit separator), every line trimmed of spaces and
// tabs at both ends, and the lines left empty dropped. A source with a raw string literal or a
// literal spliced across lines is returned whole: their text spans lines, whose trimming (and a
// comment marker inside them) would hide an edit of it, so there even a comment counts. The
// templates have neither. code_text(code_text(s)) == code_text(s).
std::string code_text(std::string_view source);

}  // namespace ktune::jit
