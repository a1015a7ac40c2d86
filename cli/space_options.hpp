#pragma once
// What `ktune compile` and `ktune sweep` share: the family, the space and the filters that
// narrow it, and the compile settings (threads, code-object cache).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backend/backend.hpp"
#include "cache_options.hpp"
#include "jit/compiler.hpp"
#include "sweep/plan.hpp"
#include "sweep/space.hpp"

namespace ktune::cli {

struct SpaceOptions {
  std::string kernel;
  std::string space = "smoke";
  std::string heads, block_len, causal, kv_dtype;  // shorthand filters: comma-separated values
  std::vector<std::string> where;                  // field=v1,v2
  std::string shard;                               // i/n
  int jobs = 0;
  CacheOptions cache;
};

// --kernel (required), --space, --heads, --block-len, --causal, --kv-dtype, --where, --shard,
// --jobs, --cache-dir, --no-cache.
void add_space_options(CLI::App& cmd, SpaceOptions& o);

// The space named by --space, narrowed by the filters. Throws Error.
sweep::Space load_filtered_space(const SpaceOptions& o);
sweep::Shard shard_of(const SpaceOptions& o);

jit::CompileSettings compile_settings(const SpaceOptions& o, std::string arch, const jit::CodeCache* cache);

// `ktune worker` for `b`, started from this very binary (/proc/self/exe: right even when the
// file was rebuilt since); add --device N for a worker that runs candidates.
std::vector<std::string> compile_worker_command(const backend::Backend& b);

}  // namespace ktune::cli
