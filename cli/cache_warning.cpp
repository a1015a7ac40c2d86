#include "cache_warning.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace ktune::cli {

void warn_failed_cache_writes(const jit::CacheWriteFailures& failures, const jit::CodeCache* cache) {
  if (cache && failures.count) fmt::print(stderr, "{}\n", failures.warning(*cache));
}

}  // namespace ktune::cli
