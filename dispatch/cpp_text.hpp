#pragma once
// Turning database text into C++ source text that always compiles: identifiers, string
// literals and comment lines. Database text is arbitrary (compiler logs, user declarations), so
// nothing from it reaches the generated header unescaped.
#include <cstddef>
#include <string>
#include <string_view>

namespace ktune::dispatch {

// `name` made a valid, non-reserved C++ identifier: other characters become '_', a leading digit
// or underscore gets a 'v' in front, a keyword gets a trailing '_' ("auto" -> "auto_").
std::string identifier(std::string_view name);

// "kv_dtype" -> "KvDtype": the type name of an enumerated field.
std::string type_name(std::string_view field);

// A C++ string literal (quotes included) with exactly the bytes of `text`: printable ASCII as is
// (with \\, \" and \? escaped), everything else as a three-digit octal escape.
std::string string_literal(std::string_view text);

// `text` made safe inside a /* */ comment: one line, printable ASCII only (others become '?'),
// and neither "*/" nor "/*".
std::string comment_text(std::string_view text);

// The first line of `text`, at most `max_bytes` long, cut on a UTF-8 character boundary, with
// "..." where something was cut.
std::string excerpt(std::string_view text, std::size_t max_bytes);

}  // namespace ktune::dispatch
