#pragma once
// The runtime behind the C and C++ APIs. Written once for every family: select (KTUNE_DB override
// first, then the compiled-in table of the current device's arch), resolve the selected kernel to
// a code object (packaged, or compiled at run time), load it once per device (CodeObjectCache),
// launch on the caller's stream, and report a status. Each family adds its key, arguments and
// launch sequence: Engine::mla_decode (mla_decode_launch.cpp), Engine::qk_rope_cache
// (qk_rope_cache_launch.cpp). Every entry point is noexcept and answers with a status.
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/runtime/choice.hpp"
#include "dispatch/runtime/code_objects.hpp"
#include "dispatch/runtime/compiled_table.hpp"
#include "dispatch/runtime/family.hpp"
#include "dispatch/runtime/gpu_api.hpp"
#include "dispatch/runtime/jit_code_objects.hpp"
#include "dispatch/runtime/message.hpp"
#include "dispatch/runtime/override_table.hpp"
#include "ktune/runtime.h"

namespace ktune::runtime {

// A C key struct (all int64_t fields, in the family's key-field order) as Values.
template <class CKey>
Values key_values(const CKey& key) noexcept {
  static_assert(sizeof(CKey) <= sizeof(Values) && sizeof(CKey) % sizeof(int64_t) == 0);
  Values v{};
  std::memcpy(v.data(), &key, sizeof key);
  return v;
}

class Engine {
 public:
  struct Setup {
    std::vector<std::unique_ptr<GpuApi>> apis;  // in preference order; may be empty
    std::string no_api_reason;                  // why there is no (other) API
    std::vector<std::string> package_roots;     // where code object files are looked for
    std::optional<std::string> override_db;     // KTUNE_DB; read at a family's first call that selects
    std::vector<const CompiledTable*> tables = {compiled_tables().begin(), compiled_tables().end()};
    JitCompilerFor jit;  // compiles unpackaged KTUNE_DB winners; empty: off
  };
  explicit Engine(Setup setup);

  ktune_status mla_decode(const ktune_mla_decode_args& args, ktune_result& out) noexcept;
  ktune_status mla_decode_workspace_size(const ktune_mla_decode_args& args, size_t& bytes, ktune_result& out) noexcept;
  ktune_status qk_rope_cache(const ktune_qk_rope_cache_args& args, ktune_result& out) noexcept;
  ktune_status qk_rope_cache_workspace_size(const ktune_qk_rope_cache_args& args, size_t& bytes,
                                            ktune_result& out) noexcept;

  // On the current device.
  ktune_status select(const RuntimeFamily& family, const Values& key, ktune_result& out) noexcept;
  // For an arch, without a device.
  ktune_status select_for_arch(const RuntimeFamily& family, std::string_view arch, const Values& key,
                               ktune_result& out) noexcept;
  ktune_status override_status(ktune_result& out) noexcept;
  // KTUNE_DB's table first, then the compiled-in table of `arch` (`compiled`: that table, when the
  // caller knows it, or null when there is none; not given: looked up).
  Choice choose(const RuntimeFamily& family, std::string_view arch, const Values& key, bool& from_override) noexcept;
  Choice choose(const RuntimeFamily& family, std::string_view arch, const CompiledTable* compiled, const Values& key,
                bool& from_override) noexcept;

  size_t code_objects_loaded() const { return cache_.loads(); }
  size_t run_time_compiles() const { return jit_ ? jit_->compiles() : 0; }
  size_t remembered_preconditions();  // see precondition_violated
  static constexpr size_t kRememberedPreconditions = 4096;
  std::span<const CompiledTable* const> tables() const noexcept { return setup_.tables; }

 private:
  // A device and its arch's compiled-in table of each family (null: none), found once.
  struct DeviceState {
    Device device;
    std::array<const CompiledTable*, kFamilies> tables{};
  };
  struct Current {
    const GpuApi* api = nullptr;
    const Device* device = nullptr;
    const DeviceState* state = nullptr;
  };
  Current current();  // throws Unavailable when no API has a current device
  const OverrideTable* override_table(const RuntimeFamily& family) noexcept;

  // A launch's selection on the current device, or the status that stops it (reported).
  struct Selected {
    Current current;
    Choice choice;
    bool from_override = false;
  };
  ktune_status select_on_device(const RuntimeFamily& family, const Values& key, Selected& s,
                                ktune_result& out) noexcept;
  // The kernels of the selected kernel on the current device, or the status that stops the launch.
  ktune_status load(const RuntimeFamily& family, const Selected& s, LoadedKernels& kernels, ktune_result& out,
                    int splits = 0) noexcept;
  // Why `kernel` must not serve a call of `key` (Family::precondition_violated of the tuner's
  // family), or an empty string. Pure, so remembered per (kernel, key): building the family's
  // Params costs more than a launch. At most kRememberedPreconditions answers are kept: a key
  // holds run-time sizes (tokens, batch), and a serving process sees many of them; beyond the
  // bound an answer is worked out again at each call, into `scratch`. A remembered answer is
  // viewed, not copied: a call that breaks a precondition is refused without allocating.
  std::string_view precondition_violated(const RuntimeFamily& family, const Values& key, const KernelChoice& kernel,
                                         std::string& scratch);
  // Launches `kernels[i]` with `launches[i]` and `args[i]`, in order.
  ktune_status launch(const Selected& s, const LoadedKernels& kernels, std::span<const Launch> launches, void* stream,
                      void** const* args, ktune_result& out, int splits = 0) noexcept;

  struct Override {
    std::once_flag once;
    std::unique_ptr<OverrideTable> table;
    Message error;  // why KTUNE_DB was refused; a fixed buffer, so that recording it cannot throw out of call_once
  };

  Setup setup_;
  CodeObjectCache cache_;
  std::unique_ptr<JitCodeObjects> jit_;
  std::array<std::string, kFamilies> unknown_arch_;   // per family
  std::array<std::string, kFamilies> template_hash_;  // per family: what KTUNE_DB is checked against
  std::mutex devices_mutex_;
  std::map<const void*, DeviceState> devices_;
  std::array<Override, kFamilies> overrides_;
  std::shared_mutex preconditions_mutex_;
  std::map<std::pair<const KernelChoice*, Values>, std::string> preconditions_;
};

// True for the statuses that launch a kernel.
constexpr bool launched(ktune_status s) noexcept { return s == KTUNE_OK || s == KTUNE_OK_FALLBACK; }

// Fills `out` (when not null) and returns `status`.
ktune_status report(ktune_result* out, ktune_status status, std::string_view message, const Choice* choice = nullptr,
                    int splits = 0, bool from_override = false) noexcept;

}  // namespace ktune::runtime
