#include "sweep/runner.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/roofline.hpp"
#include "bench/stopping.hpp"
#include "common/error.hpp"
#include "common/seed.hpp"
#include "common/stopwatch.hpp"
#include "common/utf8.hpp"
#include "kernels/kernel_resources.hpp"
#include "sweep/memory.hpp"
#include "sweep/protocol.hpp"
#include "sweep/supervisor.hpp"

namespace ktune::sweep {

namespace {
using db::Status;
using Clock = std::chrono::steady_clock;

// Long enough for the first compiler errors, short enough for a table cell.
constexpr size_t kDetailChars = 4000;
constexpr size_t kGapDetailChars = 600;
// Copy probes of one device read a few percent apart (bench/roofline.hpp); beyond 8% it is another
// device, or one not at its best.
constexpr double kRoofDrift = 0.08;

std::string_view status_name(Status s) noexcept {
  switch (s) {
    case Status::ok: return "ok";
    case Status::verify_failed: return "verify_failed";
    case Status::compile_error: return "compile_error";
    case Status::fault: return "fault";
    case Status::timeout: return "timeout";
    case Status::infeasible: return "infeasible";
  }
  return "?";
}

// What the configs of one key did, in this run and in the runs it resumes.
struct KeyTally {
  size_t ok = 0;
  double best_us = 0;                                    // fastest fully timed ok median, 0 while none
  std::vector<std::pair<Status, std::string>> failures;  // status, "config: detail"

  void add(const db::Measurement& m, bool fully_timed, const std::vector<FieldSpec>& config_fields) {
    if (m.status == Status::ok) {
      ++ok;
      if (fully_timed && (best_us == 0 || m.median_us < best_us)) best_us = m.median_us;
    } else {
      failures.emplace_back(m.status, fmt::format("{}: {}", m.config.pretty(config_fields), m.detail));
    }
  }
  size_t count(Status s) const {
    return static_cast<size_t>(std::count_if(failures.begin(), failures.end(), [&](auto& f) { return f.first == s; }));
  }
};

// The most specific reason a key has no kernel: compile_error only when nothing compiled;
// otherwise what the candidates that did compile ran into, the closest to working first.
// A key whose every config was pruned for its resources (spills, no wave per SIMD) has no config
// that can serve it, as one whose configs are all infeasible before compiling.
db::GapReason gap_reason(const KeyTally& t) {
  const size_t compile_errors = t.count(Status::compile_error), pruned = t.count(Status::infeasible);
  if (compile_errors + pruned == t.failures.size())
    return compile_errors > 0 ? db::GapReason::compile_error : db::GapReason::no_config;
  if (t.count(Status::verify_failed)) return db::GapReason::verify_failed;
  if (t.count(Status::fault)) return db::GapReason::fault;
  return db::GapReason::timeout;
}

Status status_of(db::GapReason r) {
  switch (r) {
    case db::GapReason::compile_error: return Status::compile_error;
    case db::GapReason::verify_failed: return Status::verify_failed;
    case db::GapReason::fault: return Status::fault;
    case db::GapReason::no_config: return Status::infeasible;
    default: return Status::timeout;
  }
}

std::string gap_detail(const KeyTally& t, Status shown) {
  std::vector<std::string> counts;
  for (Status s : {Status::compile_error, Status::infeasible, Status::verify_failed, Status::fault, Status::timeout})
    if (size_t n = t.count(s)) counts.push_back(fmt::format("{} {}", n, status_name(s)));
  auto first = std::find_if(t.failures.begin(), t.failures.end(), [&](auto& f) { return f.first == shown; });
  return fmt::format("{} configs failed ({}); first {}: {}", t.failures.size(), fmt::join(counts, ", "),
                     status_name(shown), excerpt(first->second, kGapDetailChars));
}

std::string no_config_detail(const PlannedKey& k, std::string_view arch) {
  std::vector<std::string> reasons;
  for (const auto& [why, n] : k.infeasible_reasons) reasons.push_back(fmt::format("{} ({} configs)", why, n));
  return fmt::format("all {} configs of the space are infeasible on {}: {}", k.infeasible, arch,
                     fmt::join(reasons, "; "));
}

// The family's ranking fields, checked: key fields, each once, few enough for a 64-bit similarity.
std::vector<std::string> ranking_fields(const Family& family) {
  auto fields = family.ranking_fields();
  const auto& keys = family.key_fields();
  if (fields.size() > 64) throw Error(fmt::format("{}: {} ranking fields, at most 64", family.name(), fields.size()));
  for (size_t i = 0; i < fields.size(); ++i) {
    if (std::none_of(keys.begin(), keys.end(), [&](const FieldSpec& f) { return f.name == fields[i]; }))
      throw Error(fmt::format("{}: ranking field '{}' is no key field", family.name(), fields[i]));
    if (std::find(fields.begin(), fields.begin() + static_cast<std::ptrdiff_t>(i), fields[i]) !=
        fields.begin() + static_cast<std::ptrdiff_t>(i))
      throw Error(fmt::format("{}: ranking field '{}' is listed twice", family.name(), fields[i]));
  }
  return fields;
}

class Sweep {
 public:
  Sweep(const Space& space, db::Database& db, db::Run provenance, const jit::Compiler& compiler,
        const jit::CompileSettings& compile, const SweepOptions& options)
      : space_(space),
        family_(*space.family),
        db_(db),
        run_(std::move(provenance)),
        compiler_(compiler),
        compile_(compile),
        options_(options) {
    compile_.on_progress = nullptr;  // compiles run behind the device; the sweep reports progress
  }

