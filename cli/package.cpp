// `ktune package`: database -> the code objects of every winner for one arch, the dispatch header,
// the header that maps its kernels to code objects and symbols, and a manifest with hashes
// (dispatch/package.hpp).
#include "dispatch/package.hpp"

#include <fmt/format.h>

#include <string>

#include "backend/backend.hpp"
#include "cache_options.hpp"
#include "common/error.hpp"
#include "db/database.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/template_lineage.hpp"
#include "number_checks.hpp"
#include "space_options.hpp"
#include "sweep/process_compiler.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct PackageOptions {
  std::string db, kernel, arch, device, compiler, out;
  bool allow_stale = false;
  CacheOptions cache;
  int jobs = 0;
};

void run_package(const PackageOptions& o) {
  const auto& fam = family(o.kernel);
  dispatch::code_object_extension(o.arch);  // an unknown arch is refused before anything else
  backend::Backend& b = backend::for_arch(o.arch);
  if (!b.compiler_available(o.arch))
    throw Unavailable(fmt::format("cannot compile for {}: {}", o.arch, b.compiler_unavailable_reason(o.arch)));
  dispatch::PackageRequest req;
  req.table.arch = o.arch;
  if (!o.device.empty()) req.table.device = o.device;
  if (!o.compiler.empty()) req.table.compiler = o.compiler;
  req.table.allow_stale = o.allow_stale;
  req.table.template_hash = jit::template_hash(fam.template_file());
  req.table.adoptable = adoptable_template_hashes(fam);
  req.out_dir = o.out;
  req.jobs = o.jobs;
  const auto cache = open_cache(o.cache);
  req.cache = cache.get();
  const auto compiler = sweep::compiler_for(b, o.arch, compile_worker_command(b));
  auto db = db::Database::open(o.db, /*create=*/false, /*read_only=*/true);
  const auto p = dispatch::write_package(*db, fam, *compiler, req);
  for (const auto& tuned : p.tuned_compiler_versions)
    if (tuned != p.compiler_version)
      fmt::print(stderr,
                 "warning: results timed with code from {} are packaged compiled by {}: the code may differ from "
                 "what won (sweep again with this compiler, or package where that one is)\n",
                 tuned, p.compiler_version);
  warn_failed_cache_writes(p.cache_writes_failed, req.cache);
  for (const auto& why : p.not_removed)
    fmt::print(stderr, "warning: a code object of the package replaced could not be removed: {}\n", why);
  if (globals().quiet) return;
  fmt::print("wrote {}: package of {} for {} ({}, template hash {}): {} code object(s), {} file(s) + {}\n", o.out,
             p.family, p.arch, p.compiler_version, p.template_hash, p.code_objects.size(), p.files.size(),
             dispatch::kManifestFile);
  for (const auto& f : p.files) fmt::print("  {}  {} bytes  xxh64 {}\n", f.path, f.bytes, f.xxh64);
  for (const auto& f : p.removed_code_objects) fmt::print("  removed {} (of the package replaced)\n", f);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<PackageOptions>();
  auto* cmd = app.add_subcommand(
      "package", "Compile the winners of a database for one arch into code objects, with the dispatch header, "
                 "the code-object header and a manifest");
  cmd->add_option("--db", o->db, "Tuning database (SQLite) to read")->required()->check(CLI::ExistingFile);
  cmd->add_option("--kernel", o->kernel, "Kernel family, e.g. mla_decode")->required();
  cmd->add_option("--arch", o->arch, "Target, e.g. sm_90a (cubin) or gfx90a (hsaco)")->required();
  cmd->add_option("--device", o->device, "Take results of this device name only (needed when several exist)");
  cmd->add_option("--compiler", o->compiler, "Take results of this compiler version only (needed when several exist)");
  cmd->add_flag("--allow-stale", o->allow_stale,
                "Use results measured with other templates than the current ones (template hash differs)");
  cmd->add_option("--out", o->out, "Package directory to write (created when absent)")->required();
  cmd->add_option("--jobs", o->jobs, "Compiling threads (default: one per core)")->check(decimal_within(0, 4096));
  add_cache_options(*cmd, o->cache);
  cmd->callback([o] { run_package(*o); });
}

KTUNE_VERB(75, setup);

}  // namespace
}  // namespace ktune::cli
