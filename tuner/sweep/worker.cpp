#include "sweep/worker.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include "bench/matrix_probe.hpp"
#include "bench/roofline.hpp"
#include "bench/timing.hpp"
#include "common/error.hpp"
#include "common/seed.hpp"
#include "common/stopwatch.hpp"
#include "common/utf8.hpp"
#include "sweep/memory.hpp"

namespace ktune::sweep {
namespace {
using json = nlohmann::json;

RunResult failed(RunStatus status, std::string detail) {
  RunResult r;
  r.status = status;
  r.detail = std::move(detail);
  return r;
}

// A reply as one line of JSON. Text the worker passes on (a kernel's log, a request it did not
// understand) may hold invalid UTF-8, which dump() would throw on: replaced, not fatal.
std::string reply_line(const json& reply) { return reply.dump(-1, ' ', false, json::error_handler_t::replace); }

bool write_all(int fd, std::string line) {
  line += '\n';
  for (size_t done = 0; done < line.size();) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The parts of a key its verification depends on: every field but those it ignores.
Params verification_part(const Family& family, const Params& key) {
  const auto ignored = family.fields_verification_ignores();
  Params kept;
  for (const auto& [name, value] : key.items())
    if (std::find(ignored.begin(), ignored.end(), name) == ignored.end()) kept.set(name, value);
  return kept;
}

// What makes a program: its config, its kernels' names and its code object.
std::string program_id(const RunRequest& req) {
  return fmt::format("{}|{}|{:016x}", req.config.canonical(), fmt::join(req.symbols, ","),
                     XXH64(req.code.data(), req.code.size(), 0));
}

json device_json(const backend::DeviceInfo& d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"arch", d.arch},
          {"compute_units", d.compute_units},
          {"warp_size", d.warp_size},
          {"l2_bytes", d.l2_bytes},
          {"last_level_cache_bytes", d.last_level_cache_bytes()},
          {"memory_bytes", d.memory_bytes}};
}
}  // namespace

bool CandidateRunner::prepare(const Family& family, const RunRequest& req) {
  // The timing instance of another key goes first, so that its device memory is free.
  auto timing_key = fmt::format("{}:{}:{}", family.name(), req.key.canonical(), req.seed);
  if (timing_key != timing_key_) {
    timing_.reset();
    timing_key_ = std::move(timing_key);
  }
  // Verification inputs are drawn with the seed of the fields verification keeps, not with the
  // key's (req.seed, which differs with every field): keys that differ only in the others are
  // verified on the same inputs, so that they share instances and verdicts. Whether the key is
  // verified is part of its identity: instances prepared without verification must not pass a
  // later request's verification vacuously.
  const Params kept = verification_part(family, req.key);
  auto id = fmt::format("{}:{}:{}", family.name(), kept.canonical(), req.verify);
  if (verification_.id == id) return false;
  verification_ = {};  // frees the previous instances' device memory first
  Verification v;
  if (req.verify)
    for (auto& shape : family.verify_shapes(req.key)) {
      auto inst = family.instantiate(ctx_, req.key, shape, seed_of(kept), true);
      v.instances.emplace_back(std::move(shape), std::move(inst));
    }
  v.id = std::move(id);
  verification_ = std::move(v);
  return true;
}

RunResult CandidateRunner::verify(const Family& family, const RunRequest& req, const Candidate& c) {
  // A program that ran on these instances before would compute the same outputs again (a kernel
  // whose result varies from launch to launch would pass or fail by chance either way).
  const std::string program = program_id(req);
  if (auto known = verification_.verdicts.find(program); known != verification_.verdicts.end()) return known->second;
  RunResult r;
  for (auto& [shape, inst] : verification_.instances) {
    const auto where = shape.pretty(family.shape_fields());
    Verdict v;
    try {
      inst->poison();
      inst->launch(c, 0);
      v = inst->verify();
    } catch (const DeviceFault&) {
      throw;
    } catch (const Error& e) {
      r = failed(RunStatus::verify_failed, fmt::format("verification shape {}: launch failed: {}", where, e.what()));
      break;
    }
    r.max_abs_err = std::max(r.max_abs_err, v.max_abs_err);
    r.rel_l2_err = std::max(r.rel_l2_err, v.rel_l2_err);
    if (!v.ok) {
      r.status = RunStatus::verify_failed;
      r.detail = fmt::format("verification shape {}: {}", where, v.detail);
      break;
    }
  }
  verification_.verdicts.emplace(program, r);
  return r;
}

