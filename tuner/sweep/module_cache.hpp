#pragma once
// The code objects a worker has loaded, kept for the requests that follow. A sweep sends one
// program per config, but the configs of a key that differ only in host-side knobs (split), and
// the keys of one cache type and mask, run the same programs (130 for mla_decode's whole default
// space on sm_90a): loading each once, not once per candidate, spares the load, its first launch's
// lazy loading of the kernels and the unload, every time.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.hpp"

namespace ktune::sweep {

class ModuleCache {
 public:
  // Keeps up to `capacity` modules, dropping the least recently used.
  explicit ModuleCache(size_t capacity) : capacity_(capacity) {}

  // The module of `code` (byte for byte), loaded through `ctx` unless already here. Throws what
  // Context::load throws; a code object that does not load is not kept.
  backend::Module& load(backend::Context& ctx, std::span<const char> code);

  size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    std::vector<char> code;
    std::unique_ptr<backend::Module> module;
    uint64_t last_use = 0;
  };
  size_t capacity_;
  uint64_t uses_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace ktune::sweep
