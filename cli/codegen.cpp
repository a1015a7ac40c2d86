// `ktune codegen`: database -> self-contained C++17 dispatch header of one kernel family.
#include "dispatch/codegen.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "dispatch/table.hpp"
#include "dispatch/write_file.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/template_lineage.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct CodegenOptions {
  std::string db, kernel, arch, device, compiler, out;
  bool allow_stale = false;
};

std::optional<std::string> given(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

void run_codegen(const CodegenOptions& o) {
  const auto& fam = family(o.kernel);
  dispatch::Request req;
  req.arch = given(o.arch);
  req.device = given(o.device);
  req.compiler = given(o.compiler);
  req.allow_stale = o.allow_stale;
  req.template_hash = jit::template_hash(fam.template_file());
  req.adoptable = adoptable_template_hashes(fam);
  auto db = db::Database::open(o.db, /*create=*/false, /*read_only=*/true);
  const auto table = dispatch::build_table(*db, fam, req);
  dispatch::write_file_atomically(o.out, dispatch::render_header(table));
  if (globals().quiet) return;
  fmt::print("wrote {}: dispatch table of {} for {} arch(es)\n", o.out, table.family, table.arches.size());
  for (const auto& a : table.arches) {
    std::vector<int64_t> run_ids;
    for (const auto& r : a.runs) run_ids.push_back(r.id);
    fmt::print(
        "  {}: {} entries ({} kernel(s), {} gap(s)) from run(s) {}\n", a.arch, a.entries.size(), a.kernels(), a.gaps(),
        run_ids.empty() ? std::string("none (declared gaps only)") : fmt::format("{}", fmt::join(run_ids, ", ")));
    for (const auto& d : a.ignored_declarations)
      fmt::print("  note: declared gap of {{{}}} ignored: measured to work in run {} ({})\n", d.key.canonical(),
                 d.winner_run_id, d.source);
  }
}

void setup(CLI::App& app) {
  auto o = std::make_shared<CodegenOptions>();
  auto* cmd = app.add_subcommand("codegen", "Write the C++17 dispatch header of a kernel family from a database");
  cmd->add_option("--db", o->db, "Tuning database (SQLite) to read")->required()->check(CLI::ExistingFile);
  cmd->add_option("--kernel", o->kernel, "Kernel family, e.g. mla_decode")->required();
  cmd->add_option("--arch", o->arch, "Only this arch (default: every arch the database has)");
  cmd->add_option("--device", o->device, "Take results of this device name only (needed when several exist)");
  cmd->add_option("--compiler", o->compiler, "Take results of this compiler version only (needed when several exist)");
  cmd->add_flag("--allow-stale", o->allow_stale,
                "Use results measured with other templates than the current ones (template hash differs)");
  cmd->add_option("--out", o->out, "Header to write (atomically: temporary file + rename)")->required();
  cmd->callback([o] { run_codegen(*o); });
}

KTUNE_VERB(70, setup);

}  // namespace
}  // namespace ktune::cli
