// `ktune migrate`: brings a tuning database written by an older ktune to this ktune's schema, so
// that its readers, which never write (query, gaps, codegen, package, the runtime's KTUNE_DB),
// can read it.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "db/database.hpp"
#include "db/migrations.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

void run_migrate(const std::string& path) {
  const int latest = db::Database::current_schema_version();
  const int found = db::Database::migrate_file(path);
  if (globals().quiet) return;
  if (found == latest) {
    fmt::print("{}: at schema version {} already; no migration needed\n", path, latest);
    return;
  }
  fmt::print("{}: schema version {} -> {}\n", path, found, latest);
  for (const auto& step : db::migrations())
    if (step.version > found) fmt::print("  {}: {}\n", step.version, step.what);
}

void setup(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "migrate", "Bring a tuning database to this ktune's schema version (in one transaction; older ktune builds "
                 "cannot read it afterwards)");
  cmd->add_option("--db", *path, "Tuning database (SQLite) to migrate")->required()->check(CLI::ExistingFile);
  cmd->callback([path] { run_migrate(*path); });
}

KTUNE_VERB(80, setup);

}  // namespace
}  // namespace ktune::cli