  SweepSummary run();

 private:
  void resume();
  // Throws when command-line filters of the configs leave keys with no config: recorded as
  // no_config gaps of a new run, they would hide those keys' winners of earlier runs.
  void refuse_filtered_gaps(const Plan& plan) const;
  // Throws when the space's timing shape cannot be drawn for a key (Family::shape_unfit): every
  // config of that key would be recorded as failing.
  void refuse_unfit_shape(const Plan& plan) const;
  void start_worker_and_run();
  void run_key(const PlannedKey& k, const jit::CompileBatch& batch, Progress& progress);
  // Indices of k's configs in the order to run them: those the most similar earlier key of the
  // plan with ok results timed, fastest first, then the rest in plan order. Similar keys rank
  // configs alike, so a key's first candidate sets a tight screening cutoff at once and the slow
  // ones are abandoned early. Similar: equal in the family's strongest ranking field, then in
  // the next, ... (Family::ranking_fields), and of equally similar keys the nearest in the plan.
  // Not merely the previous key: the plan varies the batch fastest, and a shard's previous key
  // is many keys away, and its fastest configs are a poor first guess (scripts/run_order.py
  // measures both orders over a swept database). Resumed results
  // count as this run's: a resumed sweep runs its candidates in the order an uninterrupted one
  // would have.
  std::vector<size_t> run_order(const PlannedKey& k) const;
  // A key's similarity to k: bit i (from the top) set where they agree in ranking field i.
  uint64_t similarity(const Params& a, const Params& b) const;
  db::Measurement run_candidate(const PlannedKey& k, size_t i, const jit::CompileOutcome& code, KeyTally& tally,
                                bool& fully_timed);
  // Clears the key's measured gap or records one; reports it unless `progress` is null.
  // Idempotent: a resumed sweep closes again the keys a killed one finished but had not closed.
  void close_key(const PlannedKey& k, const KeyTally& tally, Progress* progress);
  void add_gap(const Params& key, db::GapReason reason, std::string detail);
  void run_keys(const std::vector<const PlannedKey*>& to_run, Progress& progress);
  // The run's roofs, for its first progress line.
  std::string roofs() const;
  // The sweep process and the worker's memory after a candidate: the first and the latest.
  void note_memory(const RunResult& r) {
    SweepSummary::Memory now{resident_bytes(), r.rss_bytes, r.device_used_bytes};
    if (summary_.memory_start.rss_bytes == 0) summary_.memory_start = now;
    summary_.memory_end = now;
  }
  void add_time(const WorkerTime& w, double round_trip_s) {
    auto& t = summary_.time;
    const double phases_ms = w.setup_ms + w.load_ms + w.verify_ms + w.screen_ms + w.full_ms;
    t.setup += w.setup_ms / 1000;
    t.load += w.load_ms / 1000;
    t.verify += w.verify_ms / 1000;
    t.screen += w.screen_ms / 1000;
    t.full += w.full_ms / 1000;
    t.timed += w.timed_ms / 1000;
    t.worker_rest += std::max(0.0, w.total_ms - phases_ms) / 1000;
    t.messages += std::max(0.0, round_trip_s - w.total_ms / 1000);
  }
  size_t recorded() const {
    return summary_.ok + summary_.verify_failed + summary_.compile_error + summary_.fault + summary_.timeout +
           summary_.pruned;
  }
  bool over_budget() const {
    return options_.budget_s > 0 && std::chrono::duration<double>(Clock::now() - start_).count() >= options_.budget_s;
  }

