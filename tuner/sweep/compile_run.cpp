#include "sweep/compile_run.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/utf8.hpp"
#include "kernels/kernel_resources.hpp"

namespace ktune::sweep {
namespace {

// Long enough for the first compiler errors, short enough for a table cell (as the sweep's).
constexpr size_t kDetailChars = 4000;

LaunchInfo main_launch(const Family& family, const Params& key, const Params& config) {
  try {
    return family.launch_info(key, config);
  } catch (const std::exception&) {
    return {};  // unknown: the main kernel is taken at its largest workgroup and static LDS
  }
}

void keep_max(std::optional<int64_t>& to, const std::optional<int64_t>& v) {
  if (v && (!to || *v > *to)) to = v;
}

class CompileRun {
 public:
  CompileRun(const Space& space, db::Database* db, db::Run provenance, const jit::Compiler& compiler,
             const jit::CompileSettings& settings, const CompileRunOptions& options)
      : space_(space),
        family_(*space.family),
        target_(target_limits(provenance.arch)),
        db_(db),
        run_(std::move(provenance)),
        compiler_(compiler),
        settings_(settings),
        options_(options) {
    if (run_.kind != db::RunKind::compile) throw Error("run_compile: the run's kind must be compile");
  }

  CompileRunSummary run() {
    DoneSet done;
    if (db_ && options_.resume) done = resume();
    const auto plan = build_plan(space_, target_, done, options_.shard);
    summary_.keys = plan.keys.size();
    summary_.candidates = plan.candidates;
    summary_.infeasible = plan.infeasible;
    summary_.already_done = plan.done;
    if (db_ && !summary_.resumed) run_.id = db_->begin_run(run_);
    summary_.run_id = db_ ? run_.id : 0;

    const size_t per_batch = db_ ? std::max<size_t>(1, options_.batch_candidates) : SIZE_MAX;
    std::vector<jit::CompileJob> jobs;
    size_t compiled = 0;
    auto flush = [&] {
      if (jobs.empty()) return;
      compile_batch(jobs);
      compiled += jobs.size();
      jobs.clear();
      if (options_.on_batch) options_.on_batch(compiled, plan.candidates);
    };
    for (const auto& k : plan.keys) {
      for (const auto& c : k.configs) jobs.push_back({k.key, c});
      if (jobs.size() >= per_batch) flush();
    }
    flush();
    for (auto& [error, f] : failures_) summary_.failures.push_back(std::move(f));
    for (auto& [kind, k] : kinds_) summary_.kinds.push_back(std::move(k));
    return summary_;
  }

 private:
  DoneSet resume() {
    std::set<Params> planned;
    for (const auto& k : build_plan(space_, target_, {}, options_.shard).keys) planned.insert(k.key);
    const auto compatible = db_->compatible_runs(run_);
    for (auto r = compatible.rbegin(); r != compatible.rend(); ++r) {
      db::Filter f;
      f.run_id = r->id;
      const auto rows = db_->compiled_kernels(f);
      if (!std::all_of(rows.begin(), rows.end(), [&](const db::CompiledKernel& k) { return planned.contains(k.key); }))
        continue;
      run_ = *r;
      summary_.resumed = true;
      DoneSet done;
      for (const auto& row : rows) done.insert({row.key, row.config});
      return done;
    }
    return {};
  }

  void compile_batch(const std::vector<jit::CompileJob>& jobs) {
    const auto batch = jit::compile_candidates(family_, jobs, compiler_, settings_);
    add_stats(batch.stats);
    std::vector<db::CompiledKernel> rows;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const auto& out = batch.outcomes[i];
      db::CompiledKernel row;
      row.run_id = run_.id;
      row.key = jobs[i].key;
      row.config = jobs[i].config;
      row.compile_seconds = out.seconds;
      row.from_cache = out.cache_hit;
      if (!out.ok()) {
        auto [it, inserted] = failures_.try_emplace(out.error, CompileFailure{out.error, row.key, row.config, 0});
        ++it->second.candidates;
        row.status = db::Status::compile_error;
        row.detail = excerpt(out.error, kDetailChars);
        rows.push_back(std::move(row));
        continue;
      }
      const auto used =
          read_resources(target_, out.name_expressions, *out.result, main_launch(family_, row.key, row.config));
      if (!used.unread.empty() && summary_.resources_unread++ == 0) summary_.first_unread = used.unread;
      for (const auto& k : used.kernels) {
        add_kind(k, used.unread.empty());
        db::CompiledKernel kr = row;
        kr.kernel = k.kernel;
        kr.symbol = k.symbol;
        kr.resources = k.resources;
        kr.detail = used.unread.empty() ? "" : "resources not read: " + used.unread;
        rows.push_back(std::move(kr));
      }
    }
    if (db_) summary_.rows += db_->record_compiled(rows);
  }

  void add_stats(const jit::CompileStats& s) {
    auto& t = summary_.stats;
    t.programs += s.programs;
    t.cache_hits += s.cache_hits;
    t.failed_programs += s.failed_programs;
    t.cache_writes_failed.add(s.cache_writes_failed);
    t.seconds += s.seconds;
  }

  void add_kind(const KernelUse& k, bool read) {
    const auto kind = kernel_kind(k.kernel);
    auto& s = kinds_[kind];
    s.kind = kind;
    ++s.kernels;
    const auto& r = k.resources;
    if (!read || !r.vgprs) return;
    ++s.read;
    keep_max(s.max_vgprs, r.vgprs);
    keep_max(s.max_agprs, r.agprs);
    keep_max(s.max_scratch_bytes, r.scratch_bytes);
    if (r.scratch_bytes && *r.scratch_bytes > 0) ++s.spilling;
    if (r.waves_per_simd && (!s.min_waves_per_simd || *r.waves_per_simd < *s.min_waves_per_simd))
      s.min_waves_per_simd = r.waves_per_simd;
  }

  const Space& space_;
  const Family& family_;
  const TargetLimits& target_;
  db::Database* db_;
  db::Run run_;
  const jit::Compiler& compiler_;
  const jit::CompileSettings& settings_;
  const CompileRunOptions& options_;
  CompileRunSummary summary_;
  std::map<std::string, CompileFailure> failures_;
  std::map<std::string, KernelKind> kinds_;
};

}  // namespace

std::string kernel_kind(std::string_view name_expression) {
  return std::string(name_expression.substr(0, name_expression.find('<')));
}

CompileRunSummary run_compile(const Space& space, db::Database* db, db::Run provenance, const jit::Compiler& compiler,
                              const jit::CompileSettings& settings, const CompileRunOptions& options) {
  return CompileRun(space, db, std::move(provenance), compiler, settings, options).run();
}

}  // namespace ktune::sweep
