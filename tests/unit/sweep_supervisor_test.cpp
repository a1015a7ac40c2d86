// Worker isolation without a GPU: fake workers (small shell scripts) that answer, crash, hang,
// talk garbage or refuse to start prove that the parent records each failure and goes on.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "sweep/process.hpp"
#include "sweep/supervisor.hpp"
#include "sweep_test_support.hpp"

namespace ktune::sweep {
namespace {
using json = nlohmann::json;
using Kind = WorkerOutcome::Kind;
using testing::TempDir;
using namespace std::chrono_literals;

// Answers hello with its pid; then acts on the "do" field of each request.
const char* kFakeWorker = R"(#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"op":"hello"'*) echo "{\"ready\":true,\"pid\":$$}" ;;
    *'"op":"exit"'*) exit 0 ;;
    *'"do":"crash"'*) echo "dying on purpose" >&2; kill -SEGV $$ ;;
    *'"do":"hang"'*) sleep 30 ;;
    *'"do":"garbage"'*) echo "this is not json" ;;
    *'"do":"exit"'*) exit 7 ;;
    *'"do":"fatal"'*) echo '{"status":"fault","fatal":true}'; exit 3 ;;
    *'"do":"endless"'*) head -c 300000000 /dev/zero; sleep 30 ;;
    *) echo "{\"status\":\"ok\",\"pid\":$$}" ;;
  esac
done
)";

struct SweepSupervisor : ::testing::Test {
  TempDir tmp;
  std::string script = tmp.write("worker.sh", kFakeWorker);
  Supervisor make(const char* body = nullptr) {
    return Supervisor({"/bin/sh", body ? tmp.write("other.sh", body) : script}, json{{"op", "hello"}}, 5s);
  }
  static json req(const char* what) { return json{{"op", "run"}, {"do", what}}; }
};

TEST_F(SweepSupervisor, RepliesComeFromOneLongLivedWorker) {
  auto sup = make();
  auto a = sup.request(req("ok"), 5s), b = sup.request(req("ok"), 5s);
  ASSERT_EQ(a.kind, Kind::reply);
  ASSERT_EQ(b.kind, Kind::reply);
  EXPECT_EQ(a.reply["status"], "ok");
  EXPECT_EQ(a.reply["pid"], b.reply["pid"]);
  EXPECT_EQ(sup.workers_started(), 1);
  EXPECT_EQ(sup.hello_reply()["pid"], a.reply["pid"]);
}

// An answer that never ends (300 MB without a newline) is cut off at ChildProcess::kMaxLine, not
// read until the timeout into the parent's memory.
TEST_F(SweepSupervisor, AnAnswerBeyondTheLineLimitIsAFault) {
  auto sup = make();
  const auto out = sup.request(req("endless"), 60s);
  EXPECT_EQ(out.kind, Kind::fault);
  EXPECT_NE(out.detail.find("more than 256 MiB without ending its answer"), std::string::npos) << out.detail;
  EXPECT_EQ(sup.request(req("ok"), 5s).kind, Kind::reply) << "a new worker answers the next request";
}

