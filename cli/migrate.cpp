// `ktune migrate`: brings a tuning database written by an older ktune to this ktune's schema, so
// that its readers, which never write (query, gaps, codegen, package, the runtime's KTUNE_DB),
// can read it; and gives the runs that measured today's templates under the template hash of
// before the code-only one (jit::source_hash) today's hash, so that the validators accept them.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "db/database.hpp"
#include "db/migrations.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

// Returns whether the file's schema was older.
bool migrate_schema(const std::string& path) {
  const int latest = db::Database::current_schema_version();
  const int found = db::Database::migrate_file(path);
  if (found == latest) return false;
  if (!globals().quiet) {
    fmt::print("{}: schema version {} -> {}\n", path, found, latest);
    for (const auto& step : db::migrations())
      if (step.version > found) fmt::print("  {}: {}\n", step.version, step.what);
  }
  return true;
}

// A run stays stale under its old hash only when its templates differ from today's: the source
// hash of today's templates names exactly the runs that measured them, byte for byte. Returns how
// many runs it gave today's hash.
int adopt_template_hashes(const std::string& path) {
  auto db = db::Database::open(path, /*create=*/false);
  int adopted = 0;
  for (const Family* f : families()) {
    const std::string from = jit::source_hash(f->template_file()), to = jit::template_hash(f->template_file());
    if (from == to) continue;  // (code_text left the source as it was: nothing to tell apart)
    const int n = db->adopt_template_hash(std::string(f->name()), from, to);
    adopted += n;
    if (n > 0 && !globals().quiet)
      fmt::print("{}: {} run(s) of {} measured today's templates under their whole-source hash {} (ktune's "
                 "template hash before it left comments out): template hash now {}\n",
                 path, n, f->name(), from, to);
  }
  return adopted;
}

void run_migrate(const std::string& path) {
  const bool schema = migrate_schema(path);
  if (adopt_template_hashes(path) == 0 && !schema && !globals().quiet)
    fmt::print("{}: at schema version {} already, and no run of today's templates is under an older hash: nothing "
               "to migrate\n",
               path, db::Database::current_schema_version());
}

void setup(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "migrate",
      "Bring a tuning database to this ktune's schema version (in one transaction; older ktune builds cannot read it "
      "afterwards), and give runs of today's templates recorded under the template hash of older ktune builds "
      "today's hash");
  cmd->add_option("--db", *path, "Tuning database (SQLite) to migrate")->required()->check(CLI::ExistingFile);
  cmd->callback([path] { run_migrate(*path); });
}

KTUNE_VERB(80, setup);

}  // namespace
}  // namespace ktune::cli
