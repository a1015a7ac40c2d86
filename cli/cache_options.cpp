#include "cache_options.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace ktune::cli {

void add_cache_options(CLI::App& cmd, CacheOptions& o) {
  auto* dir =
      cmd.add_option("--cache-dir", o.dir,
                     "Code-object cache (default: $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune, else ~/.cache/ktune)");
  cmd.add_flag("--no-cache", o.off, "Compile everything; read and write no cache")->excludes(dir);
}

std::unique_ptr<jit::CodeCache> open_cache(const CacheOptions& o) {
  if (o.off) return nullptr;
  return std::make_unique<jit::CodeCache>(o.dir);
}

void warn_failed_cache_writes(const jit::CacheWriteFailures& failures, const jit::CodeCache* cache) {
  if (cache && failures.count) fmt::print(stderr, "{}\n", failures.warning(*cache));
}

}  // namespace ktune::cli
