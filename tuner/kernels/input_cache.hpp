#pragma once
// Device copies of timing inputs that several problem keys can share, kept across keys by whoever
// times them (a sweep worker, `ktune bench`). mla_decode's KV cache depends only on its type and
// size, not on heads, block length or mask: the keys of its default space share a few dozen such
// caches (hundreds of MB each at the largest), which each key would otherwise draw and upload
// again.
// Kernels only read what lies here.
#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace ktune {

// Equal copies of one input (one per timing rotation).
using SharedBuffers = std::vector<std::unique_ptr<backend::Buffer>>;

class InputCache {
 public:
  // Keeps entries until their bytes pass `max_bytes`, then drops the least recently used ones
  // (an instance that holds one keeps it alive).
  explicit InputCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The buffers of `id`, made by `make` when absent. `id` must name everything their contents
  // depend on, sizes included.
  std::shared_ptr<const SharedBuffers> get(const std::string& id, const std::function<SharedBuffers()>& make);

  size_t bytes() const noexcept { return bytes_; }
  size_t entries() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    std::string id;
    std::shared_ptr<const SharedBuffers> buffers;
    size_t bytes = 0;
  };
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace ktune
