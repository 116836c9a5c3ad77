#pragma once
/// \file
/// An environment variable set or unset for a test's scope, as it was afterwards (cli's tests of what the
/// environment decides: the huge-page restart, finding node on PATH).

#include <cstdlib>
#include <optional>
#include <string>

#include "test_names.h"

namespace rnnstate::testing {

/// Sets (or, with nullopt, unsets) an environment variable for the scope, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::ScopedEnv;

}  // namespace rnnstate::test_names
