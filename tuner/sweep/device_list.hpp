#pragma once
// Which devices a sweep over several runs on (`ktune sweep --devices`), and the refusal of
// devices of different models: their results would be one sweep's, but a dispatch table takes
// one device's (docs/database.md, validators), so a mix is a mistake unless asked for.
#include <string>
#include <string_view>
#include <vector>

namespace ktune::sweep {

// "all": 0 .. count-1; "0,2,3": those ordinals, in that order. Throws Error for an ordinal that
// is no device (of `count`), one given twice, or text that is no list.
std::vector<int> parse_device_list(std::string_view text, int count);

struct DeviceModel {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string arch;  // "sm_90a"
};

// Throws Error naming the first two devices of different models (name or arch) unless
// `allow_mixed`.
void refuse_mixed_models(const std::vector<DeviceModel>& devices, bool allow_mixed);

}  // namespace ktune::sweep
