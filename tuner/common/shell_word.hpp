#pragma once
// A path as one word of a POSIX shell command line, for the commands that error messages tell
// the user to run.
#include <string>
#include <string_view>

namespace ktune {

// `path` as it is where nothing in it is special to the shell, else in single quotes (each '
// written as '\'').
std::string shell_word(std::string_view path);

}  // namespace ktune
