#include "backend/compiler_identity.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ktune::backend {

const std::string& CompilerIdentity::get() const {
  std::call_once(once_, [this] {
    value_ = fmt::format("{} [{}] library {}", version_, fmt::join(options_, " "), library_.content_hash());
  });
  return value_;
}

}  // namespace ktune::backend
