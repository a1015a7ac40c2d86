#pragma once
// Error types thrown at ktune's boundaries. Each carries the context a user needs to act on it.
#include <stdexcept>
#include <string>

namespace ktune {

// Any failure with a message meant for the user (bad input, I/O, database, configuration).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The JIT compiler rejected a source: `log` holds the compiler's own output.
class CompileError : public Error {
 public:
  CompileError(const std::string& what, std::string log) : Error(what), log_(std::move(log)) {}
  const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};

// A device error after which the context is unusable (illegal address, trap in a kernel,
// launch failure). The sweep must discard the worker process that saw it.
class DeviceFault : public Error {
 public:
  using Error::Error;
};

// A backend or device that cannot be used on this machine (no driver, no library, no device).
class Unavailable : public Error {
 public:
  using Error::Error;
};

}  // namespace ktune
