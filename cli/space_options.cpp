#include "space_options.hpp"

#include <algorithm>

#include "kernels/family.hpp"
#include "number_checks.hpp"
#include "sweep/filter.hpp"

namespace ktune::cli {

void add_space_options(CLI::App& cmd, SpaceOptions& o) {
  cmd.add_option("--kernel", o.kernel, "Kernel family, e.g. mla_decode")->required();
  cmd.add_option("--space", o.space, "Built-in space (smoke, default) or a TOML space file")->capture_default_str();
  cmd.add_option("--heads", o.heads, "Only these head counts, e.g. 16,128");
  cmd.add_option("--block-len", o.block_len, "Only these block lengths, e.g. 1,2");
  cmd.add_option("--causal", o.causal, "Only causal (1) or non-causal (0) blocks");
  cmd.add_option("--kv-dtype", o.kv_dtype, "Only these KV cache types, e.g. fp8_e4m3fn");
  cmd.add_option("--where", o.where, "Only these values of any key or config field: FIELD=V1,V2 (repeatable)");
  cmd.add_option("--shard", o.shard, "Only part I of N of the keys (round robin), as I/N, for job arrays");
  cmd.add_option("--jobs", o.jobs, "Compiling threads (default: one per core)")->check(decimal_within(0, 4096));
  add_cache_options(cmd, o.cache);
}

sweep::Space load_filtered_space(const SpaceOptions& o) {
  auto space = sweep::load_space(o.space, family(o.kernel));
  std::vector<sweep::FieldFilter> filters;
  const std::pair<const std::string*, const char*> shorthands[] = {
      {&o.heads, "heads"}, {&o.block_len, "block_len"}, {&o.causal, "causal"}, {&o.kv_dtype, "kv_dtype"}};
  for (const auto& [values, field] : shorthands)
    if (!values->empty()) {
      std::string option = "--" + std::string(field);
      std::replace(option.begin(), option.end(), '_', '-');
      filters.push_back(sweep::field_filter(field, *values, option));
    }
  for (const auto& w : o.where) filters.push_back(sweep::parse_where(w));
  sweep::apply_filters(space, filters);
  return space;
}

sweep::Shard shard_of(const SpaceOptions& o) { return o.shard.empty() ? sweep::Shard{} : sweep::parse_shard(o.shard); }

jit::CompileSettings compile_settings(const SpaceOptions& o, std::string arch, const jit::CodeCache* cache) {
  jit::CompileSettings s;
  s.arch = std::move(arch);
  s.jobs = o.jobs;
  s.cache = cache;
  return s;
}

std::vector<std::string> compile_worker_command(const backend::Backend& b) {
  return {"/proc/self/exe", "worker", "--backend", std::string(b.name())};
}

}  // namespace ktune::cli