  const Space& space_;
  const Family& family_;
  db::Database& db_;
  db::Run run_;
  const jit::Compiler& compiler_;
  jit::CompileSettings compile_;
  const SweepOptions& options_;
  Clock::time_point start_ = Clock::now();
  std::unique_ptr<Supervisor> supervisor_;
  DoneSet done_;
  std::map<Params, KeyTally> prior_;                    // per key, from the resumed run
  std::map<Params, std::map<Params, double>> medians_;  // key -> config -> median of its ok results
  const std::vector<PlannedKey>* plan_keys_ = nullptr;  // run()'s plan while it runs: a key's neighbours
  std::vector<std::string> ranking_ = ranking_fields(family_);
  SweepSummary summary_;
  std::string matrix_error_;  // why the first worker could not measure the matrix-core roof
  bool stopped_ = false;
};

void Sweep::resume() {
  // The newest compatible run whose every result belongs to this sweep: timed on its shape, of
  // keys in its plan (so not another shard's). Only that run's results are done: another run's
  // would leave this one's keys incomplete, and codegen serves a key from its newest run.
  std::set<Params> planned;
  for (const auto& k : build_plan(space_, target_limits(run_.arch), {}, options_.shard).keys) planned.insert(k.key);
  const auto compatible = db_.compatible_runs(run_);
  for (auto r = compatible.rbegin(); r != compatible.rend(); ++r) {
    db::Filter f;
    f.run_id = r->id;
    const auto measured = db_.measurements(f);
    const bool ours = std::all_of(measured.begin(), measured.end(), [&](const db::Measurement& m) {
      return m.shape == space_.shape && planned.contains(m.key);
    });
    if (!ours) continue;
    run_ = *r;
    summary_.resumed = true;
    for (const auto& m : measured) {
      done_.insert({m.key, m.config});
      // A screened-out result was slower than a fully timed one of its key when it was taken,
      // so counting every ok result as fully timed leaves the key's best unchanged.
      prior_[m.key].add(m, true, family_.config_fields());
      if (m.status == Status::ok) medians_[m.key][m.config] = m.median_us;
    }
    return;
  }
}

void Sweep::refuse_filtered_gaps(const Plan& plan) const {
  if (space_.config_filters.empty()) return;
  std::vector<const PlannedKey*> left;
  for (const auto& k : plan.keys)
    if (k.no_config()) left.push_back(&k);
  if (left.empty()) return;
  throw Error(fmt::format(
      "{}: {} of the {} keys are left with no config that {} runs on {} (first: {}: {}); a sweep would record "
      "them as no_config gaps, which codegen prefers to their winners of earlier runs: narrow the keys too "
      "(--where FIELD=...), or drop the filter (nothing was recorded)",
      fmt::join(space_.config_filters, " "), left.size(), plan.keys.size(), family_.name(), run_.arch,
      left.front()->key.pretty(family_.key_fields()), no_config_detail(*left.front(), run_.arch)));
}

void Sweep::refuse_unfit_shape(const Plan& plan) const {
  size_t unfit = 0;
  std::string first;
  for (const auto& k : plan.keys)
    if (auto why = family_.shape_unfit(k.key, space_.shape); why && unfit++ == 0)
      first = fmt::format("{}: {}", k.key.pretty(family_.key_fields()), *why);
  if (unfit > 0)
    throw Error(fmt::format("{}: its [shape] ({}) does not fit {} of the {} keys (first: {}); nothing was recorded",
                            space_.origin, space_.shape.pretty(family_.shape_fields()), unfit, plan.keys.size(),
                            first));
}

void Sweep::start_worker_and_run() {
  // The roofs are measured once per run, by its first worker: a resumed run keeps its own, since
  // its rows are fractions of them. The copy roof, a second's probe, is measured on resume all the
  // same, to say when the device (another machine, say) no longer reaches it.
  const bool measure = !summary_.resumed;
  const Stopwatch starting;
  supervisor_ = std::make_unique<Supervisor>(
      options_.worker_command, nlohmann::json{{"op", "hello"}, {"copy_gbps", true}, {"matrix_tflops", measure}},
      options_.start_timeout);
  const auto hello = supervisor_->ensure_started();
  summary_.time.worker_start += starting.seconds();
  // Workers started after a fault measure nothing.
  supervisor_->set_hello({{"op", "hello"}, {"copy_gbps", false}, {"matrix_tflops", false}});
  const auto device = hello.value("device", nlohmann::json::object());
  if (device.value("name", "") != run_.device_name || device.value("arch", "") != run_.arch)
    throw Error(fmt::format("the worker opened '{}' ({}), but the sweep is for '{}' ({})", device.value("name", "?"),
                            device.value("arch", "?"), run_.device_name, run_.arch));
  if (const double now = hello.value("copy_gbps", 0.0);
      !measure && run_.copy_gbps > 0 && now > 0 && std::abs(now / run_.copy_gbps - 1) > kRoofDrift)
    summary_.roof_warning = fmt::format(
        "warning: run {} measured a copy bandwidth of {:.0f} GB/s (on host '{}'); the device here reaches {:.0f} GB/s, "
        "{:+.1f}%: the fractions of the roof of the rows added now are of the run's {:.0f} GB/s all the same",
        run_.id, run_.copy_gbps, run_.host, now, 100 * (now / run_.copy_gbps - 1), run_.copy_gbps);
  if (measure) {
    run_.copy_gbps = hello.value("copy_gbps", 0.0);
    run_.matrix_tflops = hello.value("matrix_tflops", 0.0);
    run_.matrix_probe = run_.matrix_tflops > 0 ? hello.value("matrix_probe", "") : "";
    if (run_.matrix_tflops > 0 && run_.matrix_probe.empty())
      throw Error(fmt::format("the worker measured a matrix-core roof of {:.0f} TFLOP/s without naming its probe "
                              "(matrix_probe): a worker of another ktune build? nothing was recorded",
                              run_.matrix_tflops));
    matrix_error_ = hello.value("matrix_error", "");
    run_.id = db_.begin_run(run_);
  }
  summary_.run_id = run_.id;
}

std::string Sweep::roofs() const {
  // A resumed run's roof is the one it measured when it began, with whatever probe ktune then had
  // (sm_90a's was mma.sync's before wgmma's): named as the run recorded it, never by today's probe.
  if (run_.matrix_tflops > 0 && summary_.resumed)
    return fmt::format("copy bandwidth {:.0f} GB/s, matrix-core roof {:.0f} TFLOP/s (the run's, measured when it "
                       "began; probe: {})",
                       run_.copy_gbps, run_.matrix_tflops, db::matrix_probe_of(run_));
  if (run_.matrix_tflops > 0)
    return fmt::format("copy bandwidth {:.0f} GB/s, {} peak {:.0f} TFLOP/s", run_.copy_gbps, run_.matrix_probe,
                       run_.matrix_tflops);
  return fmt::format("copy bandwidth {:.0f} GB/s, matrix-core throughput not measured{} (frac_matrix is NULL)",
                     run_.copy_gbps, matrix_error_.empty() ? "" : ": " + matrix_error_);
}

db::Measurement Sweep::run_candidate(const PlannedKey& k, size_t i, const jit::CompileOutcome& code, KeyTally& tally,
                                     bool& fully_timed) {
  db::Measurement m;
  m.run_id = run_.id;
  m.key = k.key;
  m.config = k.configs[i];
  m.shape = space_.shape;
  fully_timed = false;
  if (!code.ok()) {
    m.status = Status::compile_error;
    m.detail = excerpt(code.error, kDetailChars);
    return m;
  }
  // What the code object says its kernels use (AMD targets): a config that spills or fits not one
  // wave per SIMD is pruned without running, with the reason.
  const auto used = read_resources(target_limits(run_.arch), code.name_expressions, *code.result,
                                   family_.launch_info(k.key, k.configs[i]));
  if (auto why = resource_infeasible(used.kernels)) {
    m.status = Status::infeasible;
    m.detail = *why;
    return m;
  }
  RunRequest req;
  req.family = std::string(family_.name());
  req.key = k.key;
  req.config = k.configs[i];
  req.shape = space_.shape;
  req.code = code.result->code;
  req.symbols = code.result->lowered_names;
  req.seed = seed_of(k.key);
  req.screen = options_.screen_policy;
  req.full = options_.full_policy;
  req.full_cutoff_us = tally.best_us * options_.screen_factor;
  req.screen.abandon_us = tally.best_us * options_.abandon_factor;
  auto ask = [&] {
    {
      const Stopwatch starting;  // a fresh worker after a fault
      supervisor_->ensure_started();
      summary_.time.worker_start += starting.seconds();
    }
    const Stopwatch round_trip;
    auto out = supervisor_->request(to_json(req), options_.timeout);
    return std::make_pair(std::move(out), round_trip.seconds());
  };
  auto [out, round_trip_s] = ask();
  // A worker that died without answering may have been dying before the request (the OOM killer,
  // an abort in the previous candidate's teardown): the candidate is asked once more, of a fresh
  // worker, before it is blamed.
  if (out.kind == WorkerOutcome::Kind::fault && out.died) {
    summary_.time.lost += round_trip_s;
    const std::string first = out.detail;
    std::tie(out, round_trip_s) = ask();
    if (out.kind != WorkerOutcome::Kind::reply)
      out.detail = fmt::format("{}\n(asked twice; the first worker: {})", out.detail, first);
  }
  if (out.kind != WorkerOutcome::Kind::reply) {
    summary_.time.lost += round_trip_s;
    m.status = out.kind == WorkerOutcome::Kind::timeout ? Status::timeout : Status::fault;
    m.detail = excerpt(out.detail, kDetailChars);
    return m;
  }
  RunResult r;
  try {
    r = run_result_from(out.reply);
  } catch (const Error& e) {
    m.status = Status::fault;
    m.detail =
        excerpt(fmt::format("the worker's answer is not a result: {}: {}", e.what(), out.reply.dump()), kDetailChars);
    return m;
  }
  note_memory(r);
  add_time(r.time, round_trip_s);
  m.max_abs_err = r.max_abs_err;
  m.rel_l2_err = r.rel_l2_err;
  m.detail = excerpt(r.detail, kDetailChars);
  switch (r.status) {
    case RunStatus::ok: m.status = Status::ok; break;
    case RunStatus::verify_failed: m.status = Status::verify_failed; break;
    case RunStatus::load_failed: m.status = Status::compile_error; break;
    case RunStatus::fault: m.status = Status::fault; break;
  }
  if (m.status != Status::ok) return m;
  // What the database requires of an ok row (and the roofline needs): a worker that answers
  // otherwise is faulty, and its row a fault, not an error that stops every resumed sweep here.
  const auto& st = r.stats;
  if (!bench::plausible(st)) {
    m.status = Status::fault;
    m.detail = excerpt(fmt::format("the worker reported an ok result with impossible timing ({} samples, p10 {} us, "
                                   "median {} us, p90 {} us): {}",
                                   st.n, st.p10_us, st.median_us, st.p90_us, out.reply.dump()),
                       kDetailChars);
    return m;
  }
  fully_timed = r.fully_timed;
  m.median_us = r.stats.median_us;
  m.p10_us = r.stats.p10_us;
  m.p90_us = r.stats.p90_us;
  m.samples = r.stats.n;
  const auto rates = bench::rates_of(r.traffic.bytes, r.traffic.flops, m.median_us, run_.copy_gbps, run_.matrix_tflops);
  m.gbps = rates.gbps;
  m.tflops = rates.tflops;
  if (run_.copy_gbps > 0) m.frac_copy_bw = rates.frac_copy_bw;
  if (run_.matrix_tflops > 0) m.frac_matrix = rates.frac_matrix;
  // scripts/sweep_results.sh (KTUNE_RESULTS_TRIM=screened) knows screened rows by this prefix.
  if (!fully_timed)
    m.detail =
        fmt::format("screened: {:.2f}x the best of the key so far, not timed in full", m.median_us / tally.best_us);
  else if (st.stop != bench::Stop::converged && st.stop != bench::Stop::none)
    m.detail =
        excerpt(fmt::format("not converged: {}{}{}", bench::precision(st), m.detail.empty() ? "" : "; ", m.detail),
                kDetailChars);
  return m;
}

void Sweep::close_key(const PlannedKey& k, const KeyTally& tally, Progress* progress) {
  const auto name = k.key.pretty(family_.key_fields());
  if (tally.ok > 0) {
    db_.remove_gap(run_.family, run_.arch, k.key, "measured");
    if (progress) progress->key_done(fmt::format("{}: {} ok, best {:.2f} us", name, tally.ok, tally.best_us), false);
    return;
  }
  const auto reason = gap_reason(tally);
  auto detail = gap_detail(tally, status_of(reason));
  if (progress)
    progress->key_done(fmt::format("{}: gap ({}): {}", name, status_name(status_of(reason)), excerpt(detail, 200)),
                       true);
  add_gap(k.key, reason, std::move(detail));
}

void Sweep::add_gap(const Params& key, db::GapReason reason, std::string detail) {
  db::Gap g;
  g.family = run_.family;
  g.arch = run_.arch;
  g.key = key;
  g.reason = reason;
  g.detail = std::move(detail);
  g.source = "measured";
  g.run_id = run_.id;
  g.fallback = "none";
  db_.add_gap(g);
  ++summary_.gaps;
}

std::vector<size_t> Sweep::run_order(const PlannedKey& k) const {
  std::vector<size_t> order(k.configs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const std::map<Params, double>* previous = nullptr;
  uint64_t closest = 0;
  for (const PlannedKey* p = &k; p != plan_keys_->data();) {
    --p;
    auto it = medians_.find(p->key);
    if (it == medians_.end()) continue;
    if (const uint64_t s = similarity(k.key, p->key); !previous || s > closest) previous = &it->second, closest = s;
  }
  if (!previous) return order;
  auto rank = [&](size_t i) {
    auto it = previous->find(k.configs[i]);
    return it == previous->end() ? std::numeric_limits<double>::infinity() : it->second;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
  return order;
}

uint64_t Sweep::similarity(const Params& a, const Params& b) const {
  uint64_t s = 0;
  for (const auto& field : ranking_) s = s << 1 | (a.at(field) == b.at(field) ? 1 : 0);
  return s;
}

void Sweep::run_key(const PlannedKey& k, const jit::CompileBatch& batch, Progress& progress) {
  KeyTally tally = prior_[k.key];
  const auto order = run_order(k);
  for (size_t n = 0; n < order.size(); ++n) {
    if (over_budget()) {
      stopped_ = true;
      summary_.not_started += order.size() - n;
      progress.drop(order.size() - n);
      break;
    }
    const size_t i = order[n];
    bool fully_timed = false;
    auto m = run_candidate(k, i, batch.outcomes[i], tally, fully_timed);
    const Stopwatch recording;
    db_.record(m);
    summary_.time.database += recording.seconds();
    tally.add(m, fully_timed, family_.config_fields());
    switch (m.status) {
      case Status::ok:
        ++summary_.ok;
        medians_[k.key][m.config] = m.median_us;
        break;
      case Status::verify_failed: ++summary_.verify_failed; break;
      case Status::compile_error: ++summary_.compile_error; break;
      case Status::fault: ++summary_.fault; break;
      case Status::timeout: ++summary_.timeout; break;
      case Status::infeasible: ++summary_.pruned; break;
    }
    progress.candidate_done(m.status == Status::ok);
  }
  if (!stopped_) {
    const Stopwatch closing;
    close_key(k, tally, &progress);
    summary_.time.database += closing.seconds();
  }
}

SweepSummary Sweep::run() {
  if (options_.resume) resume();
  const auto plan = build_plan(space_, target_limits(run_.arch), done_, options_.shard);
  refuse_filtered_gaps(plan);
  refuse_unfit_shape(plan);
  plan_keys_ = &plan.keys;
  summary_.keys = plan.keys.size();
  summary_.candidates = plan.candidates;
  summary_.infeasible = plan.infeasible;
  summary_.already_done = plan.done;
  Progress progress(options_.progress, plan.candidates);
  // Keys whose every config the resumed runs measured: a sweep killed after a key's last
  // measurement and before its gap was recorded (or cleared) left the key open. Reported when
  // they ran, so closed silently.
  for (const auto& k : plan.keys)
    if (k.configs.empty() && k.done > 0) close_key(k, prior_[k.key], nullptr);
  if (summary_.resumed && plan.candidates == 0) {
    summary_.run_id = run_.id;
    progress.message(fmt::format("run {}: nothing left to do", run_.id));
    return summary_;
  }
  start_worker_and_run();
  if (!summary_.roof_warning.empty()) progress.message(summary_.roof_warning);
  progress.message(
      fmt::format("run {}{}: {} on {} ({}), {}; {} keys, {} candidates to run, {} infeasible, {} done before", run_.id,
                  summary_.resumed ? " (resumed)" : "", run_.family, run_.device_name, run_.arch, roofs(),
                  plan.keys.size(), plan.candidates, plan.infeasible, plan.done));

  std::vector<const PlannedKey*> to_run;
  for (const auto& k : plan.keys) {
    if (!k.configs.empty()) {
      to_run.push_back(&k);
    } else if (k.no_config()) {
      add_gap(k.key, db::GapReason::no_config, no_config_detail(k, run_.arch));
      progress.key_done(fmt::format("{}: gap (no_config)", k.key.pretty(family_.key_fields())), true);
    }
  }

  try {
    run_keys(to_run, progress);
  } catch (const Error& e) {
    throw Error(fmt::format("{}\nthe sweep stopped; run {} keeps the {} results this sweep recorded in it "
                            "(continue with --resume)",
                            e.what(), run_.id, recorded()));
  }
  summary_.workers_started = static_cast<size_t>(supervisor_->workers_started());
  summary_.peak_rss_bytes = peak_resident_bytes();
  summary_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  return summary_;
}

void Sweep::run_keys(const std::vector<const PlannedKey*>& to_run, Progress& progress) {
  // The next key compiles while the device runs this one.
  auto compile = [this](const PlannedKey* k) {
    std::vector<jit::CompileJob> jobs;
    for (const auto& c : k->configs) jobs.push_back({k->key, c});
    return jit::compile_candidates(family_, jobs, compiler_, compile_);
  };
  std::future<jit::CompileBatch> next;
  if (!to_run.empty()) next = std::async(std::launch::async, compile, to_run[0]);
  for (size_t t = 0; t < to_run.size(); ++t) {
    const Stopwatch waiting;
    auto batch = next.get();
    summary_.time.compile_wait += waiting.seconds();
    summary_.cache_writes_failed.add(batch.stats.cache_writes_failed);
    // Past the budget nothing is prefetched; run_key then stops at once (the budget only grows
    // more exceeded), so no invalid future is ever waited on.
    if (t + 1 < to_run.size() && !over_budget()) next = std::async(std::launch::async, compile, to_run[t + 1]);
    run_key(*to_run[t], batch, progress);
    if (stopped_) {
      for (size_t rest = t + 1; rest < to_run.size(); ++rest) {
        summary_.not_started += to_run[rest]->configs.size();
        progress.drop(to_run[rest]->configs.size());
      }
      progress.message(fmt::format("budget of {:.0f} s reached: {} candidates not started (continue with --resume)",
                                   options_.budget_s, summary_.not_started));
      break;
    }
  }
}
}  // namespace

std::string describe_time(const SweepSummary& s) {
  const auto& t = s.time;
  std::vector<std::pair<double, std::string>> parts = {{t.setup, "key set-up"},
                                                       {t.load, "code loading"},
                                                       {t.verify, "verification"},
                                                       {t.screen, "screening"},
                                                       {t.full, "full timing"},
                                                       {t.worker_rest, "the workers' rest"},
                                                       {t.messages, "messages"},
                                                       {t.worker_start, "worker starts"},
                                                       {t.lost, "requests lost to faults and timeouts"},
                                                       {t.database, "database"},
                                                       {t.compile_wait, "waiting for compiles"}};
  double accounted = 0;
  for (const auto& p : parts) accounted += p.first;
  parts.emplace_back(std::max(0.0, s.seconds - accounted), "the sweep's own");
  std::stable_sort(parts.begin(), parts.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<std::string> shown;
  for (const auto& [seconds, what] : parts) shown.push_back(fmt::format("{} {:.1f} s", what, seconds));
  return fmt::format("time: {:.1f} s in all: {}; the timed launches took {:.1f} s of screening and full timing",
                     s.seconds, fmt::join(shown, ", "), t.timed);
}

bench::TimingPolicy screening_policy() noexcept {
  bench::TimingPolicy p;
  p.warmup = 2;
  p.min_samples = 6;
  p.max_samples = 12;
  p.rel_ci = 0.1;
  p.budget_ms = 300;
  return p;
}

SweepSummary run_sweep(const Space& space, db::Database& db, db::Run provenance, const jit::Compiler& compiler,
                       const jit::CompileSettings& compile, const SweepOptions& options) {
  return Sweep(space, db, std::move(provenance), compiler, compile, options).run();
}

}  // namespace ktune::sweep
