#include "dispatch/runtime/engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"

namespace ktune::runtime {

ktune_status report(ktune_result* out, ktune_status status, std::string_view message, const Choice* choice, int splits,
                    bool from_override) noexcept {
  if (out == nullptr) return status;
  *out = ktune_result{};
  out->status = status;
  if (choice != nullptr) {
    out->has_fallback_key = choice->has_fallback_key ? 1 : 0;
    std::copy(choice->fallback_key.begin(), choice->fallback_key.end(), out->fallback_key.field);
  }
  out->splits = splits;
  out->from_override = from_override ? 1 : 0;
  out->message[write_fitted(message, out->message, sizeof(out->message) - 1)] = '\0';
  return status;
}

std::string unknown_arch_reason(std::span<const CompiledTable* const> tables, const RuntimeFamily& family) {
  std::vector<std::string_view> arches;
  for (const CompiledTable* t : tables)
    if (t->family == &family) arches.push_back(t->arch);
  if (arches.empty()) return fmt::format("unknown arch: this ktune_runtime has no {} table", family.name);
  std::sort(arches.begin(), arches.end());
  return fmt::format("unknown arch: this ktune_runtime has {} tables for {} only", family.name,
                     fmt::join(arches, ", "));
}

const CodeObject* find_code_object(std::span<const CompiledTable* const> tables, const RuntimeFamily& family,
                                   std::string_view arch, const char* const* name_expressions, size_t count) noexcept {
  const CompiledTable* t = find_table(tables, family, arch);
  if (t == nullptr) return nullptr;
  for (const CodeObject& object : t->code_objects) {
    bool same = object.count == count;
    for (size_t i = 0; same && i < count; ++i)
      same = std::string_view(object.name_expressions[i]) == name_expressions[i];
    if (same) return &object;
  }
  return nullptr;
}

Engine::Engine(Setup setup) : setup_(std::move(setup)), cache_(setup_.package_roots) {
  if (setup_.jit) jit_ = std::make_unique<JitCodeObjects>(setup_.jit);
  for (const RuntimeFamily* f : families()) {
    unknown_arch_[f->index] = unknown_arch_reason(setup_.tables, *f);
    // Every package of a family comes from this build's templates: the first one's hash is theirs.
    for (const CompiledTable* t : setup_.tables)
      if (t->family == f && template_hash_[f->index].empty()) template_hash_[f->index] = t->template_hash;
  }
}

Engine::Current Engine::current() {
  std::string why;
  for (const auto& api : setup_.apis) {
    const void* id = nullptr;
    try {
      id = api->current();
    } catch (const Error& e) {
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", api->name(), e.what());
      continue;
    }
    std::lock_guard lock(devices_mutex_);
    auto it = devices_.find(id);
    if (it == devices_.end()) {
      DeviceState state{api->describe(id), {}};
      for (const RuntimeFamily* f : families())
        state.tables[f->index] = find_table(setup_.tables, *f, state.device.arch);
      it = devices_.emplace(id, std::move(state)).first;
    }
    return {api.get(), &it->second.device, &it->second};
  }
  if (!setup_.no_api_reason.empty()) why += (why.empty() ? "" : "; ") + setup_.no_api_reason;
  throw Unavailable("no GPU to launch on (" + why + ")");
}

const OverrideTable* Engine::override_table(const RuntimeFamily& family) noexcept {
  Override& o = overrides_[family.index];
  std::call_once(o.once, [&] {
    if (!setup_.override_db) return;
    try {
      auto& hash = template_hash_[family.index];
      if (hash.empty()) hash = jit::template_hash(ktune::family(family.name).template_file());
      o.table = OverrideTable::read(*setup_.override_db, family, hash, setup_.tables);
    } catch (const std::exception& e) {
      o.error = Message("KTUNE_DB={} refused for {}, the compiled-in table serves instead: {}", *setup_.override_db,
                        family.name, e.what());
    }
  });
  return o.table.get();
}

Choice Engine::choose(const RuntimeFamily& family, std::string_view arch, const Values& key,
                      bool& from_override) noexcept {
  return choose(family, arch, find_table(setup_.tables, family, arch), key, from_override);
}

Choice Engine::choose(const RuntimeFamily& family, std::string_view arch, const CompiledTable* compiled,
                      const Values& key, bool& from_override) noexcept {
  from_override = false;
  Choice c;
  if (const auto* table = override_table(family))
    if (auto o = table->select(arch, key); o && o->status != KTUNE_UNSUPPORTED) {
      from_override = true;
      c = *o;
    }
  if (!from_override) {
    if (compiled == nullptr) return {KTUNE_UNSUPPORTED, nullptr, false, key, unknown_arch_[family.index].c_str()};
    return compiled->select(key.data());
  }
  if (c.kernel != nullptr && c.kernel->object == nullptr && !jit_) {
    c.status = KTUNE_NO_CODE_OBJECT;
    c.reason = c.kernel->unpackaged;
    c.kernel = nullptr;
  }
  return c;
}

ktune_status Engine::select_for_arch(const RuntimeFamily& family, std::string_view arch, const Values& key,
                                     ktune_result& out) noexcept {
  bool from_override = false;
  const Choice c = choose(family, arch, key, from_override);
  return report(&out, c.status, c.reason, &c, 0, from_override);
}

ktune_status Engine::select(const RuntimeFamily& family, const Values& key, ktune_result& out) noexcept {
  try {
    const auto cur = current();
    return select_for_arch(family, cur.device->arch, key, out);
  } catch (const Unavailable& e) {
    return report(&out, KTUNE_NO_DEVICE, e.what());
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what());
  }
}

