#pragma once
// The runtime behind the C and C++ APIs: selects (KTUNE_DB override first, then the compiled-in
// table), loads code objects once per device (CodeObjectCache) and launches mla_decode as
// tuner/kernels/mla_decode/instance.cpp does (main kernel, combine pass when split), on the
// caller's stream. Every entry point is noexcept and answers with a status.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/runtime/choice.hpp"
#include "dispatch/runtime/code_objects.hpp"
#include "dispatch/runtime/compiled_table.hpp"
#include "dispatch/runtime/gpu_api.hpp"
#include "dispatch/runtime/override_table.hpp"
#include "ktune/runtime.h"

namespace ktune::runtime {

class Engine {
 public:
  struct Setup {
    std::vector<std::unique_ptr<GpuApi>> apis;  // in preference order; may be empty
    std::string no_api_reason;                  // why there is no (other) API
    std::vector<std::string> package_dirs;      // where code object files are looked for
    std::optional<std::string> override_db;     // KTUNE_DB; read at the first call that selects
  };
  explicit Engine(Setup setup);

  ktune_status mla_decode(const ktune_mla_decode_args& args, ktune_result& out) noexcept;
  ktune_status workspace_size(const ktune_mla_decode_args& args, size_t& bytes, ktune_result& out) noexcept;
  // On the current device.
  ktune_status select(const ktune_mla_decode_key& key, ktune_result& out) noexcept;
  // For an arch, without a device.
  ktune_status select_for_arch(std::string_view arch, const ktune_mla_decode_key& key, ktune_result& out) noexcept;
  ktune_status override_status(ktune_result& out) noexcept;
  size_t code_objects_loaded() const { return cache_.loads(); }

 private:
  struct Current {
    const GpuApi* api = nullptr;
    const Device* device = nullptr;
  };
  Current current();  // throws Unavailable when no API has a current device
  const OverrideTable* override_table() noexcept;
  Choice choose(std::string_view arch, const ktune_mla_decode_key& key, bool& from_override) noexcept;
  // The selection and split count of a launch, or a status that stops it.
  struct Plan {
    Current current;
    Choice choice;
    bool from_override = false;
    int splits = 1;
    size_t workspace_bytes = 0;
  };
  ktune_status plan(const ktune_mla_decode_args& args, Plan& plan, ktune_result& out) noexcept;

  Setup setup_;
  CodeObjectCache cache_;
  std::mutex devices_mutex_;
  std::map<const void*, Device> devices_;
  std::once_flag override_once_;
  std::unique_ptr<OverrideTable> override_;
  std::string override_error_;
};

// True when the code object's kernels take the parameters Engine::mla_decode passes: their lowered
// names end with the Itanium mangling of the parameter lists of templates/mla_decode's mla_decode
// and mla_combine (a kernel whose signature changed must not be launched with the old arguments).
bool takes_runtime_arguments(const CodeObjectInfo& object) noexcept;

// Fills `out` (when not null) and returns `status`.
ktune_status report(ktune_result* out, ktune_status status, std::string_view message, const Choice* choice = nullptr,
                    int splits = 0, bool from_override = false) noexcept;

}  // namespace ktune::runtime
