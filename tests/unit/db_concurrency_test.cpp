// Two writers sharing one file (two sweeps on one host): WAL plus the busy timeout must make
// every commit land, whether the writers are threads or processes.
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "db_test_support.hpp"

namespace ktune::db {
namespace {

constexpr int per_writer = 150;

// Records `per_writer` measurements and one gap through its own connection; "" or the error.
std::string write_batch(const std::string& path, int64_t run, int writer) {
  try {
    auto db = Database::open(path, false);
    for (int i = 0; i < per_writer; ++i) db->record(test::timed(run, test::key(8 + writer), test::config(i), 10 + i));
    Gap g;
    g.family = "mla_decode";
    g.arch = "sm_90a";
    g.key = test::key(100 + writer);
    g.reason = GapReason::no_config;
    g.source = "measured";
    g.run_id = run;
    db->add_gap(g);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

void expect_nothing_lost(const std::string& path, int writers) {
  auto db = Database::open(path, false, true);
  EXPECT_EQ(db->measurements().size(), static_cast<size_t>(writers * per_writer));
  EXPECT_EQ(db->gaps().size(), static_cast<size_t>(writers));
  for (int w = 0; w < writers; ++w) {
    Filter f;
    f.key_equals = {{"heads", 8 + w}};
    EXPECT_EQ(db->measurements(f).size(), static_cast<size_t>(per_writer)) << "writer " << w;
  }
}

TEST(DbConcurrency, TwoThreadsWritingLoseNothing) {
  test::TempDir dir;
  const auto path = dir.file("shared.db");
  const auto run = Database::open(path, true)->begin_run(test::sample_run());
  std::string errors[2];
  std::thread a([&] { errors[0] = write_batch(path, run, 0); });
  std::thread b([&] { errors[1] = write_batch(path, run, 1); });
  a.join();
  b.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  expect_nothing_lost(path, 2);
}

TEST(DbConcurrency, TwoProcessesWritingLoseNothing) {
  test::TempDir dir;
  const auto path = dir.file("shared.db");
  const auto run = Database::open(path, true)->begin_run(test::sample_run());
  std::vector<pid_t> children;
  for (int w = 0; w < 2; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(write_batch(path, run, w).empty() ? 0 : 1);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer process failed";
  }
  expect_nothing_lost(path, 2);
}

}  // namespace
}  // namespace ktune::db