TEST_F(SweepSupervisor, CrashIsAFaultAndTheNextRequestGetsANewWorker) {
  auto sup = make();
  auto first = sup.request(req("ok"), 5s);
  auto crash = sup.request(req("crash"), 5s);
  ASSERT_EQ(crash.kind, Kind::fault);
  EXPECT_NE(crash.detail.find("signal 11"), std::string::npos) << crash.detail;
  EXPECT_NE(crash.detail.find("dying on purpose"), std::string::npos)
      << "the worker's stderr belongs in the detail: " << crash.detail;
  auto next = sup.request(req("ok"), 5s);
  ASSERT_EQ(next.kind, Kind::reply);
  EXPECT_NE(next.reply["pid"], first.reply["pid"]);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST_F(SweepSupervisor, ExitIsAFaultWithItsCode) {
  auto sup = make();
  auto out = sup.request(req("exit"), 5s);
  ASSERT_EQ(out.kind, Kind::fault);
  EXPECT_NE(out.detail.find("exit code 7"), std::string::npos) << out.detail;
}

TEST_F(SweepSupervisor, HangIsATimeoutWithinTheLimitAndTheWorkerIsKilled) {
  auto sup = make();
  auto t0 = std::chrono::steady_clock::now();
  auto out = sup.request(req("hang"), 300ms);
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(out.kind, Kind::timeout);
  EXPECT_NE(out.detail.find("no answer within 0.3 s"), std::string::npos) << out.detail;
  EXPECT_LT(took, 5s) << "the sleeping child of the worker must not hold the supervisor up";
  EXPECT_EQ(sup.request(req("ok"), 5s).kind, Kind::reply);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST_F(SweepSupervisor, GarbageIsAFault) {
  auto sup = make();
  auto out = sup.request(req("garbage"), 5s);
  ASSERT_EQ(out.kind, Kind::fault);
  EXPECT_NE(out.detail.find("this is not json"), std::string::npos) << out.detail;
  EXPECT_EQ(sup.request(req("ok"), 5s).kind, Kind::reply);
}

TEST_F(SweepSupervisor, FatalReplyIsKeptAndRetiresTheWorker) {
  auto sup = make();
  auto out = sup.request(req("fatal"), 5s);
  ASSERT_EQ(out.kind, Kind::reply);
  EXPECT_EQ(out.reply["status"], "fault");
  EXPECT_EQ(sup.request(req("ok"), 5s).kind, Kind::reply) << "the next candidate must not inherit the dying worker";
  EXPECT_EQ(sup.workers_started(), 2);
}

// The sweep's view: a run of candidates where some misbehave; each gets its own outcome.
TEST_F(SweepSupervisor, GoesOnAfterEveryKindOfFailure) {
  auto sup = make();
  std::vector<Kind> kinds;
  for (const char* what : {"ok", "crash", "ok", "hang", "ok", "garbage", "exit", "ok"})
    kinds.push_back(sup.request(req(what), std::string_view(what) == "hang" ? 200ms : 5s).kind);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::reply, Kind::fault, Kind::reply, Kind::timeout, Kind::reply, Kind::fault,
                                      Kind::fault, Kind::reply}));
  EXPECT_EQ(sup.workers_started(), 5);
}

TEST_F(SweepSupervisor, WorkerThatCannotStartIsAnError) {
  auto expect_start_error = [&](const char* body, const char* mention) {
    auto sup = make(body);
    try {
      sup.request(req("ok"), 5s);
      ADD_FAILURE() << "accepted a worker that did not start: " << body;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    }
  };
  expect_start_error("read l; echo '{\"ready\":false,\"error\":\"no device 3\"}'", "no device 3");
  expect_start_error("echo 'cannot open' >&2; exit 4", "exit code 4");
  expect_start_error("read l; echo 'cannot open' >&2; exit 4", "cannot open");
  expect_start_error("read l; echo '[1]'", "[1]");
  Supervisor missing({"/nonexistent/ktune"}, json{{"op", "hello"}}, 5s);
  EXPECT_THROW(missing.request(req("ok"), 5s), Error);
}

TEST(SweepProcess, TerminateEndsTheWholeProcessGroup) {
  auto child = ChildProcess::spawn({"/bin/sh", "-c", "sleep 30 & echo $!; wait"});
  std::string line;
  ASSERT_EQ(child->read_line(line, Clock::now() + 5s), ChildProcess::Read::line);
  pid_t grandchild = std::stoi(line);
  ASSERT_EQ(::kill(grandchild, 0), 0) << "the grandchild should be running";
  auto status = child->terminate();
  EXPECT_EQ(status.signal, SIGKILL);
  // Reparented to init once its parent died; gone as soon as init reaps it.
  auto deadline = Clock::now() + 5s;
  while (::kill(grandchild, 0) == 0 && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_NE(::kill(grandchild, 0), 0) << "the grandchild survived its group's end";
}

TEST(SweepProcess, LongLinesTravelBothWays) {
  // Megabytes each way: code objects travel as lines, far beyond any pipe or socket buffer.
  auto counter = ChildProcess::spawn({"/bin/sh", "-c", "head -n 1 | wc -c"});
  ASSERT_TRUE(counter->send_line(std::string(3 << 20, 'x'), Clock::now() + 10s));
  std::string line;
  ASSERT_EQ(counter->read_line(line, Clock::now() + 10s), ChildProcess::Read::line);
  EXPECT_EQ(std::stol(line), (3 << 20) + 1);
  EXPECT_TRUE(counter->finish(5s).clean());

  auto talker = ChildProcess::spawn({"/bin/sh", "-c", "head -c 3145728 /dev/zero | tr '\\0' x; echo; echo second"});
  ASSERT_EQ(talker->read_line(line, Clock::now() + 10s), ChildProcess::Read::line);
  EXPECT_EQ(line, std::string(3 << 20, 'x'));
  ASSERT_EQ(talker->read_line(line, Clock::now() + 10s), ChildProcess::Read::line);
  EXPECT_EQ(line, "second");
  EXPECT_EQ(talker->read_line(line, Clock::now() + 10s), ChildProcess::Read::closed);
}

}  // namespace
}  // namespace ktune::sweep
