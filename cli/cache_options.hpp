#pragma once
// The code-object cache as every verb that compiles (sweep, compile, package, bench) takes it:
// --cache-dir / --no-cache, the cache they open, and the warning when it could not store what it
// compiled (the run succeeded, so that is no error, but a cache on a full or read-only disk would
// otherwise cost every later run its compiles without a word).
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "jit/cache.hpp"
#include "jit/compiler.hpp"

namespace ktune::cli {

struct CacheOptions {
  std::string dir;  // empty: CodeCache::default_dir()
  bool off = false;
};

// --cache-dir, --no-cache (which exclude each other).
void add_cache_options(CLI::App& cmd, CacheOptions& o);

// The cache --cache-dir names (else the default), or null with --no-cache.
std::unique_ptr<jit::CodeCache> open_cache(const CacheOptions& o);

// Prints CacheWriteFailures::warning to stderr when `cache` is used and some writes failed.
void warn_failed_cache_writes(const jit::CacheWriteFailures& failures, const jit::CodeCache* cache);

}  // namespace ktune::cli
