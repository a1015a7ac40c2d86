// `ktune merge`: copies the runs of several tuning databases (the shards of a job array, the
// sweeps of several nodes), with their measurements and gaps, into one, in one transaction.
// A refusal leaves every file as it was: the inputs are only read, an older output is refused
// before it is opened for writing, and a new output is removed when the merge fails. Merging an
// input again adds nothing (runs are known by their uid).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "db/database.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {
namespace fs = std::filesystem;

struct MergeOptions {
  std::string db;
  std::vector<std::string> inputs;
};

// An output that exists must be a ktune database of this version already: opening it for writing
// would migrate it before the merge could be refused.
void check_output(const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec) && fs::file_size(path, ec) > 0) db::Database::open(path, false, /*read_only=*/true);
}

// The output file and SQLite's files beside it, removed after a failed merge into a new file.
void remove_new_output(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
}

void run(const MergeOptions& o) {
  check_output(o.db);
  std::error_code ec;
  const bool created = !fs::exists(o.db, ec);
  db::MergeCounts counts;
  try {
    counts = db::Database::open(o.db, /*create=*/true)->merge(o.inputs);
  } catch (const Error&) {
    if (created) remove_new_output(o.db);
    throw;
  }
  if (globals().quiet) return;
  std::string rows;
  for (const auto& [table, n] : counts.rows) rows += fmt::format(", {} {}", n, table);
  fmt::print("merge: {} input(s) into {}: {} run(s) added, {} already there{}\n", o.inputs.size(), o.db, counts.runs,
             counts.runs_known, rows);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  auto* cmd = app.add_subcommand(
      "merge", "Copy the runs, measurements and gaps of tuning databases into one, in one transaction "
               "(merging an input again adds nothing)");
  cmd->add_option("--db", o->db, "Tuning database to merge into (created when absent)")->required();
  cmd->add_option("inputs", o->inputs, "Tuning databases to copy from (read, never written)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->callback([o] { run(*o); });
}

KTUNE_VERB(75, setup);

}  // namespace
}  // namespace ktune::cli
