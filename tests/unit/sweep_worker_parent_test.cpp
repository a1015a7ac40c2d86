// A device worker dies with its sweep (PR_SET_PDEATHSIG); a sweep that died before the worker set
// that up sends no signal, so the worker compares its parent with the sweep's pid and leaves.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <stdexcept>

#include <gtest/gtest.h>

#include "sweep/worker.hpp"

namespace ktune::sweep {
namespace {

// Serves as a device worker in a process started by `spawner`, a process that either ends at once
// (the sweep died before the worker ran) or waits. The worker's input stays open, so a worker that
// does not leave by itself blocks reading it. Returns serve_worker()'s status, or nothing while
// the worker is still serving after `wait_ms`.
std::optional<int> serve_as_orphan(bool spawner_dies, int wait_ms) {
  int input[2], result[2];
  if (::pipe(input) != 0 || ::pipe(result) != 0) throw std::runtime_error("pipe failed");
  const pid_t spawner = ::fork();
  if (spawner < 0) throw std::runtime_error("fork failed");
  if (spawner == 0) {
    const pid_t sweep = ::getpid();
    const pid_t worker = ::fork();
    if (worker == 0) {
      ::close(input[1]);
      ::close(result[0]);
      if (spawner_dies)
        while (::getppid() == sweep) ::usleep(1000);  // adopted: the sweep is gone
      const int out = ::open("/dev/null", O_WRONLY);
      const int status = serve_worker(input[0], out, WorkerSetup{"cuda", 0, sweep});
      (void)!::write(result[1], &status, sizeof status);
      ::_exit(0);
    }
    for (int fd : {input[0], input[1], result[0], result[1]}) ::close(fd);  // the worker's alone now
    if (!spawner_dies) ::waitpid(worker, nullptr, 0);
    ::_exit(0);
  }
  ::close(input[0]);
  ::close(result[1]);
  pollfd fd{result[0], POLLIN, 0};
  std::optional<int> status;
  if (::poll(&fd, 1, wait_ms) == 1) {
    int s = 0;
    if (::read(result[0], &s, sizeof s) == sizeof s) status = s;
  }
  ::close(input[1]);  // the end of its input ends a worker still serving
  ::waitpid(spawner, nullptr, 0);
  ::close(result[0]);
  return status;
}

TEST(SweepWorkerParent, WorkerWhoseSweepIsAlreadyGoneLeaves) {
  EXPECT_EQ(serve_as_orphan(/*spawner_dies=*/true, 5000), kParentGoneStatus)
      << "an orphaned device worker must not wait for requests that never come";
}

TEST(SweepWorkerParent, WorkerOfALiveSweepServes) {
  EXPECT_EQ(serve_as_orphan(/*spawner_dies=*/false, 300), std::nullopt)
      << "with its sweep alive the worker waits for requests";
}

}  // namespace
}  // namespace ktune::sweep
