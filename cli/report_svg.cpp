#include "report_svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ktune::cli::svg {
namespace {

struct Rgb {
  double r, g, b;
};

// CSS's rgb() form rather than "#rrggbb": a generated page then holds no '#' before digits, which
// the stamp lint would read as an issue number.
std::string css(const Rgb& c) {
  auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
  return fmt::format("rgb({},{},{})", byte(c.r), byte(c.g), byte(c.b));
}

template <size_t N>
std::string interpolate(const std::array<Rgb, N>& stops, double t) {
  if (!std::isfinite(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0) * (N - 1);
  const size_t i = std::min(static_cast<size_t>(t), N - 2);
  const double f = t - static_cast<double>(i);
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return css({a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f});
}

constexpr int kCellW = 46, kCellH = 26, kLeft = 34, kTop = 34;

std::string value_label(const FieldSpec* spec, int64_t v) {
  return spec && spec->is_enum() && v >= 0 && v < static_cast<int64_t>(spec->labels.size())
             ? spec->labels[static_cast<size_t>(v)]
             : std::to_string(v);
}

const FieldSpec* spec_of(const std::vector<FieldSpec>& fields, const std::string& name) {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

// The axis positions: the distinct values of `field`, ascending.
std::vector<int64_t> values_of(const std::vector<Cell>& cells, const std::string& field) {
  std::set<int64_t> v;
  for (const auto& c : cells)
    if (const auto x = c.key.find(field)) v.insert(*x);
  return {v.begin(), v.end()};
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  return out;
}

std::string sequential(double t) {
  static constexpr std::array<Rgb, 5> stops{
      {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
  return interpolate(stops, t);
}

std::string diverging(double t) {
  static constexpr std::array<Rgb, 5> stops{
      {{33, 102, 172}, {146, 197, 222}, {247, 247, 247}, {244, 165, 130}, {178, 24, 43}}};
  return interpolate(stops, (t + 1) / 2);
}

std::string category(size_t i) {
  static constexpr std::array<Rgb, 8> colours{{{27, 158, 119},
                                               {217, 95, 2},
                                               {117, 112, 179},
                                               {231, 41, 138},
                                               {102, 166, 30},
                                               {230, 171, 2},
                                               {166, 118, 29},
                                               {102, 102, 102}}};
  return css(colours[i % colours.size()]);
}

std::string text_on(const std::string& fill) {
  int r = 0, g = 0, b = 0;
  if (std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &r, &g, &b) != 3) return "black";
  return 0.299 * r + 0.587 * g + 0.114 * b < 140 ? "white" : "black";
}

Axes axes_of(const std::vector<FieldSpec>& fields, const std::vector<Params>& keys) {
  std::vector<std::pair<size_t, size_t>> counts;  // (distinct values, field index)
  for (size_t i = 0; i < fields.size(); ++i) {
    std::set<int64_t> v;
    for (const auto& k : keys)
      if (const auto x = k.find(fields[i].name)) v.insert(*x);
    counts.emplace_back(v.size(), i);
  }
  // Most values first; among equals, declaration order.
  std::stable_sort(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.first > b.first; });
  Axes a;
  if (counts.empty()) return a;
  size_t first = counts[0].second, second = counts.size() > 1 ? counts[1].second : counts[0].second;
  if (second < first) std::swap(first, second);
  a.row = fields[first].name;
  a.col = counts.size() > 1 ? fields[second].name : "";
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name != a.row && fields[i].name != a.col) a.panel.push_back(fields[i].name);
  return a;
}

std::string heatmap(const std::string& id, const std::vector<FieldSpec>& fields, const Axes& axes,
                    const std::vector<Cell>& cells) {
  const auto rows = values_of(cells, axes.row);
  const auto cols = axes.col.empty() ? std::vector<int64_t>{0} : values_of(cells, axes.col);
  // Panels in the order of their fields' values.
  std::map<std::vector<int64_t>, std::vector<const Cell*>> panels;
  for (const auto& c : cells) {
    std::vector<int64_t> at;
    for (const auto& f : axes.panel) at.push_back(c.key.find(f).value_or(0));
    panels[at].push_back(&c);
  }
  const FieldSpec* row_spec = spec_of(fields, axes.row);
  const FieldSpec* col_spec = spec_of(fields, axes.col);
  const int grid_width = kLeft + static_cast<int>(cols.size()) * kCellW + 4;
  const int height = kTop + static_cast<int>(rows.size()) * kCellH + 4;
  std::string out = fmt::format("<div class=\"heatmap\" id=\"{}\">\n", escape(id));
  for (const auto& [at, members] : panels) {
    std::string title;
    for (size_t i = 0; i < axes.panel.size(); ++i)
      title += fmt::format("{}{}={}", i ? " " : "", axes.panel[i], value_label(spec_of(fields, axes.panel[i]), at[i]));
    // As wide as the grid, or as its title (about 6 px a character at 10 px).
    const int width = std::max(grid_width, static_cast<int>(title.size()) * 6 + 4);
    out += fmt::format("<svg class=\"panel\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
                       "aria-label=\"{}\">\n<text x=\"2\" y=\"11\" class=\"ptitle\">{}</text>\n",
                       width, height, width, height, escape(title), escape(title.empty() ? "all keys" : title));
    for (size_t c = 0; c < cols.size() && !axes.col.empty(); ++c)
      out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n",
                         kLeft + static_cast<int>(c) * kCellW + kCellW / 2, kTop - 6,
                         escape(value_label(col_spec, cols[c])));
    for (size_t r = 0; r < rows.size(); ++r)
      out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">{}</text>\n", kLeft - 3,
                         kTop + static_cast<int>(r) * kCellH + kCellH / 2 + 3, escape(value_label(row_spec, rows[r])));
    for (const Cell* cell : members) {
      const auto r = std::lower_bound(rows.begin(), rows.end(), cell->key.find(axes.row).value_or(0)) - rows.begin();
      const auto c =
          axes.col.empty()
              ? 0
              : std::lower_bound(cols.begin(), cols.end(), cell->key.find(axes.col).value_or(0)) - cols.begin();
      const int x = kLeft + static_cast<int>(c) * kCellW, y = kTop + static_cast<int>(r) * kCellH;
      const std::string ink = text_on(cell->fill);
      out += fmt::format(
          "<g class=\"cell{}\" data-key=\"{}\"><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"{}\"/><text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text><text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text></g>\n",
          cell->gap ? " gap" : "", escape(cell->key.canonical()), escape(cell->tooltip), x + 1, y + 1, kCellW - 2,
          kCellH - 2, cell->gap ? "url(#hatch)" : cell->fill, x + kCellW / 2, y + 11, ink, escape(cell->line1),
          x + kCellW / 2, y + 22, ink, escape(cell->line2));
    }
    out += "</svg>\n";
  }
  return out + "</div>\n";
}

