// `ktune devices`: the backends in this binary, whether their compilers and runtimes work here
// (and why not), and each device with its limits and its measured roofs: copy bandwidth and
// matrix-core throughput (bench/matrix_probe.hpp; well under a second per device).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "backend/backend.hpp"
#include "bench/matrix_probe.hpp"
#include "bench/roofline.hpp"
#include "common/error.hpp"
#include "db_output.hpp"
#include "kernels/family.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

using Json = nlohmann::ordered_json;

struct DevicesOptions {
  bool json = false;
  bool no_bandwidth = false;  // no roofs measured
  bool first_arch = false;    // for scripts: the first device's arch, or nothing
  bool first_slug = false;    // for scripts: a directory name for the first device ("nvidia-h200")
};

// "NVIDIA H200" -> "nvidia-h200": lower case, runs of anything else than [a-z0-9] become one '-'.
std::string slug(std::string_view name) {
  std::string s;
  for (char c : name) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9'))
      s += l;
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

// Prints the first available device's arch or slug; prints nothing (exit 0) when there is none.
void print_first(bool arch) {
  for (const backend::Backend* b : backend::all()) {
    if (!b->available() || b->device_count() == 0) continue;
    const backend::DeviceInfo d = b->device_info(0);
    fmt::print("{}\n", arch ? d.arch : slug(d.name));
    return;
  }
}

Json device_record(const backend::Backend& b, int ordinal, bool roofs) {
  const backend::DeviceInfo d = b.device_info(ordinal);
  Json r = {{"ordinal", d.ordinal},
            {"name", d.name},
            {"arch", d.arch},
            {"compute_units", d.compute_units},
            {"warp_size", d.warp_size},
            {"l2_bytes", d.l2_bytes},
            {"last_level_cache_bytes", d.last_level_cache_bytes()},
            {"memory_bytes", d.memory_bytes},
            {"shared_per_block", d.shared_per_block},
            {"shared_per_block_optin", d.shared_per_block_optin},
            {"clock_khz", d.clock_khz}};
  if (!roofs) return r;
  // One device that cannot be measured does not hide the others; one roof that cannot be
  // measured does not hide the other.
  std::unique_ptr<backend::Context> ctx;
  auto roof = [&](const char* field, const char* error_field, auto&& measure) {
    try {
      if (!ctx) ctx = b.open(ordinal);
      r[field] = measure(*ctx);
    } catch (const Error& e) {
      r[field] = nullptr;
      r[error_field] = e.what();
    }
  };
  roof("copy_gbps", "copy_error", [](backend::Context& c) { return bench::measure_copy_gbps(c); });
  r["matrix_probe"] = bench::matrix_instruction(d.arch).name;  // as runs.matrix_probe names it
  roof("matrix_tflops", "matrix_error", [&](backend::Context& c) { return bench::measure_matrix_tflops(b, c); });
  return r;
}

// Per target the backend compiles for: each compiler it has, whether it builds the target (else
// why not) and which one it chooses. identity: what code-object cache keys hold of the chosen
// compiler (a cache seeded on another machine serves here only where this matches).
Json compilers_record(const backend::Backend& b) {
  Json targets = Json::array();
  for (const std::string& arch : known_target_archs()) {
    if (!b.handles_arch(arch)) continue;
    Json compilers = Json::array();
    for (const backend::CompilerStatus& c : b.compilers(arch)) {
      Json one = {{"name", c.name}, {"chosen", c.chosen}, {"available", c.why_not.empty()}};
      if (!c.version.empty()) one["version"] = c.version;
      if (!c.why_not.empty()) one["reason"] = c.why_not;
      if (c.chosen) one["identity"] = b.compiler_identity(arch);
      compilers.push_back(std::move(one));
    }
    targets.push_back({{"arch", arch}, {"compilers", std::move(compilers)}});
  }
  return targets;
}

Json backend_record(const backend::Backend& b, bool roofs) {
  Json r = {{"name", b.name()}};
  r["targets"] = compilers_record(b);
  r["runtime"] = b.available() ? Json{{"available", true}, {"driver", b.driver_version()}}
                               : Json{{"available", false}, {"reason", b.unavailable_reason()}};
  // Which files are in use: on a machine with several ROCm (or CUDA) installs, the one that loaded.
  if (const auto file = b.compiler_library(); !file.empty()) r["compiler"]["library"] = file;
  if (const auto file = b.runtime_library(); !file.empty()) r["runtime"]["library"] = file;
  r["devices"] = Json::array();
  for (int i = 0; i < b.device_count(); ++i) r["devices"].push_back(device_record(b, i, roofs));
  return r;
}

std::string bytes_text(int64_t bytes) {
  constexpr double kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  const double b = static_cast<double>(bytes);
  if (b >= kGiB) return fmt::format("{:.1f} GiB", b / kGiB);
  if (b >= kMiB) return fmt::format("{:.1f} MiB", b / kMiB);
  return fmt::format("{:.0f} KiB", b / kKiB);
}

std::string status_text(const Json& part, const char* detail) {
  const std::string text = part["available"].get<bool>() ? part[detail].get<std::string>()
                                                         : "unavailable: " + part["reason"].get<std::string>();
  return part.contains("library") ? fmt::format("{}\n            library {}", text, part["library"].get<std::string>())
                                  : text;
}

void print_human(const Json& backends) {
  std::vector<Record> rows;
  for (const Json& b : backends) {
    const std::string name = b["name"];
    fmt::print("{}\n  runtime:  {}\n  compilers:\n", name, status_text(b["runtime"], "driver"));
    for (const Json& t : b["targets"]) {
      std::vector<std::string> each;
      for (const Json& c : t["compilers"])
        each.push_back(
            c["available"].get<bool>()
                ? fmt::format("{}{}", c["version"].get<std::string>(), c["chosen"].get<bool>() ? " (chosen)" : "")
                : fmt::format("{}: cannot: {}", c["name"].get<std::string>(), c["reason"].get<std::string>()));
      fmt::print("    {}: {}\n", t["arch"].get<std::string>(), fmt::join(each, "; "));
    }
    for (const Json& d : b["devices"]) {
      Record row = {{"backend", name},
                    {"#", d["ordinal"]},
                    {"name", d["name"]},
                    {"arch", d["arch"]},
                    {"CUs", d["compute_units"]},
                    {"warp", d["warp_size"]},
                    {"L2 (last level)",
                     fmt::format("{} ({})", bytes_text(d["l2_bytes"]), bytes_text(d["last_level_cache_bytes"]))},
                    {"memory", bytes_text(d["memory_bytes"])},
                    {"shared/block (opt-in)", fmt::format("{} ({})", bytes_text(d["shared_per_block"]),
                                                          bytes_text(d["shared_per_block_optin"]))},
                    {"clock", fmt::format("{} MHz", d["clock_khz"].get<int>() / 1000)}};
      if (d.contains("copy_gbps"))
        row["copy GB/s"] = d["copy_gbps"].is_null() ? "failed: " + d["copy_error"].get<std::string>()
                                                    : fmt::format("{:.0f}", d["copy_gbps"].get<double>());
      if (d.contains("matrix_tflops"))
        row["matrix TFLOP/s"] = d["matrix_tflops"].is_null()
                                    ? "failed: " + d["matrix_error"].get<std::string>()
                                    : fmt::format("{:.0f} ({} peak)", d["matrix_tflops"].get<double>(),
                                                  d["matrix_probe"].get<std::string>());
      rows.push_back(std::move(row));
    }
  }
  fmt::print("\n");
  if (rows.empty()) {
    fmt::print("no GPU devices on this machine\n");
    return;
  }
  std::cout.flush();
  print_records(std::cout, rows, "table");
}

void run_devices(const DevicesOptions& o) {
  if (o.first_arch || o.first_slug) return print_first(o.first_arch);
  Json backends = Json::array();
  for (const backend::Backend* b : backend::all()) backends.push_back(backend_record(*b, !o.no_bandwidth));
  if (o.json) {
    fmt::print("{}\n", Json{{"backends", backends}}.dump(2));
    return;
  }
  print_human(backends);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<DevicesOptions>();
  auto* cmd = app.add_subcommand(
      "devices", "List backends, compilers, runtimes and devices (with copy bandwidth and matrix-core throughput)");
  auto* json = cmd->add_flag("--json", o->json, "Print JSON instead of a table");
  cmd->add_flag("--no-bandwidth", o->no_bandwidth,
                "Skip the measurements: device-to-device copy bandwidth and matrix-core throughput");
  auto* arch =
      cmd->add_flag("--first-arch", o->first_arch, "Print only the first device's arch (nothing without a device)")
          ->excludes(json);
  cmd->add_flag("--first-slug", o->first_slug, "Print only a directory name for the first device")
      ->excludes(arch)
      ->excludes(json);
  cmd->callback([o] { run_devices(*o); });
}

}  // namespace

KTUNE_VERB(10, setup);

}  // namespace ktune::cli
