#include "report_page.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "db/tuning_gain.hpp"
#include "report_svg.hpp"

namespace ktune::cli::report {
namespace {

using svg::escape;

// A time in µs in at most four characters' width.
std::string short_us(double us) {
  if (us < 10) return fmt::format("{:.2f}", us);
  if (us < 100) return fmt::format("{:.1f}", us);
  if (us < 10000) return fmt::format("{:.0f}", us);
  return fmt::format("{:.0f}k", us / 1000);
}

// The labels of the config's enum fields ("wgmma"; "token_head"): the winner's code path, which
// names what kind of kernel it is more than its tile sizes do.
std::string path_of(const Params& config, const Family& fam) {
  std::string out;
  for (const auto& spec : fam.config_fields())
    if (spec.is_enum())
      if (const auto v = config.find(spec.name)) out += (out.empty() ? "" : "/") + spec.format(*v);
  return out.empty() ? "-" : out;
}

std::string percent(const std::optional<double>& f) { return f ? fmt::format("{:.0f}%", *f * 100) : "-"; }

// Seconds since the epoch of "2026-12-07T13:02:38.001Z" (fraction optional); NaN if malformed.
double seconds_of(const std::string& ts) {
  std::tm tm{};
  double sec = 0;
  if (std::sscanf(ts.c_str(), "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &sec) != 6)
    return NAN;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + sec;
}

std::vector<Params> keys_of(const db::Outcomes& o) {
  std::vector<Params> keys;
  for (const auto& [key, outcome] : o.keys) keys.push_back(key);
  return keys;
}

std::string run_table(const db::Outcomes& o, const std::vector<db::Measurement>& ms) {
  std::map<int64_t, int> rows;
  for (const auto& m : ms) ++rows[m.run_id];
  std::string out =
      "<table><tr><th>run</th><th>started</th><th>device</th><th>arch</th><th>templates</th><th>copy GB/s</th>"
      "<th>matrix TFLOP/s</th><th>rows</th></tr>\n";
  for (const auto& r : o.runs)
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td><td>{}</td><td>{}</td></tr>\n", r.id,
        escape(r.started_at), escape(r.device_name), escape(r.arch), escape(r.template_hash), r.copy_gbps,
        r.matrix_tflops > 0 ? fmt::format("{:.0f} ({})", r.matrix_tflops, escape(db::matrix_probe_of(r))) : "-",
        rows[r.id]);
  return out + "</table>\n";
}

std::string key_space(const std::string& id, const db::Outcomes& o, const Family& fam, const svg::Axes& axes) {
  std::vector<svg::Cell> cells;
  for (const auto& [key, outcome] : o.keys) {
    svg::Cell c;
    c.key = key;
    const std::string name = key.pretty(fam.key_fields());
    if (outcome.winner) {
      const auto& m = outcome.winner->m;
      const auto frac = db::fraction_of_binding_roof(m);
      c.fill = frac ? svg::sequential(*frac) : "rgb(204,204,204)";
      c.line1 = short_us(m.median_us);
      c.line2 = path_of(m.config, fam);
      c.tooltip = fmt::format(
          "{}\n{:.2f} µs (p10 {:.2f}, p90 {:.2f}, {} samples)\n{}\n{} of the binding roof ({:.0f} GB/s, {:.1f} "
          "TFLOP/s)",
          name, m.median_us, m.p10_us, m.p90_us, m.samples, m.config.pretty(fam.config_fields()), percent(frac), m.gbps,
          m.tflops);
    } else {
      const auto& g = *outcome.gap;
      c.gap = true;
      c.fill = "rgb(221,221,221)";
      c.line1 = "gap";
      c.line2 = std::string(to_string(g.reason));
      c.tooltip = fmt::format("{}\ngap: {}{}{}\nsource: {}", name, to_string(g.reason), g.detail.empty() ? "" : ": ",
                              g.detail, g.source);
    }
    cells.push_back(std::move(c));
  }
  return svg::heatmap(id, fam.key_fields(), axes, cells);
}

std::string roofline_of(const db::Outcomes& o, const Family& fam) {
  std::vector<std::string> series;
  std::vector<svg::Point> points;
  for (const auto& [key, outcome] : o.keys) {
    if (!outcome.winner) continue;
    const auto& m = outcome.winner->m;
    const std::string path = path_of(m.config, fam);
    auto it = std::find(series.begin(), series.end(), path);
    if (it == series.end()) it = series.insert(series.end(), path);
    if (m.gbps <= 0) continue;
    const double intensity = m.tflops * 1000 / m.gbps;  // FLOP/byte
    points.push_back(
        {intensity, m.tflops, static_cast<size_t>(it - series.begin()),
         fmt::format("{}\n{}\n{:.2f} FLOP/byte, {:.1f} TFLOP/s, {:.0f} GB/s, {:.2f} µs", key.pretty(fam.key_fields()),
                     m.config.pretty(fam.config_fields()), intensity, m.tflops, m.gbps, m.median_us)});
  }
  const db::Run& newest = o.runs.empty() ? db::Run{} : o.runs.back();
  return svg::roofline(
      points, series,
      {newest.copy_gbps, newest.matrix_tflops, newest.matrix_tflops > 0 ? db::matrix_probe_of(newest) : ""});
}

// The config a key's winner is compared with: per run and per value of the family's strongest
// ranking field (mla_decode's kv_dtype, whose values take kernels of their own), the config best
// on average over every key (db::tuning_gain). Where none was timed ok on every key (a dump may
// leave out the candidates screening set aside), the config timed ok on the most keys stands in,
// the one of the lowest geometric mean over its keys among equals.
struct SingleConfig {
  Params config;
  bool on_every_key = false;
  int keys = 0;  // keys of the group
};

SingleConfig single_config(const std::vector<db::Measurement>& group) {
  const auto g = db::tuning_gain(group);
  if (g.best_single) return {*g.best_single, true, g.keys};
  std::map<Params, double> best;                    // key -> fastest ok median
  std::map<Params, std::map<Params, double>> time;  // config -> key -> fastest ok median
  for (const auto& m : group) {
    if (m.status != db::Status::ok) continue;
    auto [b, fresh] = best.try_emplace(m.key, m.median_us);
    if (!fresh) b->second = std::min(b->second, m.median_us);
    auto [t, first] = time[m.config].try_emplace(m.key, m.median_us);
    if (!first) t->second = std::min(t->second, m.median_us);
  }
  SingleConfig s{{}, false, g.keys};
  size_t most = 0;
  double lowest = 0;
  for (const auto& [config, by_key] : time) {
    double log_mean = 0;
    for (const auto& [key, t] : by_key) log_mean += std::log(t / best.at(key)) / static_cast<double>(by_key.size());
    if (by_key.size() > most || (by_key.size() == most && log_mean < lowest)) {
      most = by_key.size();
      lowest = log_mean;
      s.config = config;
    }
  }
  return s;
}

std::string tuning_gain_of(const std::string& id, const db::Outcomes& o, const std::vector<db::Measurement>& ms,
                           const Family& fam, const svg::Axes& axes) {
  const auto ranking = fam.ranking_fields();
  const std::string field = ranking.empty() ? std::string() : ranking.front();
  const FieldSpec* spec = nullptr;
  for (const auto& f : fam.key_fields())
    if (f.name == field) spec = &f;
  // (run, value of the field) -> its rows; the single config of each.
  using Group = std::pair<int64_t, int64_t>;
  auto group_of = [&](const Params& key, int64_t run) { return Group{run, spec ? key.find(field).value_or(0) : 0}; };
  std::map<Group, std::vector<db::Measurement>> rows;
  for (const auto& m : ms) rows[group_of(m.key, m.run_id)].push_back(m);
  std::map<Group, SingleConfig> singles;
  for (const auto& [group, members] : rows) singles[group] = single_config(members);
  std::map<Group, std::vector<double>> gains;  // per group, the gains of the keys where it was timed
  std::vector<svg::Cell> cells;
  for (const auto& [key, outcome] : o.keys) {
    if (!outcome.winner) continue;
    const auto group = group_of(key, outcome.winner->run.id);
    const auto& single = singles[group];
    if (single.config.empty()) continue;
    svg::Cell c;
    c.key = key;
    c.line2 = path_of(outcome.winner->m.config, fam);
    const auto t = o.ok_times.find({key, single.config});
    if (t == o.ok_times.end()) {
      c.fill = "rgb(238,238,238)";
      c.line1 = "n/a";
      c.tooltip = fmt::format("{}\n{} was not timed in full on this key (a dump leaves out the candidates "
                              "screening set aside, slower than 1.25x the key's best when measured)",
                              key.pretty(fam.key_fields()), single.config.pretty(fam.config_fields()));
    } else {
      const double gain = t->second / outcome.winner->m.median_us;
      gains[group].push_back(gain);
      // log2 of the gain: no gain at one end of the scale, a factor of two or more at the other.
      c.fill = svg::sequential(std::log2(gain));
      c.line1 = fmt::format("{:.2f}x", gain);
      c.tooltip = fmt::format("{}\n{} takes {:.2f} µs, the winner {:.2f} µs: {:.3f}x\nwinner: {}",
                              key.pretty(fam.key_fields()), single.config.pretty(fam.config_fields()), t->second,
                              outcome.winner->m.median_us, gain, outcome.winner->m.config.pretty(fam.config_fields()));
    }
    cells.push_back(std::move(c));
  }
  std::string out = "<table><tr><th>run</th><th>keys with</th><th>single config</th><th>timed on</th><th>winners' "
                    "gain, geometric mean</th><th>largest</th></tr>\n";
  for (const auto& [group, single] : singles) {
    const auto& g = gains[group];
    double log_sum = 0, largest = 0;
    for (double x : g) log_sum += std::log(x), largest = std::max(largest, x);
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td><code>{}</code>{}</td><td>{} of {} keys</td><td>{}</td><td>{}</td></tr>\n",
        group.first, spec ? escape(field + "=" + spec->format(group.second)) : "all",
        escape(single.config.pretty(fam.config_fields())),
        single.on_every_key ? "" : " (timed on the most keys; none on all)", g.size(), single.keys,
        g.empty() ? "-" : fmt::format("{:.3f}x", std::exp(log_sum / static_cast<double>(g.size()))),
        g.empty() ? "-" : fmt::format("{:.3f}x", largest));
  }
  out += "</table>\n";
  if (cells.empty()) return out;
  return out + svg::legend("single config's time over the winner's", svg::sequential, "1x", "1.41x", "2x or more") +
         svg::heatmap(id, fam.key_fields(), axes, cells);
}

// Each recorded row's share of the sweep: the time since the run's previous row (the first: since
// the run started), by status and by code path.
std::string time_spent(const db::Outcomes& o, const std::vector<db::Measurement>& ms, const Family& fam) {
  std::map<int64_t, double> previous;
  for (const auto& r : o.runs) previous[r.id] = seconds_of(r.started_at);
  std::map<std::string, std::pair<double, int>> by_status, by_path;
  double total = 0;
  for (const auto& m : ms) {  // ordered by id: the order they were recorded in
    const double t = seconds_of(m.measured_at);
    auto& prev = previous[m.run_id];
    const double dt = std::isfinite(t) && std::isfinite(prev) ? std::max(0.0, t - prev) : 0;
    if (std::isfinite(t)) prev = t;
    total += dt;
    auto& s = by_status[std::string(to_string(m.status))];
    s.first += dt, ++s.second;
    auto& p = by_path[path_of(m.config, fam)];
    p.first += dt, ++p.second;
  }
  auto chart = [&](const std::map<std::string, std::pair<double, int>>& groups) {
    std::vector<svg::Bar> items;
    for (const auto& [name, v] : groups)
      items.push_back(
          {name, v.first,
           fmt::format("{:.0f} s ({:.0f}%), {} rows", v.first, total > 0 ? v.first / total * 100 : 0.0, v.second)});
    return svg::bars(items);
  };
  return fmt::format(
             "<p>{:.0f} s between the start of the runs and their last recorded row, {} rows. Each row counts the "
             "time since the row before it in its run; rows a dump leaves out (candidates screening set aside) "
             "count toward the next row it keeps.</p>\n<h4>by status</h4>\n",
             total, ms.size()) +
         chart(by_status) + "<h4>by code path</h4>\n" + chart(by_path);
}

}  // namespace

std::string family_sections(int n, const db::Outcomes& o, const std::vector<db::Measurement>& ms, const Family& fam) {
  const std::string slug = fmt::format("{}-{}", n, o.family);
  const svg::Axes axes = svg::axes_of(fam.key_fields(), keys_of(o));
  int gaps = 0;
  for (const auto& [key, outcome] : o.keys) gaps += !outcome.winner;
  std::string out = fmt::format(
      "<section class=\"family\" id=\"family-{0}\">\n<h2>{1}: {2}</h2>\n{3}"
      "<h3 id=\"keys-{0}-title\">Key space: {4} keys, {5} gaps</h3>\n"
      "<p>Rows: {6}; columns: {7}; one panel per {8}. Each cell: the winner's median time (µs) and code path, "
      "coloured by its fraction of the binding roof (the larger of its fractions of the copy bandwidth and the "
      "matrix-core peak); gaps hatched with their reason. Hover a cell for its numbers.</p>\n",
      slug, escape(o.path), escape(o.family), run_table(o, ms), o.keys.size(), gaps, escape(axes.row),
      escape(axes.col.empty() ? "-" : axes.col), escape(fmt::format("{}", fmt::join(axes.panel, ", "))));
  out += svg::legend("fraction of the binding roof", svg::sequential, "0%", "50%", "100%");
  out += key_space("keys-" + slug, o, fam, axes);
  out += "<h3>Roofline of the winners</h3>\n<p>Arithmetic intensity against achieved rate, with the copy-bandwidth "
         "and matrix-core roofs measured in the newest run; one colour per code path.</p>\n";
  out += roofline_of(o, fam);
  out += "<h3>Tuning gain per key</h3>\n<p>Per key, the time of one fixed config over the winner's: what tuning "
         "buys over shipping a single kernel (<code>ktune query --gain</code>). One config per run and per value "
         "of " +
         escape(fam.ranking_fields().empty() ? std::string("-") : fam.ranking_fields().front()) +
         ", the field that decides most which config wins.</p>\n";
  out += tuning_gain_of("gain-" + slug, o, ms, fam, axes);
  out += "<h3>Where the sweep's time went</h3>\n" + time_spent(o, ms, fam);
  return out + "</section>\n";
}

std::string diff_section(const db::Diff& d, const Family& fam, const std::string& a, const std::string& b) {
  std::vector<svg::Cell> cells;
  std::vector<Params> keys;
  for (const auto& k : d.keys) {
    svg::Cell c;
    c.key = k.key;
    keys.push_back(k.key);
    const std::string name = k.key.pretty(fam.key_fields());
    if (k.ratio) {
      // log2 of the ratio, doubled: a factor of sqrt(2) either way reaches an end of the scale.
      c.fill = svg::diverging(std::log2(*k.ratio) * 2);
      c.line1 = fmt::format("{:.2f}", *k.ratio);
      c.line2 = std::string(to_string(k.verdict)) + (k.config_changed ? "*" : "");
      c.tooltip = fmt::format("{}\nB / A {:.3f} ({}): A {:.2f} µs, B {:.2f} µs\nA: {}\nB: {}", name, *k.ratio,
                              to_string(k.verdict), k.a->winner->m.median_us, k.b->winner->m.median_us,
                              k.a->winner->m.config.pretty(fam.config_fields()),
                              k.b->winner->m.config.pretty(fam.config_fields()));
    } else {
      c.gap = true;
      c.fill = "rgb(221,221,221)";
      c.line1 = "-";
      c.line2 = std::string(to_string(k.verdict));
      c.tooltip = fmt::format("{}\n{}", name, to_string(k.verdict));
    }
    cells.push_back(std::move(c));
  }
  const auto& s = d.summary;
  std::string counts;
  for (int v = 0; v < db::kVerdicts; ++v)
    if (s.counts[v] > 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", to_string(static_cast<db::Verdict>(v)), s.counts[v]);
  const std::string id = "diff-" + std::string(fam.name());
  std::string out = fmt::format(
      "<section class=\"diff\" id=\"{}\">\n<h2>{}: B over A</h2>\n<p>A: {}<br>B: {}</p>\n<p>{} keys in A, {} in B; "
      "verdicts: {}. ",
      id, escape(std::string(fam.name())), escape(a), escape(b), s.keys_a, s.keys_b, escape(counts));
  if (s.both_timed > 0)
    out += fmt::format("B / A over the {} keys timed on both: geometric mean {:.4f}, {:.3f} to {:.3f}; winning "
                       "config changed on {} (marked *). ",
                       s.both_timed, s.geomean_ratio, s.min_ratio, s.max_ratio, s.configs_changed);
  if (s.a_winner_on_b_keys > 0)
    out += fmt::format("A's winner timed on B over B's winner: {} keys, geometric mean {:.4f}, at most {:.3f}.",
                       s.a_winner_on_b_keys, s.a_winner_on_b_geomean, s.a_winner_on_b_max);
  out += "</p>\n" +
         svg::legend(
             "B / A", [](double t) { return svg::diverging(t * 2 - 1); }, "0.71x", "1x", "1.41x") +
         svg::heatmap(id + "-cells", fam.key_fields(), svg::axes_of(fam.key_fields(), keys), cells);
  return out + "</section>\n";
}

std::string page(const std::string& title, const std::string& intro, const std::string& body) {
  static constexpr const char* style = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 1360px; padding: 0 1em; color: rgb(34,34,34); }
h2 { border-bottom: 1px solid rgb(153,153,153); margin-top: 2em; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid rgb(187,187,187); padding: 2px 6px; text-align: left; }
code { font-size: 12px; }
.heatmap { display: flex; flex-wrap: wrap; gap: 8px 14px; }
svg text { font-size: 9px; }
svg .ptitle { font-size: 10px; font-weight: 600; }
svg .axis { font-size: 10px; fill: rgb(51,51,51); }
.cell text { text-anchor: middle; font-size: 8.5px; }
.frame { fill: none; stroke: rgb(136,136,136); }
.grid { stroke: rgb(221,221,221); }
.roof { stroke: rgb(204,0,0); stroke-width: 2; }
.point { opacity: 0.75; }
@media print {
  body { font-size: 10pt; max-width: none; margin: 0; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .panel, .roofline, .bars, table { break-inside: avoid; }
  h2 { break-before: page; }
  nav { display: none; }
}
)";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n<style>{1}</style>\n"
      "</head>\n<body>\n<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs><pattern "
      "id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect "
      "width=\"6\" height=\"6\" fill=\"rgb(238,238,238)\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"rgb(153,153,153)\" "
      "stroke-width=\"3\"/></pattern></defs></svg>\n<h1>{0}</h1>\n{2}{3}</body>\n</html>\n",
      escape(title), style, intro, body);
}

}  // namespace ktune::cli::report
