#include "dispatch/runtime/code_objects.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace ktune::runtime {

CodeObjectCache::~CodeObjectCache() {
  for (auto& [key, l] : loaded_) l.api->unload(l.module);
}

std::string CodeObjectCache::read(const CodeObject& object) const {
  for (const auto& root : roots_) {
    for (const auto& path :
         {std::filesystem::path(root) / object.package / object.file, std::filesystem::path(root) / object.file}) {
      std::ifstream in(path, std::ios::binary);
      if (!in) continue;
      std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      // The file is named by the xxh64 of its bytes: a truncated or replaced file is refused.
      const auto hash = fmt::format("{:016x}", XXH64(bytes.data(), bytes.size(), 0));
      if (!object.file.starts_with(hash))
        throw MissingCodeObject(fmt::format("code object {} is corrupt: its bytes hash to {} (re-install the package)",
                                            path.string(), hash));
      return bytes;
    }
  }
  throw MissingCodeObject(fmt::format("code object {} of package {} is in none of the package directories ({}): set "
                                      "KTUNE_PACKAGE_DIR to the directory `ktune package` wrote",
                                      object.file, object.package, fmt::join(roots_, ", ")));
}

LoadedKernels CodeObjectCache::get(const GpuApi& api, const Device& device, const CodeObject& object,
                                   size_t shared_bytes) {
  if (object.count == 0 || object.count > kMaxKernels)
    throw Error(fmt::format("code object {} holds {} kernels, the runtime launches 1 to {}", object.file, object.count,
                            kMaxKernels));
  std::lock_guard lock(mutex_);
  const auto key = std::make_pair(device.id, &object);
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second.kernels;
  std::string bytes;
  void* module = api.load(object.file.empty() ? object.code : std::string_view(bytes = read(object)));
  try {
    LoadedKernels k{};
    for (size_t i = 0; i < object.count; ++i) k[i] = api.function(module, object.symbols[i], i == 0 ? shared_bytes : 0);
    loaded_.emplace(key, Loaded{&api, module, k});
    return k;
  } catch (...) {
    api.unload(module);
    throw;
  }
}

size_t CodeObjectCache::loads() const {
  std::lock_guard lock(mutex_);
  return loaded_.size();
}

}  // namespace ktune::runtime
