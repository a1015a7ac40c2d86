#include "sweep/device_list.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::sweep {

std::vector<int> parse_device_list(std::string_view text, int count) {
  std::vector<int> out;
  if (text == "all") {
    for (int d = 0; d < count; ++d) out.push_back(d);
    if (out.empty()) throw Error("--devices all: there is no device");
    return out;
  }
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(',', start), text.size());
    const auto item = text.substr(start, end - start);
    int d = -1;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size())
      throw Error(fmt::format("--devices '{}': expected 'all' or device ordinals like 0,2,3", text));
    if (d < 0 || d >= count)
      throw Error(fmt::format("--devices '{}': there is no device {} (devices 0..{})", text, d, count - 1));
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw Error(fmt::format("--devices '{}': device {} is named twice", text, d));
    out.push_back(d);
    start = end + 1;
  }
  return out;
}

void refuse_mixed_models(const std::vector<DeviceModel>& devices, bool allow_mixed) {
  if (allow_mixed) return;
  for (const auto& d : devices) {
    const auto& first = devices.front();
    if (d.name != first.name || d.arch != first.arch)
      throw Error(fmt::format("devices {} ({}, {}) and {} ({}, {}) are different models: a dispatch table takes the "
                              "results of one; sweep each model on its own (--devices), or pass --mixed-devices to "
                              "sweep them together, each into its own run",
                              first.ordinal, first.name, first.arch, d.ordinal, d.name, d.arch));
  }
}

}  // namespace ktune::sweep
