#include "dispatch/runtime/jit_code_objects.hpp"

#include <fmt/format.h>

#include "backend/backend.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"

namespace ktune::runtime {
namespace {

// The beginning of a compiler log: enough to see the first error, short enough for a status.
constexpr size_t kLogExcerpt = 300;

std::string basename(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

JitCompilerFor backend_compilers() {
  return [](std::string_view arch) -> std::shared_ptr<const jit::Compiler> {
    const backend::Backend& b = backend::for_arch(arch);
    if (!b.compiler_available(arch))
      throw Unavailable(fmt::format("no compiler for {}: {}", arch, b.compiler_unavailable_reason(arch)));
    return std::make_shared<jit::BackendCompiler>(b, arch);
  };
}

void JitCodeObjects::compile(Entry& e, const RuntimeFamily& family, std::string_view arch,
                             std::string_view template_hash) const {
  const Family& f = ktune::family(family.name);
  const std::string hash = jit::template_hash(f.template_file());
  if (hash != template_hash)
    throw JitFailed(fmt::format("the templates built into this library (hash {}) are not those KTUNE_DB was checked "
                                "against ({}): cannot compile its winner",
                                hash, template_hash));
  const auto compiler = compiler_for_(arch);
  const backend::CompileRequest req{
      jit::render(f.template_file()), basename(f.template_file()), e.names, std::string(arch), {}};
  backend::CompileResult result;
  try {
    result = compiler->compile(req);
  } catch (const CompileError& c) {
    throw JitFailed(fmt::format("{}: {}", c.what(), c.log().substr(0, kLogExcerpt)));
  }
  if (result.lowered_names.size() != e.names.size())
    throw JitFailed(fmt::format("the compiler returned {} lowered names for {} name expressions",
                                result.lowered_names.size(), e.names.size()));
  e.code.assign(result.code.begin(), result.code.end());
  e.symbols = std::move(result.lowered_names);
  for (const auto& n : e.names) e.name_ptrs.push_back(n.c_str());
  for (const auto& s : e.symbols) e.symbol_ptrs.push_back(s.c_str());
  e.package = fmt::format("{}-{} (compiled at run time)", family.name, arch);
  e.object = {e.package, {}, e.name_ptrs.data(), e.symbol_ptrs.data(), e.names.size(), e.code};
}

const CodeObject& JitCodeObjects::get(const RuntimeFamily& family, std::string_view arch, const KernelChoice& kernel,
                                      std::string_view template_hash) {
  Entry* e = nullptr;
  {
    std::lock_guard lock(mutex_);
    // Every launch of the kernel comes here: its entry is found by address, with no allocation
    // (an arch name fits std::string's inline buffer); only its first launch builds the key of
    // the program, which kernels with the same instances share.
    auto& known = by_kernel_[{&kernel, std::string(arch)}];
    if (known == nullptr) {
      std::vector<std::string> names(kernel.name_expressions, kernel.name_expressions + kernel.name_expression_count);
      auto& slot = entries_[{fmt::format("{}/{}", family.name, arch), names}];
      if (!slot) {
        slot = std::make_unique<Entry>();
        slot->names = std::move(names);
      }
      known = slot.get();
    }
    e = known;
  }
  // Concurrent first callers of one entry wait here for the one that compiles.
  std::call_once(e->once, [&] {
    try {
      compile(*e, family, arch, template_hash);
    } catch (const std::exception& x) {
      e->error =
          fmt::format("compiling the KTUNE_DB winner {}{} for {} at run time failed: {}", e->names[0],
                      e->names.size() > 1 ? fmt::format(" (+{} kernels)", e->names.size() - 1) : "", arch, x.what());
    }
  });
  if (!e->error.empty()) throw JitFailed(e->error);
  return e->object;
}

size_t JitCodeObjects::compiles() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace ktune::runtime