RunResult CandidateRunner::time(const Family& family, const RunRequest& req, const Candidate& c, RunResult r) {
  try {
    if (!timing_) {
      const Stopwatch setup;
      timing_ = family.instantiate_for_timing(ctx_, req.key, req.shape, req.seed, inputs_);
      r.time.setup_ms += setup.ms();
    }
    Instance& inst = *timing_;
    auto enqueue = [&](int rotation) { inst.launch(c, rotation); };
    // Without a cutoff the screening measurement would decide nothing.
    if (req.full_cutoff_us > 0) {
      const Stopwatch screen;
      r.stats = bench::measure(ctx_, enqueue, inst.rotations(), req.screen);
      r.time.screen_ms = screen.ms();
      r.time.timed_ms = r.stats.timed_ms;
    }
    r.fully_timed = req.full_cutoff_us <= 0 || r.stats.median_us <= req.full_cutoff_us;
    if (r.fully_timed) {
      const Stopwatch full;
      r.stats = bench::measure(ctx_, enqueue, inst.rotations(), req.full);
      r.time.full_ms = full.ms();
      r.time.timed_ms += r.stats.timed_ms;
    }
    r.traffic = inst.traffic();
    return r;
  } catch (const DeviceFault&) {
    throw;
  } catch (const Error& e) {  // verified, so not a wrong result: it failed to run
    return failed(RunStatus::fault,
                  fmt::format("timing shape {}: {}", req.shape.pretty(family.shape_fields()), e.what()));
  }
}

RunResult CandidateRunner::run(const Family& family, const RunRequest& req) {
  WorkerTime spent;
  try {
    const Stopwatch setup;
    if (prepare(family, req)) spent.setup_ms = setup.ms();
  } catch (const DeviceFault&) {
    throw;
  } catch (const Error& e) {
    verification_ = {};
    timing_.reset();
    timing_key_.clear();
    return failed(RunStatus::fault,
                  fmt::format("could not set up the problem {}: {}", req.key.pretty(family.key_fields()), e.what()));
  }
  backend::Module* module = nullptr;
  try {
    const Stopwatch load;
    module = &modules_.load(ctx_, req.code);
    spent.load_ms = load.ms();
  } catch (const DeviceFault&) {
    throw;
  } catch (const Error& e) {
    return failed(RunStatus::load_failed, fmt::format("the code object does not load: {}", e.what()));
  }
  const Candidate c{req.config, module, req.symbols};
  RunResult r;
  if (req.verify) {
    const Stopwatch verifying;
    r = verify(family, req, c);
    spent.verify_ms = verifying.ms();
  }
  r.time = spent;
  if (r.status != RunStatus::ok) return r;
  return time(family, req, c, std::move(r));
}

