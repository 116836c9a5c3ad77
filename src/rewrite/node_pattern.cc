// NodePattern (rnnstate/options.h): `--nodes` compiled by RE2.

#include <re2/re2.h>

#include "rnnstate/error.h"
#include "rnnstate/options.h"

namespace rnnstate {

namespace {

/// RE2's options for a node pattern: errors are returned, not logged to stderr; a pattern of any size
/// a user types is compiled (the default 8 MiB program limit is kept: it bounds memory, not time).
RE2::Options PatternOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  return options;
}

}  // namespace

NodePattern::NodePattern(const std::string& pattern) {
  auto compiled = std::make_shared<const RE2>(pattern, PatternOptions());
  if (!compiled->ok()) {
    throw Error(ExitCode::kUsage, "--nodes '" + pattern + "' is not a valid regular expression (RE2 syntax): " +
                                      compiled->error());
  }
  compiled_ = std::move(compiled);
}

bool NodePattern::Search(const std::string& name) const { return RE2::PartialMatch(name, *compiled_); }

}  // namespace rnnstate
