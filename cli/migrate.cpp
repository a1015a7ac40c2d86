// `ktune migrate`: brings a tuning database written by an older ktune to this ktune's schema, so
// that its readers, which never write (query, gaps, codegen, package, the runtime's KTUNE_DB),
// can read it; and gives the runs that measured today's kernels under an older template hash (the
// whole-source one of older ktune builds, or that of a family's earlier templates of the same
// machine code) today's hash, so that the validators accept them.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/migrations.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/template_lineage.hpp"
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

// A run stays stale under its old hash only when its kernels differ from today's: the source hash
// of today's templates names the runs that measured them byte for byte, a family's equivalent
// templates those that measured the same machine code (kernels/template_lineage.hpp). All
// families' adoptions are one transaction. Returns how many runs it gave today's hash.
int adopt_template_hashes(const std::string& path) {
  std::vector<db::HashAdoption> adoptions;
  std::vector<AdoptableHash> why;
  for (const Family* f : families())
    for (auto& h : adoptable_template_hashes(*f)) {
      adoptions.push_back({std::string(f->name()), h.from, jit::template_hash(f->template_file())});
      why.push_back(std::move(h));
    }
  if (adoptions.empty()) return 0;
  const auto changed = db::Database::open(path, /*create=*/false)->adopt_template_hashes(adoptions);
  int adopted = 0;
  for (size_t i = 0; i < adoptions.size(); ++i) {
    adopted += changed[i];
    if (changed[i] > 0 && !globals().quiet)
      fmt::print("{}: {} run(s) of {} under template hash {} measured {}: template hash now {}\n", path, changed[i],
                 adoptions[i].family, adoptions[i].from, describe(why[i]), adoptions[i].to);
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
      "afterwards), and give runs of today's kernels recorded under an older template hash (that of older ktune "
      "builds, or of earlier templates of the same machine code) today's hash");
  cmd->add_option("--db", *path, "Tuning database (SQLite) to migrate")->required()->check(CLI::ExistingFile);
  cmd->callback([path] { run_migrate(*path); });
}

KTUNE_VERB(80, setup);

}  // namespace
}  // namespace ktune::cli
