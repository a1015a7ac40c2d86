#pragma once
// Sets (or, with nullptr, unsets) an environment variable for the guard's lifetime and restores
// what was there before, so that a test that changes the environment leaves none of it behind.
#include <stdlib.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace ktune::test_support {

class EnvVar {
 public:
  EnvVar(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    value ? ::setenv(name_.c_str(), value, 1) : ::unsetenv(name_.c_str());
  }
  ~EnvVar() { old_ ? ::setenv(name_.c_str(), old_->c_str(), 1) : ::unsetenv(name_.c_str()); }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace ktune::test_support