std::string legend(const std::string& title, std::string (*colour)(double), const std::string& low,
                   const std::string& mid, const std::string& high) {
  constexpr int steps = 40, w = 6;
  std::string out = fmt::format(
      "<svg class=\"legend\" width=\"{}\" height=\"38\" viewBox=\"0 0 {} 38\" role=\"img\" aria-label=\"{}\">"
      "<text x=\"0\" y=\"10\" class=\"axis\">{}</text>",
      steps * w + 60, steps * w + 60, escape(title), escape(title));
  for (int i = 0; i < steps; ++i)
    out += fmt::format("<rect x=\"{}\" y=\"14\" width=\"{}\" height=\"10\" fill=\"{}\"/>", 10 + i * w, w,
                       colour((i + 0.5) / steps));
  out += fmt::format(
      "<text x=\"10\" y=\"35\" class=\"axis\">{}</text><text x=\"{}\" y=\"35\" class=\"axis\" "
      "text-anchor=\"middle\">{}</text><text x=\"{}\" y=\"35\" class=\"axis\" text-anchor=\"end\">{}</text></svg>\n",
      escape(low), 10 + steps * w / 2, escape(mid), 10 + steps * w, escape(high));
  return out;
}

std::string roofline(const std::vector<Point>& points, const std::vector<std::string>& series, const Roofs& roofs) {
  constexpr int W = 820, H = 440, L = 60, R = 170, T = 14, B = 40;
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (const auto& p : points)
    if (p.x > 0 && p.y > 0) {
      x0 = std::min(x0, p.x), x1 = std::max(x1, p.x);
      y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    }
  if (x1 == 0) return "<p>No winner moved bytes and did floating-point work: nothing to place on a roofline.</p>\n";
  const double ridge =
      roofs.matrix_tflops > 0 && roofs.copy_gbps > 0 ? roofs.matrix_tflops * 1000 / roofs.copy_gbps : 0;
  if (ridge > 0) x1 = std::max(x1, ridge * 2);
  if (roofs.matrix_tflops > 0) y1 = std::max(y1, roofs.matrix_tflops);
  // Whole decades around the data.
  const double lx0 = std::floor(std::log10(x0)), lx1 = std::ceil(std::log10(x1));
  const double ly0 = std::floor(std::log10(y0)), ly1 = std::ceil(std::log10(y1 * 1.05));
  auto px = [&](double x) { return L + (std::log10(x) - lx0) / std::max(lx1 - lx0, 1.0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (std::log10(y) - ly0) / std::max(ly1 - ly0, 1.0) * (H - T - B); };
  std::string out = fmt::format(
      "<svg class=\"roofline\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"roofline of the winners\">\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>\n",
      W, H, W, H, L, T, W - L - R, H - T - B);
  for (double d = lx0; d <= lx1; ++d)
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/><text x=\"{0:.1f}\" y=\"{3}\" "
        "class=\"axis\" text-anchor=\"middle\">{4:g}</text>\n",
        px(std::pow(10, d)), T, H - B, H - B + 14, std::pow(10, d));
  for (double d = ly0; d <= ly1; ++d)
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/><text x=\"{3}\" y=\"{4:.1f}\" "
        "class=\"axis\" text-anchor=\"end\">{5:g}</text>\n",
        L, W - R, py(std::pow(10, d)), L - 4, py(std::pow(10, d)) + 3, std::pow(10, d));
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n"
      "<text x=\"12\" y=\"{}\" class=\"axis\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">TFLOP/s</text>\n",
      L + (W - L - R) / 2, H - 6, T + (H - T - B) / 2, T + (H - T - B) / 2);
  // The roofs: bandwidth (TFLOP/s = FLOP/byte x GB/s / 1000) up to the ridge, then the matrix peak.
  if (roofs.copy_gbps > 0) {
    const double xa = std::pow(10, lx0);
    const double xb = ridge > 0 ? ridge : std::pow(10, lx1);
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"roof\"><title>copy bandwidth {:.0f} "
        "GB/s</title></line>\n",
        px(xa), py(xa * roofs.copy_gbps / 1000), px(xb), py(xb * roofs.copy_gbps / 1000), roofs.copy_gbps);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"axis\">copy {:.0f} GB/s</text>\n", px(xa) + 4,
                       py(xa * roofs.copy_gbps / 1000) - 4, roofs.copy_gbps);
  }
  if (roofs.matrix_tflops > 0) {
    const double xa = ridge > 0 ? ridge : std::pow(10, lx0);
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"roof\"><title>{} {:.0f} "
        "TFLOP/s</title></line>\n<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"axis\">{} {:.0f} TFLOP/s</text>\n",
        px(xa), py(roofs.matrix_tflops), W - R, py(roofs.matrix_tflops), escape(roofs.matrix_label),
        roofs.matrix_tflops, px(xa), py(roofs.matrix_tflops) - 4, escape(roofs.matrix_label), roofs.matrix_tflops);
  }
  for (const auto& p : points)
    if (p.x > 0 && p.y > 0)
      out += fmt::format(
          "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n",
          px(p.x), py(p.y), category(p.series), escape(p.tooltip));
  for (size_t i = 0; i < series.size(); ++i)
    out += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" class=\"axis\">{}</text>\n",
        W - R + 14, T + 10 + static_cast<int>(i) * 16, category(i), W - R + 22, T + 14 + static_cast<int>(i) * 16,
        escape(series[i]));
  return out + "</svg>\n";
}

std::string bars(const std::vector<Bar>& items) {
  constexpr int label_w = 170, bar_w = 420, row_h = 18;
  double top = 0;
  for (const auto& b : items) top = std::max(top, b.value);
  const int height = static_cast<int>(items.size()) * row_h + 4;
  std::string out = fmt::format(
      "<svg class=\"bars\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"bars\">\n",
      label_w + bar_w + 200, height, label_w + bar_w + 200, height);
  for (size_t i = 0; i < items.size(); ++i) {
    const int y = static_cast<int>(i) * row_h + 2;
    const double w = top > 0 ? items[i].value / top * bar_w : 0;
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">{}</text><rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" "
        "height=\"{}\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{}\" class=\"axis\">{}</text>\n",
        label_w - 6, y + 12, escape(items[i].label), label_w, y, w, row_h - 4, category(i), label_w + w + 6, y + 12,
        escape(items[i].text));
  }
  return out + "</svg>\n";
}

}  // namespace ktune::cli::svg
