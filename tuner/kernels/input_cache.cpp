#include "kernels/input_cache.hpp"

#include <algorithm>

namespace ktune {

std::shared_ptr<const SharedBuffers> InputCache::get(const std::string& id,
                                                     const std::function<SharedBuffers()>& make) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.id == id; });
  if (it != entries_.end()) {
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front().buffers;
  }
  auto buffers = std::make_shared<const SharedBuffers>(make());
  size_t bytes = 0;
  for (const auto& b : *buffers) bytes += b->size();
  entries_.push_front({id, buffers, bytes});
  bytes_ += bytes;
  // The new entry stays even when it alone passes the budget: its instance needs it now.
  while (bytes_ > max_bytes_ && entries_.size() > 1) {
    bytes_ -= entries_.back().bytes;
    entries_.pop_back();
  }
  return buffers;
}

}  // namespace ktune
