#pragma once
// The warning every verb that compiles (sweep, compile, package, bench) prints when the code
// cache could not store what it compiled: the run succeeded, so it is no error, but a cache on a
// full or read-only disk would otherwise cost every later run its compiles without a word.
#include "jit/compiler.hpp"

namespace ktune::cli {

// Prints CacheWriteFailures::warning to stderr when `cache` is used and some writes failed.
void warn_failed_cache_writes(const jit::CacheWriteFailures& failures, const jit::CodeCache* cache);

}  // namespace ktune::cli
