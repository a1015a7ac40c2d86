// `ktune report`: one self-contained HTML page (inline SVG, no script, no network) that draws a
// database, or two and their diff: per family the key space by fraction of the binding roof, the
// roofline of the winners, the tuning gain per key and where the sweep's time went.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "db/diff.hpp"
#include "db_options.hpp"
#include "report_page.hpp"
#include "report_svg.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> dbs;
  std::string out;
  std::string kernel, arch, device;
};

db::Filter filter_of(const ReportOptions& o) {
  db::Filter f;
  if (!o.kernel.empty()) f.family = o.kernel;
  if (!o.arch.empty()) f.arch = o.arch;
  if (!o.device.empty()) f.device_name = o.device;
  return f;
}

// Writes `text` to `path` through a temporary file, so that a reader never sees half a page and a
// failed write leaves an earlier page whole. Refuses to replace a SQLite database (a slip of --out).
void write_atomically(const std::string& path, const std::string& text) {
  {
    std::ifstream existing(path, std::ios::binary);
    char magic[16] = {};
    if (existing.read(magic, sizeof magic) && std::string(magic, 15) == "SQLite format 3")
      throw Error(fmt::format("--out {} is a SQLite database; not replacing it with a report", path));
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error(fmt::format("cannot write {}", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(fmt::format("cannot write {}: {}", path, ec.message()));
  }
}

void run_report(const ReportOptions& o) {
  std::vector<std::unique_ptr<db::Database>> dbs;
  for (const auto& path : o.dbs) dbs.push_back(db::Database::open(path, /*create=*/false, /*read_only=*/true));
  const auto filter = filter_of(o);
  // Per database, its families' outcomes and measurements, in the order of the command line.
  std::vector<std::map<std::string, db::Outcomes>> outcomes(dbs.size());
  std::string body, toc;
  for (size_t i = 0; i < dbs.size(); ++i) {
    const auto names = db::families_in(*dbs[i], filter);
    if (names.empty())
      throw Error(fmt::format("{} holds no results{}", dbs[i]->path(), o.kernel.empty() ? "" : " of " + o.kernel));
    for (const auto& name : names) {
      const Family* fam = registered_family(name);
      if (fam == nullptr) {
        std::cerr << fmt::format("note: {}: kernel family '{}' is not one this ktune knows; left out\n", dbs[i]->path(),
                                 name);
        continue;
      }
      auto f = filter;
      f.family = name;
      const auto& o_ = outcomes[i].emplace(name, db::load_outcomes(*dbs[i], f)).first->second;
      body += report::family_sections(static_cast<int>(i + 1), o_, dbs[i]->measurements(f), *fam);
      toc += fmt::format("<li><a href=\"#family-{}-{}\">{}: {}</a></li>\n", i + 1, name, svg::escape(o.dbs[i]), name);
    }
  }
  if (dbs.size() == 2)
    for (const auto& [name, a] : outcomes[0]) {
      const auto b = outcomes[1].find(name);
      if (b == outcomes[1].end()) continue;
      const db::Diff d = db::diff(a, b->second);
      const auto& side = [](const db::Outcomes& x) {
        return fmt::format("{} ({})", x.path, x.runs.empty() ? std::string("no runs") : x.runs.back().device_name);
      };
      body += report::diff_section(d, family(name), side(a), side(b->second));
      toc += fmt::format("<li><a href=\"#diff-{}\">{}: B over A</a></li>\n", name, name);
    }
  std::vector<std::string> names;
  for (const auto& path : o.dbs) names.push_back(svg::escape(path));
  const std::string intro = fmt::format("<p>Written by ktune {} from {}.</p>\n<nav><ul>\n{}</ul></nav>\n",
                                        KTUNE_VERSION, fmt::join(names, " and "), toc);
  write_atomically(o.out, report::page("ktune report", intro, body));
  if (!globals().quiet) std::cerr << fmt::format("wrote {}\n", o.out);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Write one self-contained HTML page (inline SVG) of one or two databases");
  cmd->add_option("--db", o->dbs, "Tuning database; a second one adds the diff of the two (B over A)")
      ->required()
      ->expected(1, 2);
  cmd->add_option("--out", o->out, "HTML file to write, atomically (never replaces a SQLite database)")->required();
  cmd->add_option("--kernel", o->kernel, "Only this kernel family (default: every family of the databases)");
  cmd->add_option("--arch", o->arch, "Only results of this arch");
  cmd->add_option("--device", o->device, "Only results of this device name");
  cmd->callback([o] { run_report(*o); });
}

KTUNE_VERB(58, setup);

}  // namespace
}  // namespace ktune::cli