ktune_status Engine::override_status(ktune_result& out) noexcept {
  if (!setup_.override_db) return report(&out, KTUNE_UNSUPPORTED, "KTUNE_DB is not set: the compiled-in tables serve");
  try {
    std::vector<std::string> in_use, refused, absent;
    for (const RuntimeFamily* f : families()) {
      if (const auto* table = override_table(*f)) {
        in_use.push_back(table->summary());
        if (!table->refused().empty()) refused.push_back(table->refused());
      } else if (const std::string_view error = overrides_[f->index].error; !error.empty())
        refused.emplace_back(error);
      else
        absent.emplace_back(f->name);
    }
    const auto none = absent.empty() ? std::string() : fmt::format("; nothing for {}", fmt::join(absent, ", "));
    const auto used = in_use.empty() ? std::string() : fmt::format("KTUNE_DB in use: {}", fmt::join(in_use, "; "));
    if (!refused.empty())
      return report(&out, KTUNE_INVALID_ARGUMENT,
                    fmt::format("{}{}{}{}", used, used.empty() ? "" : "; ", fmt::join(refused, "; "), none));
    if (!in_use.empty()) return report(&out, KTUNE_OK, used + none);
    return report(&out, KTUNE_UNSUPPORTED,
                  fmt::format("KTUNE_DB={} has results of no family{}", *setup_.override_db, none));
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what());
  }
}

ktune_status Engine::select_on_device(const RuntimeFamily& family, const Values& key, Selected& s,
                                      ktune_result& out) noexcept {
  try {
    s.current = current();
  } catch (const Unavailable& e) {
    return report(&out, KTUNE_NO_DEVICE, e.what());
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what());
  }
  s.choice = choose(family, s.current.device->arch, s.current.state->tables[family.index], key, s.from_override);
  return report(&out, s.choice.status, s.choice.reason, &s.choice, 0, s.from_override);
}

ktune_status Engine::load(const RuntimeFamily& family, const Selected& s, LoadedKernels& kernels, ktune_result& out,
                          int splits) noexcept {
  const KernelChoice& kc = *s.choice.kernel;
  auto stop = [&](ktune_status status, std::string_view why) {
    return report(&out, status, why, &s.choice, splits, s.from_override);
  };
  try {
    const CodeObject* object = kc.object;
    if (object == nullptr) {  // a KTUNE_DB winner no package holds (choose() refused it when jit_ is off)
      try {
        object = &jit_->get(family, s.current.device->arch, kc, template_hash_[family.index]);
      } catch (const JitFailed& e) {
        return stop(KTUNE_NO_CODE_OBJECT, e.what());
      }
    }
    if (!family.takes_runtime_arguments(*object))
      return stop(KTUNE_NO_CODE_OBJECT,
                  Message("the kernel {} does not take the arguments this runtime passes: rebuild ktune_runtime "
                          "with the ktune that made the package",
                          object->symbols[0]));
    kernels = cache_.get(*s.current.api, *s.current.device, *object, static_cast<size_t>(kc.shared_bytes));
  } catch (const MissingCodeObject& e) {
    return stop(KTUNE_NO_CODE_OBJECT, e.what());
  } catch (const std::exception& e) {
    return stop(KTUNE_LAUNCH_FAILED, e.what());
  }
  return s.choice.status;
}

std::string_view Engine::precondition_violated(const RuntimeFamily& family, const Values& key,
                                               const KernelChoice& kernel, std::string& scratch) {
  const auto id = std::make_pair(&kernel, key);
  {
    std::shared_lock lock(preconditions_mutex_);
    if (auto it = preconditions_.find(id); it != preconditions_.end()) return it->second;
  }
  Params key_params, config_params;
  for (size_t i = 0; i < family.key_fields.size(); ++i) key_params.set(family.key_fields[i], key[i]);
  for (size_t i = 0; i < family.config_fields.size(); ++i) config_params.set(family.config_fields[i], kernel.config[i]);
  scratch = ktune::family(family.name).precondition_violated(key_params, config_params).value_or("");
  std::unique_lock lock(preconditions_mutex_);
  if (preconditions_.size() >= kRememberedPreconditions) return scratch;
  return preconditions_.emplace(id, std::move(scratch)).first->second;  // map nodes stay put
}

size_t Engine::remembered_preconditions() {
  std::shared_lock lock(preconditions_mutex_);
  return preconditions_.size();
}

ktune_status Engine::launch(const Selected& s, const LoadedKernels& kernels, std::span<const Launch> launches,
                            void* stream, void** const* args, ktune_result& out, int splits) noexcept {
  try {
    for (size_t i = 0; i < launches.size(); ++i) s.current.api->launch(kernels[i], launches[i], stream, args[i]);
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what(), &s.choice, splits, s.from_override);
  }
  return s.choice.status;
}

}  // namespace ktune::runtime
