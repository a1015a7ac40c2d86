// The extern "C" entry points over one process-wide Engine, made at the first call: the vendor
// APIs that load, the package directories and KTUNE_DB.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "dispatch/runtime/compiled_table.hpp"
#include "dispatch/runtime/engine.hpp"
#include "ktune/runtime.h"

namespace ktune::runtime {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// $KTUNE_PACKAGE_DIR, the package installed next to this library (<prefix>/lib/.. ->
// <prefix>/share/ktune/<family>-<arch>), the build tree's package.
std::vector<std::string> package_dirs() {
  std::vector<std::string> dirs;
  if (auto dir = env("KTUNE_PACKAGE_DIR")) dirs.push_back(*dir);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ktune_runtime_info), &info) != 0 && info.dli_fname != nullptr) {
    const auto& p = compiled_package();
    dirs.push_back((std::filesystem::path(info.dli_fname).parent_path().parent_path() / "share" / "ktune" /
                    fmt::format("{}-{}", p.family, p.arch))
                       .string());
  }
  dirs.push_back(KTUNE_RUNTIME_BUILD_PACKAGE_DIR);
  return dirs;
}

Engine& engine() {
  static Engine e = [] {
    Engine::Setup s;
    s.apis = vendor_apis(s.no_api_reason);
    s.package_dirs = package_dirs();
    s.override_db = env("KTUNE_DB");
    return Engine(std::move(s));
  }();
  return e;
}

// Anything escaping (allocation failure while setting up) becomes a status.
template <class F>
ktune_status guarded(ktune_result* out, F f) noexcept {
  try {
    ktune_result local{};
    const auto status = f(out ? *out : local);
    return status;
  } catch (const std::exception& e) {
    return report(out, KTUNE_LAUNCH_FAILED, e.what());
  }
}

}  // namespace
}  // namespace ktune::runtime

using ktune::runtime::engine;
using ktune::runtime::guarded;
using ktune::runtime::report;

extern "C" {

ktune_status ktune_mla_decode(const ktune_mla_decode_args* args, ktune_result* out) {
  if (args == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "args is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().mla_decode(*args, r); });
}

ktune_status ktune_mla_decode_workspace_size(const ktune_mla_decode_args* args, size_t* bytes, ktune_result* out) {
  if (args == nullptr || bytes == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "args or bytes is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().workspace_size(*args, *bytes, r); });
}

ktune_status ktune_mla_decode_select(const ktune_mla_decode_key* key, ktune_result* out) {
  if (key == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "key is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().select(*key, r); });
}

ktune_status ktune_mla_decode_select_for_arch(const char* arch, const ktune_mla_decode_key* key, ktune_result* out) {
  if (arch == nullptr || key == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "arch or key is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().select_for_arch(arch, *key, r); });
}

ktune_status ktune_runtime_override_status(ktune_result* out) {
  return guarded(out, [&](ktune_result& r) { return engine().override_status(r); });
}

const char* ktune_runtime_info(void) {
  static const std::string info = [] {
    const auto& p = ktune::runtime::compiled_package();
    return fmt::format("ktune {}, {} package for {} ({}, template hash {})", KTUNE_VERSION, p.family, p.arch,
                       p.compiler, p.template_hash);
  }();
  return info.c_str();
}

const char* ktune_status_name(ktune_status status) {
  switch (status) {
    case KTUNE_OK: return "ok";
    case KTUNE_OK_FALLBACK: return "ok_fallback";
    case KTUNE_GAP: return "gap";
    case KTUNE_UNSUPPORTED: return "unsupported";
    case KTUNE_NO_DEVICE: return "no_device";
    case KTUNE_NO_CODE_OBJECT: return "no_code_object";
    case KTUNE_INVALID_ARGUMENT: return "invalid_argument";
    case KTUNE_LAUNCH_FAILED: return "launch_failed";
  }
  return "(not a status)";
}

}  // extern "C"
