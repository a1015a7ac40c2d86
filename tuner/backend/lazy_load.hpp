#pragma once
// A vendor library's function table, loaded on first use and never retried. Loading lazily keeps
// start-up cheap on CPU-only machines and leaves a GPU runtime uninitialised until a caller
// needs it (a process that forks workers must not have initialised CUDA before the fork).
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "common/error.hpp"

namespace ktune::backend {

template <class Api>
class LazyLoad {
 public:
  // The loaded table, or nullptr when loading failed (reason() says why).
  const Api* get() const noexcept {
    std::call_once(once_, [this] {
      try {
        api_ = std::make_unique<Api>();
      } catch (const std::exception& e) {
        reason_ = e.what();
      }
    });
    return api_.get();
  }
  // The loaded table; throws Unavailable with the reason when loading failed.
  const Api& require() const {
    if (const Api* api = get()) return *api;
    throw Unavailable(reason_);
  }
  // Empty when loading succeeded.
  std::string reason() const {
    get();
    return reason_;
  }

 private:
  mutable std::once_flag once_;
  mutable std::unique_ptr<Api> api_;
  mutable std::string reason_;
};

}  // namespace ktune::backend
