#include "device_choice.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace ktune::cli {

backend::Backend& device_backend(std::string_view wanted, std::string_view purpose, std::string_view instead) {
  std::vector<std::string> why;
  for (backend::Backend* b : backend::all()) {
    if (!wanted.empty() && b->name() != wanted) continue;
    if (b->available() && b->device_count() > 0) return *b;
    why.push_back(fmt::format("{}: {}", b->name(), b->available() ? "no devices" : b->unavailable_reason()));
  }
  if (!wanted.empty() && why.empty()) backend::by_name(wanted);  // throws, naming the built backends
  throw Unavailable(fmt::format("no GPU to {} ({}). {}", purpose, fmt::join(why, "; "), instead));
}

backend::DeviceInfo checked_device(const backend::Backend& b, int ordinal) {
  if (ordinal < 0 || ordinal >= b.device_count())
    throw Error(fmt::format("--device {}: {} has devices 0..{}", ordinal, b.name(), b.device_count() - 1));
  backend::DeviceInfo info = b.device_info(ordinal);
  if (!b.compiler_available(info.arch))
    throw Unavailable(fmt::format("cannot compile for {}: {}", info.arch, b.compiler_unavailable_reason(info.arch)));
  return info;
}

}  // namespace ktune::cli
