#include "dispatch/runtime/code_objects.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "dispatch/runtime/compiled_table.hpp"

namespace ktune::runtime {

CodeObjectCache::~CodeObjectCache() {
  for (auto& [key, l] : loaded_) l.api->unload(l.module);
}

std::string CodeObjectCache::read(size_t index) const {
  const auto& object = code_object(index);
  for (const auto& dir : dirs_) {
    const auto path = std::filesystem::path(dir) / object.file;
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
  throw MissingCodeObject(fmt::format("code object {} is in none of the package directories ({}): set KTUNE_PACKAGE_DIR to the "
                          "directory `ktune package` wrote",
                          object.file, fmt::join(dirs_, ", ")));
}

LoadedKernels CodeObjectCache::get(const GpuApi& api, const Device& device, size_t index, size_t shared_bytes) {
  std::lock_guard lock(mutex_);
  const auto key = std::make_pair(device.id, index);
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second.kernels;
  const auto bytes = read(index);
  void* module = api.load(bytes);
  try {
    const auto& object = code_object(index);
    LoadedKernels k{api.function(module, std::string(object.main_symbol), shared_bytes),
                    api.function(module, std::string(object.combine_symbol), 0)};
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
