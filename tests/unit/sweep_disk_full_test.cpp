// A sweep whose disk fills up (db_full_disk.hpp) stops with an error that names the database and
// says the disk is full and how many results the run kept; it leaves no worker behind, the file
// is intact with every row recorded before, and once there is space `--resume` ends with what an
// uninterrupted sweep records.
#include <sys/wait.h>

#include <cerrno>
#include <regex>

#include "db_full_disk.hpp"
#include "sweep_child_support.hpp"

namespace ktune::sweep {
namespace {
using testing::rows_of;

TEST(SweepDiskFull, StopsSayingSoAndKeepsWhatItRecorded) {
  testing::FullDiskVfs disk;
  testing::ChildSweep sweep;
  const auto path = sweep.tmp.file("tune.db");
  const auto space = sweep.space({32, 16, 12, 8});
  sweep.run(path, sweep.space({4}), /*resume=*/false);
  const auto earlier = rows_of(*db::Database::open(path, false));
  ASSERT_FALSE(earlier.empty());

  disk.fill_after(48 * 1024);
  std::string error;
  try {
    sweep.run(path, space, /*resume=*/false);
  } catch (const Error& e) {
    error = e.what();
  }
  ASSERT_FALSE(error.empty()) << "a sweep whose database cannot grow must stop";
  EXPECT_NE(error.find(path + ": "), std::string::npos) << error;
  EXPECT_NE(error.find("disk full: no space left"), std::string::npos) << error;
  std::smatch said;
  ASSERT_TRUE(std::regex_search(error, said, std::regex("run ([0-9]+) keeps the ([0-9]+) results"))) << error;
  const int64_t run = std::stoll(said[1]);
  const size_t kept = std::stoul(said[2]);
  EXPECT_GT(kept, 0u) << "the budget lets a few results in before the disk is full";
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD) << "the sweep's worker must be ended and reaped";

  disk.fill_after(-1);  // space freed
  EXPECT_EQ(testing::damage_of(path), "");
  {
    auto db = db::Database::open(path, false);
    auto all = rows_of(*db);
    EXPECT_EQ(all.size(), earlier.size() + kept) << "every row recorded before the disk filled up is there";
    EXPECT_EQ(rows_of(*db, run).size(), kept) << "the error says how many results the run kept";
  }

  sweep.run(path, space, /*resume=*/true);
  sweep.run(sweep.tmp.file("uninterrupted.db"), space, /*resume=*/false);
  EXPECT_EQ(rows_of(*db::Database::open(path, false), run),
            rows_of(*db::Database::open(sweep.tmp.file("uninterrupted.db"), false)))
      << "resumed once there is space, the run ends with what an uninterrupted sweep records";
}

}  // namespace
}  // namespace ktune::sweep
