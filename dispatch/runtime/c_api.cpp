// The extern "C" entry points over one process-wide Engine, made at the first call: the vendor
// APIs that load, the package directories, KTUNE_DB and KTUNE_JIT.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// Where the packages' directories (<family>-<arch>) are: $KTUNE_PACKAGE_DIR, the packages
// installed next to this library (<prefix>/lib/.. -> <prefix>/share/ktune), the build tree's.
std::vector<std::string> package_roots() {
  std::vector<std::string> roots;
  if (auto dir = env("KTUNE_PACKAGE_DIR")) roots.push_back(*dir);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ktune_runtime_info), &info) != 0 && info.dli_fname != nullptr)
    roots.push_back((std::filesystem::path(info.dli_fname).parent_path().parent_path() / "share" / "ktune").string());
  roots.push_back(KTUNE_RUNTIME_BUILD_PACKAGE_ROOT);
  return roots;
}

Engine& engine() {
  static Engine e = [] {
    Engine::Setup s;
    s.apis = vendor_apis(s.no_api_reason);
    s.package_roots = package_roots();
    s.override_db = env("KTUNE_DB");
    if (env("KTUNE_JIT").value_or("1") != "0") s.jit = backend_compilers();
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
using ktune::runtime::key_values;
using ktune::runtime::kMlaDecode;
using ktune::runtime::kQkRopeCache;
using ktune::runtime::report;

extern "C" {

ktune_status ktune_mla_decode(const ktune_mla_decode_args* args, ktune_result* out) {
  if (args == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "args is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().mla_decode(*args, r); });
}

ktune_status ktune_mla_decode_workspace_size(const ktune_mla_decode_args* args, size_t* bytes, ktune_result* out) {
  if (args == nullptr || bytes == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "args or bytes is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().mla_decode_workspace_size(*args, *bytes, r); });
}

ktune_status ktune_mla_decode_select(const ktune_mla_decode_key* key, ktune_result* out) {
  if (key == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "key is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().select(kMlaDecode, key_values(*key), r); });
}

ktune_status ktune_mla_decode_select_for_arch(const char* arch, const ktune_mla_decode_key* key, ktune_result* out) {
  if (arch == nullptr || key == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "arch or key is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().select_for_arch(kMlaDecode, arch, key_values(*key), r); });
}

ktune_status ktune_qk_rope_cache(const ktune_qk_rope_cache_args* args, ktune_result* out) {
  if (args == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "args is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().qk_rope_cache(*args, r); });
}

ktune_status ktune_qk_rope_cache_workspace_size(const ktune_qk_rope_cache_args* args, size_t* bytes,
                                                ktune_result* out) {
  if (args == nullptr || bytes == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "args or bytes is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().qk_rope_cache_workspace_size(*args, *bytes, r); });
}

ktune_status ktune_qk_rope_cache_select(const ktune_qk_rope_cache_key* key, ktune_result* out) {
  if (key == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "key is NULL");
  return guarded(out, [&](ktune_result& r) { return engine().select(kQkRopeCache, key_values(*key), r); });
}

ktune_status ktune_qk_rope_cache_select_for_arch(const char* arch, const ktune_qk_rope_cache_key* key,
                                                 ktune_result* out) {
  if (arch == nullptr || key == nullptr) return report(out, KTUNE_INVALID_ARGUMENT, "arch or key is NULL");
  return guarded(out,
                 [&](ktune_result& r) { return engine().select_for_arch(kQkRopeCache, arch, key_values(*key), r); });
}

ktune_status ktune_runtime_override_status(ktune_result* out) {
  return guarded(out, [&](ktune_result& r) { return engine().override_status(r); });
}

const char* ktune_runtime_info(void) {
  try {  // (an initialiser that throws is run again by the next call)
    static const std::string info = [] {
      std::vector<std::string> packages;
      for (const auto* t : ktune::runtime::compiled_tables())
        packages.push_back(fmt::format("{} package for {} ({}, template hash {})", t->family->name, t->arch,
                                       t->compiler, t->template_hash));
      return fmt::format("ktune {}: {}", KTUNE_VERSION, fmt::join(packages, "; "));
    }();
    return info.c_str();
  } catch (const std::exception&) {
    return "ktune " KTUNE_VERSION ": out of memory listing the packages";
  }
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
