// The one translation unit that includes the packaged headers (KTUNE_RUNTIME_PACKAGE_HEADER,
// set by dispatch/runtime/CMakeLists.txt).
#include "dispatch/runtime/compiled_table.hpp"

#include KTUNE_RUNTIME_PACKAGE_HEADER

namespace ktune::runtime {
namespace {

namespace d = ktune_dispatch::mla_decode;

ktune_mla_decode_key to_c(const d::Key& k) noexcept {
  return {k.heads, k.block_len, k.causal, static_cast<int64_t>(k.kv_dtype), k.batch};
}

ktune_status status_of(d::Selection::Kind kind) noexcept {
  switch (kind) {
    case d::Selection::Kind::kernel: return KTUNE_OK;
    case d::Selection::Kind::fallback: return KTUNE_OK_FALLBACK;
    case d::Selection::Kind::gap: return KTUNE_GAP;
    case d::Selection::Kind::unsupported: return KTUNE_UNSUPPORTED;
  }
  return KTUNE_UNSUPPORTED;
}

const std::vector<CodeObjectInfo>& code_objects() noexcept {
  static const std::vector<CodeObjectInfo> objects = [] {
    std::vector<CodeObjectInfo> v;
    for (const auto& c : d::kCodeObjects) v.push_back({c.file, c.symbols[0], c.symbols[1]});
    return v;
  }();
  return objects;
}

}  // namespace

const CompiledPackage& compiled_package() noexcept {
  static const CompiledPackage p{"mla_decode", d::kPackageArch, d::kPackageCompiler, d::kPackageTemplateHash};
  return p;
}

Choice select_compiled(std::string_view arch, const ktune_mla_decode_key& key) noexcept {
  const d::Key k{.heads = key.heads,
                 .block_len = key.block_len,
                 .causal = key.causal,
                 .kv_dtype = static_cast<d::KvDtype>(key.kv_dtype),
                 .batch = key.batch};
  const d::Selection s = d::select(arch, k);
  Choice c;
  c.status = status_of(s.kind);
  c.reason = s.reason;
  c.has_fallback_key = s.has_fallback_key;
  c.fallback_key = to_c(s.fallback_key);
  if (s.kernel != nullptr) {
    const auto index = static_cast<size_t>(s.kernel - d::detail::kKernels);
    c.kernel = KernelChoice{static_cast<int>(s.kernel->config.rows),  static_cast<int>(s.kernel->config.keys),
                            static_cast<int>(s.kernel->config.split), s.kernel->threads_per_block,
                            s.kernel->shared_bytes,                   d::kKernelCodeObject[index]};
  }
  return c;
}

size_t code_object_count() noexcept { return code_objects().size(); }
const CodeObjectInfo& code_object(size_t index) noexcept { return code_objects()[index]; }

size_t find_code_object(const std::vector<std::string>& name_expressions) noexcept {
  for (size_t c = 0; c < d::kCodeObjects.size(); ++c) {
    const auto& object = d::kCodeObjects[c];
    bool same = object.count == name_expressions.size();
    for (size_t i = 0; same && i < object.count; ++i) same = name_expressions[i] == object.name_expressions[i];
    if (same) return c;
  }
  return d::kCodeObjects.size();
}

}  // namespace ktune::runtime
