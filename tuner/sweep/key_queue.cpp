#include "sweep/key_queue.hpp"

#include "common/error.hpp"

namespace ktune::sweep {

KeyQueue::KeyQueue(size_t keys, std::vector<int> owner) : owner_(std::move(owner)), taken_(keys, false) {
  if (owner_.empty()) owner_.assign(keys, -1);
  if (owner_.size() != keys) throw Error("KeyQueue: one owner per key");
}

std::optional<size_t> KeyQueue::find(int device) const {
  for (size_t k = 0; k < taken_.size(); ++k)
    if (!taken_[k] && owner_[k] == device) return k;
  for (size_t k = 0; k < taken_.size(); ++k)
    if (!taken_[k] && owner_[k] == -1) return k;
  return std::nullopt;
}

std::optional<size_t> KeyQueue::take(int device) {
  std::lock_guard lock(mutex_);
  auto k = find(device);
  if (k) taken_[*k] = true;
  return k;
}

std::optional<size_t> KeyQueue::peek(int device) const {
  std::lock_guard lock(mutex_);
  return find(device);
}

std::vector<size_t> KeyQueue::left() const {
  std::lock_guard lock(mutex_);
  std::vector<size_t> out;
  for (size_t k = 0; k < taken_.size(); ++k)
    if (!taken_[k]) out.push_back(k);
  return out;
}

}  // namespace ktune::sweep
