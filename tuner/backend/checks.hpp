#pragma once
// Argument checks every Context implementation makes before it calls its vendor API, so that a
// caller bug becomes an Error naming the operation instead of undefined behaviour.
#include <fmt/format.h>

#include <cstddef>
#include <string>

#include "backend/backend.hpp"
#include "common/error.hpp"

namespace ktune::backend {

// Each Context accepts only the Events and Graphs it created itself.
template <class Derived, class Base>
Derived& downcast(Base& object, const char* what) {
  if (auto* derived = dynamic_cast<Derived*>(&object)) return *derived;
  throw Error(std::string(what) + " was not created by this backend's context");
}

// [offset, offset + bytes) must lie inside `buffer`.
inline void require_range(const Buffer& buffer, size_t offset, size_t bytes, const char* operation) {
  if (offset > buffer.size() || bytes > buffer.size() - offset)
    throw Error(
        fmt::format("{}: {} bytes at offset {} exceed the {}-byte buffer", operation, bytes, offset, buffer.size()));
}

}  // namespace ktune::backend
