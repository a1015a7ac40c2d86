#pragma once
// The keys of a sweep handed out to the devices that run it, one at a time as each device frees
// up (keys differ a hundredfold in cost, so a split fixed in advance would leave devices idle).
// A key a device's run holds results of already (a resumed run) goes to that device alone: a key's
// results must all be of one run, since a dispatch table takes each key from one run.
#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace ktune::sweep {

class KeyQueue {
 public:
  // Keys 0 .. keys-1, handed out in that order; `owner[k]` (when given) is the device that alone
  // may take key k, or -1 where any may.
  explicit KeyQueue(size_t keys, std::vector<int> owner = {});

  // The next key for `device`: its own keys first, then the first key nobody owns; none when
  // nothing is left for it. Thread-safe.
  std::optional<size_t> take(int device);
  // What take(device) would answer now, without taking it (to compile it ahead).
  std::optional<size_t> peek(int device) const;
  // The keys nobody took, in order.
  std::vector<size_t> left() const;

 private:
  std::optional<size_t> find(int device) const;  // under the lock

  mutable std::mutex mutex_;
  std::vector<int> owner_;
  std::vector<bool> taken_;
};

}  // namespace ktune::sweep