namespace {
// Opens the device (a device worker) and says so; throws when it cannot.
json hello(const WorkerSetup& setup, const json& req, std::unique_ptr<backend::Context>& ctx) {
  json reply = {{"ready", true}};
  if (setup.device < 0) return reply;
  const backend::Backend& b = backend::by_name(setup.backend);
  ctx = b.open(setup.device);
  reply["device"] = device_json(ctx->info());
  reply["driver"] = b.driver_version();
  reply["copy_gbps"] = req.value("copy_gbps", false) ? bench::measure_copy_gbps(*ctx) : 0.0;
  reply["matrix_tflops"] = 0.0;
  if (req.value("matrix_tflops", false)) {
    const auto roof = bench::try_measure_matrix_tflops(b, *ctx);
    reply["matrix_tflops"] = roof.tflops;
    if (!roof.instruction.empty()) reply["matrix_probe"] = roof.instruction;
    if (!roof.error.empty()) reply["matrix_error"] = roof.error;
  }
  return reply;
}

json compile(const WorkerSetup& setup, const json& req) noexcept {
  try {
    return compile_reply(backend::by_name(setup.backend).compile(compile_request_from(req)));
  } catch (const CompileError& e) {
    return compile_error_reply(e.what(), e.log());
  } catch (const std::exception& e) {
    return compile_error_reply(e.what(), "");
  }
}

// The candidate's result; `exit_status` is set when the worker must end after answering.
RunResult run(CandidateRunner* runner, const json& req, int& exit_status) noexcept {
  try {
    if (!runner) throw Error("a run request before hello");
    RunRequest r = run_request_from(req);
    return runner->run(family(r.family), r);
  } catch (const DeviceFault& e) {
    exit_status = 3;
    return failed(RunStatus::fault, e.what());
  } catch (const std::exception& e) {
    // Whatever state this left behind is unknown: answer, then make way for a fresh worker.
    exit_status = 4;
    return failed(RunStatus::fault, e.what());
  }
}

// What the worker holds after a candidate. Not after a device fault: the context is unusable.
void measure_memory(backend::Context* ctx, RunResult& r) noexcept {
  r.rss_bytes = resident_bytes();
  if (!ctx) return;
  try {
    r.device_used_bytes = ctx->info().memory_bytes - ctx->free_memory_bytes();
  } catch (const std::exception&) {
    r.device_used_bytes = 0;  // unknown; the candidate's result stands
  }
}
}  // namespace

int serve_worker(int in_fd, int out_fd, const WorkerSetup& setup) {
  // A device worker must not outlive its sweep, even when it is stuck in a kernel and never reads
  // the end of its input. The signal follows the thread that started the worker, so it is only
  // for device workers (started by the sweep's main thread); a compile worker is started by a
  // compiling thread that may end while another thread still uses it, and ends at the end of
  // its input instead.
  if (setup.device >= 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A sweep that died before prctl() sends no signal: the worker was adopted by another
    // process already, and nobody would ever end it.
    if (setup.parent_pid > 0 && ::getppid() != setup.parent_pid) return kParentGoneStatus;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> in(::fdopen(in_fd, "r"), &std::fclose);
  if (!in) return 2;
  struct LineBuffer {
    char* data = nullptr;
    size_t capacity = 0;
    ~LineBuffer() { std::free(data); }
  } line;
  std::unique_ptr<backend::Context> ctx;
  std::unique_ptr<CandidateRunner> runner;
  while (::getline(&line.data, &line.capacity, in.get()) > 0) {
    const Stopwatch handling;
    const std::string_view text(line.data);
    const auto req = json::parse(text, nullptr, false);
    const std::string op =
        req.is_object() && req.contains("op") && req["op"].is_string() ? req["op"].get<std::string>() : "";
    if (op == "exit") return 0;
    if (op == "hello") {
      json reply;
      try {
        reply = hello(setup, req, ctx);
        if (ctx) runner = std::make_unique<CandidateRunner>(*ctx);
      } catch (const std::exception& e) {
        write_all(out_fd, reply_line(json{{"ready", false}, {"error", e.what()}}));
        return 1;
      }
      if (!write_all(out_fd, reply_line(reply))) return 1;
    } else if (op == "compile") {
      if (!write_all(out_fd, reply_line(compile(setup, req)))) return 1;
    } else {
      int exit_status = -1;
      RunResult result =
          op == "run"
              ? run(runner.get(), req, exit_status)
              : failed(RunStatus::fault, fmt::format("unknown request '{}'", text.substr(0, utf8_boundary(text, 200))));
      if (op != "run") exit_status = 4;
      result.fatal = exit_status >= 0;
      if (!result.fatal) measure_memory(ctx.get(), result);
      result.time.total_ms = handling.ms();
      if (!write_all(out_fd, reply_line(to_json(result)))) return 1;
      if (result.fatal) return exit_status;
    }
  }
  return 0;
}

}  // namespace ktune::sweep
