#include "sweep/supervisor.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::sweep {
namespace {
constexpr auto kExitGrace = std::chrono::milliseconds(2000);
constexpr auto kNow = std::chrono::milliseconds(0);

// (At most a year on: a longer duration would overflow the clock into the past.)
Clock::time_point deadline_after(std::chrono::duration<double> d) {
  const std::chrono::duration<double> year = std::chrono::hours(24 * 365);
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(d < year ? d : year);
}

std::string with_stderr(std::string what, const std::string& tail) {
  if (tail.empty()) return what;
  return fmt::format("{}; worker stderr:\n{}", what, tail);
}
}  // namespace

Supervisor::Supervisor(std::vector<std::string> argv, nlohmann::json hello, std::chrono::duration<double> start_timeout)
    : argv_(std::move(argv)), hello_(std::move(hello)), start_timeout_(start_timeout) {}

Supervisor::~Supervisor() {
  if (worker_) {
    // Closing the channel is the worker's signal to exit; it gets a moment to free the device.
    auto w = std::move(worker_);
    w->send_line(R"({"op":"exit"})", deadline_after(std::chrono::milliseconds(100)));
    w->finish(kExitGrace);
  }
}

std::string Supervisor::retire(std::string_view what, std::chrono::milliseconds grace) {
  auto status = worker_->finish(grace);
  auto detail = with_stderr(fmt::format("{} ({})", what, status.describe()), worker_->stderr_tail());
  worker_.reset();
  return detail;
}

void Supervisor::start() {
  worker_ = ChildProcess::spawn(argv_);
  ++started_;
  auto deadline = deadline_after(start_timeout_);
  std::string line;
  if (!worker_->send_line(hello_.dump(), deadline))
    throw Error(retire("the worker process did not start: it closed its input", kExitGrace));
  auto read = worker_->read_line(line, deadline);
  if (read == ChildProcess::Read::timeout)
    throw Error(retire(fmt::format("the worker process did not start within {:.0f} s", start_timeout_.count()), kNow));
  if (read == ChildProcess::Read::closed)
    throw Error(retire("the worker process did not start: it exited", kExitGrace));
  if (read == ChildProcess::Read::too_long)
    throw Error(retire("the worker process answered its start with more than a line can hold", kNow));
  auto reply = nlohmann::json::parse(line, nullptr, false);
  if (reply.is_discarded() || !reply.is_object())
    throw Error(retire(fmt::format("the worker process answered its start with '{}'", line), kNow));
  if (!reply.value("ready", false)) {
    auto why = reply.contains("error") && reply["error"].is_string() ? reply["error"].get<std::string>() : line;
    throw Error(retire(fmt::format("the worker process cannot run candidates: {}", why), kExitGrace));
  }
  hello_reply_ = std::move(reply);
}

const nlohmann::json& Supervisor::ensure_started() {
  if (worker_ && !worker_->running()) retire("the idle worker exited", kNow);
  if (!worker_) start();
  return hello_reply_;
}

WorkerOutcome Supervisor::request(const nlohmann::json& request, std::chrono::duration<double> timeout) {
  ensure_started();
  auto deadline = deadline_after(timeout);
  WorkerOutcome out;
  std::string line;
  auto read =
      worker_->send_line(request.dump(), deadline) ? worker_->read_line(line, deadline) : ChildProcess::Read::closed;
  if (read == ChildProcess::Read::timeout) {
    out.kind = WorkerOutcome::Kind::timeout;
    out.detail = retire(fmt::format("no answer within {:.1f} s; worker killed", timeout.count()), kNow);
    return out;
  }
  if (read == ChildProcess::Read::closed) {
    // Lets it finish dying, so that the status says why (a signal, an abort, an exit code).
    out.kind = WorkerOutcome::Kind::fault;
    out.died = true;
    out.detail = retire("the worker died", kExitGrace);
    return out;
  }
  if (read == ChildProcess::Read::too_long) {
    out.kind = WorkerOutcome::Kind::fault;
    out.detail = retire(fmt::format("the worker wrote more than {} MiB without ending its answer; worker killed",
                                    ChildProcess::kMaxLine >> 20),
                        kNow);
    return out;
  }
  out.reply = nlohmann::json::parse(line, nullptr, false);
  if (out.reply.is_discarded() || !out.reply.is_object()) {
    out.kind = WorkerOutcome::Kind::fault;
    out.detail = retire(fmt::format("the worker answered '{}', which is not a JSON object; worker killed", line), kNow);
    out.reply = nullptr;
    return out;
  }
  if (out.reply.value("fatal", false)) {
    worker_->finish(kExitGrace);
    worker_.reset();
  }
  return out;
}

}  // namespace ktune::sweep
