#pragma once
// A std::vector whose resize() leaves new elements of trivial types uninitialised, for the random
// inputs of hundreds of MB that a parallel fill writes right after: value-initialising them would
// first zero (and fault in) every page on one thread, which takes longer than the parallel fill
// that follows.
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace ktune {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;  // default-initialisation: nothing for a trivial type
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    std::construct_at(p, std::forward<Args>(args)...);
  }
};

template <class T>
using UninitVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace ktune
