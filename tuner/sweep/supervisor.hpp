#pragma once
// Parent side of worker isolation: sends one JSON request at a time to a worker process and
// waits for its JSON reply. A worker that dies, answers garbage or overruns its time is killed
// and reaped, the outcome says so, and the next request starts a fresh worker: one bad
// candidate never ends a sweep.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/process.hpp"

namespace ktune::sweep {

struct WorkerOutcome {
  enum class Kind { reply, fault, timeout };
  Kind kind = Kind::reply;
  nlohmann::json reply;  // Kind::reply: the worker's answer
  std::string detail;    // fault / timeout: what happened, with the end of the worker's stderr
  bool died = false;     // fault: the worker exited or was killed without answering
};

class Supervisor {
 public:
  // `argv` starts a worker; `hello` is the first request to each new worker, which must answer
  // {"ready": true, ...} within `start_timeout`.
  Supervisor(std::vector<std::string> argv, nlohmann::json hello, std::chrono::duration<double> start_timeout);
  ~Supervisor();

  // Sends `request` to the live worker (starting one first when needed) and waits up to
  // `timeout` for its reply. A reply with "fatal": true (the worker saw a device fault and
  // exits) retires the worker. Throws Error when a new worker does not start: no candidate
  // could run then.
  WorkerOutcome request(const nlohmann::json& request, std::chrono::duration<double> timeout);

  // Starts a worker unless one is running; returns its hello reply. Throws Error as request().
  const nlohmann::json& ensure_started();
  // The hello reply of the latest worker (null before the first request).
  const nlohmann::json& hello_reply() const noexcept { return hello_reply_; }
  int workers_started() const noexcept { return started_; }
  // The first request to each worker started from now on.
  void set_hello(nlohmann::json hello) { hello_ = std::move(hello); }

 private:
  void start();
  // Ends the current worker (after `grace` for it to exit by itself) and describes how it ended.
  std::string retire(std::string_view what, std::chrono::milliseconds grace);

  std::vector<std::string> argv_;
  nlohmann::json hello_;
  std::chrono::duration<double> start_timeout_;
  std::unique_ptr<ChildProcess> worker_;
  nlohmann::json hello_reply_;
  int started_ = 0;
};

}  // namespace ktune::sweep
