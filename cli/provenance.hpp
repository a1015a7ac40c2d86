#pragma once
// What a run records about where it ran: the command line and the host.
#include <string>

namespace ktune::cli {

// The command line as started (arguments separated by spaces).
std::string command_line();
std::string host_name();

}  // namespace ktune::cli
