#pragma once
// What a code-object cache key must hold of a runtime compiler: its version, the options every
// compile passes, and a hash of the library that compiles (versions name only major.minor: a
// patch release must not be served the old one's code). Computed on first use, once: the hash
// reads the library whole (NVRTC's is about a hundred MB), which a caller that keeps no cache
// (the runtime's JIT) never needs.
#include <mutex>
#include <span>
#include <string>

#include "backend/dl_library.hpp"

namespace ktune::backend {

class CompilerIdentity {
 public:
  // Keeps references: the compiler that owns this identity owns all three.
  CompilerIdentity(const std::string& version, std::span<const char* const> options, const DlLibrary& library) noexcept
      : version_(version), options_(options), library_(library) {}

  // "nvrtc 13.0 [-std=c++17 --no-source-include] library <16 hex digits>". Thread-safe.
  const std::string& get() const;

 private:
  const std::string& version_;
  std::span<const char* const> options_;
  const DlLibrary& library_;
  mutable std::once_flag once_;
  mutable std::string value_;
};

}  // namespace ktune::backend
