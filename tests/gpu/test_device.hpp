#pragma once
// The device every GPU test of this executable shares (opened once per process, or the reason
// there is none), and the fixture that skips with that reason.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend/backend.hpp"

namespace ktune::gpu_test {

struct Device {
  backend::Backend* backend = nullptr;
  std::unique_ptr<backend::Context> ctx;
  std::string missing;  // why there is none
};

// The first device of the first available backend.
inline Device& device() {
  static Device d = [] {
    Device found;
    for (backend::Backend* b : backend::all()) {
      if (b->available() && b->device_count() > 0) {
        found.backend = b;
        found.ctx = b->open(0);
        return found;
      }
      found.missing += std::string(found.missing.empty() ? "" : "; ") + std::string(b->name()) + ": " +
                       (b->available() ? std::string("no device") : b->unavailable_reason());
    }
    if (found.missing.empty()) found.missing = "no GPU backend was built into this binary";
    return found;
  }();
  return d;
}

// Test fixtures: skip, with the reason, where there is no device.
template <class Base>
class WithDevice : public Base {
 protected:
  void SetUp() override {
    if (!device().ctx) GTEST_SKIP() << "no GPU: " << device().missing;
  }
};

}  // namespace ktune::gpu_test
