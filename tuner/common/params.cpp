#include "common/params.hpp"

#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace ktune {

std::string FieldSpec::format(int64_t v) const {
  if (v < min || v > max) throw Error(fmt::format("{}={} is out of range [{}, {}]", name, v, min, max));
  if (is_enum()) return labels.at(static_cast<size_t>(v));
  return std::to_string(v);
}

static std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

int64_t FieldSpec::parse(std::string_view text) const {
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == text) return static_cast<int64_t>(i);
  auto v = parse_int(text);
  if (!v || *v < min || *v > max) {
    if (is_enum()) throw Error(fmt::format("{}: '{}' is not one of {}", name, text, fmt::join(labels, ", ")));
    throw Error(fmt::format("{}: '{}' is not an integer in [{}, {}]", name, text, min, max));
  }
  return *v;
}

void Params::set(std::string_view name, int64_t value) {
  for (auto& [n, v] : items_)
    if (n == name) {
      v = value;
      return;
    }
  items_.emplace_back(std::string(name), value);
}

std::optional<int64_t> Params::find(std::string_view name) const noexcept {
  for (const auto& [n, v] : items_)
    if (n == name) return v;
  return std::nullopt;
}

int64_t Params::at(std::string_view name) const {
  if (auto v = find(name)) return *v;
  throw Error(fmt::format("missing parameter '{}' in {{{}}}", name, canonical()));
}

std::string Params::canonical() const {
  std::string out;
  for (const auto& [n, v] : items_) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", n, v);
  }
  return out;
}

Params Params::parse_canonical(std::string_view text) {
  Params p;
  if (text.empty()) return p;
  const std::string_view whole = text;
  for (;;) {  // every comma must be followed by an item: "a=1," is malformed
    auto comma = text.find(',');
    auto item = text.substr(0, comma);
    auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw Error(fmt::format("malformed parameter '{}' (want name=integer)", item));
    auto v = parse_int(item.substr(eq + 1));
    if (!v) throw Error(fmt::format("malformed parameter '{}' (want name=integer)", item));
    if (p.find(item.substr(0, eq))) throw Error(fmt::format("duplicate parameter '{}'", item.substr(0, eq)));
    p.items_.emplace_back(std::string(item.substr(0, eq)), *v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  // One key, one text: "heads=016" or "heads=-0" would be a second key wherever keys are
  // compared as text (the winners view groups by it), with a winner of its own.
  if (const auto canonical = p.canonical(); canonical != whole)
    throw Error(fmt::format("parameters '{}' are not in canonical form (want '{}')", whole, canonical));
  return p;
}

std::string Params::pretty(const std::vector<FieldSpec>& specs) const {
  std::string out;
  for (const auto& [n, v] : items_) {
    if (!out.empty()) out += ' ';
    std::string value = std::to_string(v);
    for (const auto& s : specs)
      if (s.name == n && s.is_enum() && v >= 0 && v < static_cast<int64_t>(s.labels.size()))
        value = s.labels[static_cast<size_t>(v)];
    out += fmt::format("{}={}", n, value);
  }
  return out;
}

void validate(const Params& p, const std::vector<FieldSpec>& specs, std::string_view what) {
  const auto& items = p.items();
  if (items.size() != specs.size())
    throw Error(fmt::format("{} has {} fields, expected {} ({{{}}})", what, items.size(), specs.size(), p.canonical()));
  for (size_t i = 0; i < specs.size(); ++i) {
    if (items[i].first != specs[i].name)
      throw Error(fmt::format("{}: field {} is '{}', expected '{}'", what, i, items[i].first, specs[i].name));
    if (items[i].second < specs[i].min || items[i].second > specs[i].max)
      throw Error(fmt::format("{}: {}={} is out of range [{}, {}]", what, specs[i].name, items[i].second, specs[i].min,
                              specs[i].max));
  }
}

}  // namespace ktune
