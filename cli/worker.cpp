// `ktune worker`: the process a sweep runs its candidates in (tuner/sweep/worker.hpp). Started
// by `ktune sweep`, never by hand; hidden from --help.
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "number_checks.hpp"
#include "sweep/worker.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

void run(const sweep::WorkerSetup& setup) {
  // The protocol owns the original stdout; anything else writing to stdout (a vendor library,
  // a stray print) lands on stderr, where the sweep keeps it for its fault reports.
  const int protocol_out = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  std::exit(sweep::serve_worker(STDIN_FILENO, protocol_out, setup));
}

void setup(CLI::App& app) {
  auto o = std::make_shared<sweep::WorkerSetup>();
  auto* cmd = app.add_subcommand("worker", "Run candidates for a sweep (started by ktune sweep)");
  cmd->group("");  // hidden
  cmd->add_option("--backend", o->backend, "cuda or hip")->required();
  cmd->add_option("--device", o->device, "Device ordinal; without it the worker only compiles")
      ->check(decimal_within(0, 1023));
  cmd->add_option("--parent-pid", o->parent_pid, "The sweep's pid: a device worker that has another parent exits");
  cmd->callback([o] { run(*o); });
}

KTUNE_VERB(90, setup);

}  // namespace
}  // namespace ktune::cli
