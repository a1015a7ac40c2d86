#include "sweep/protocol.hpp"

#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"

// Field-for-field JSON of the plain structs on the wire (found by ADL, so in their namespaces).
// from_json requires every field.
namespace ktune::bench {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TimingPolicy, warmup, min_samples, max_samples, rel_ci, budget_ms, min_sample_us,
                                   max_batch, abandon_us)
}  // namespace ktune::bench

namespace ktune::backend {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CompileRequest, source, source_name, name_expressions, arch, options)
}  // namespace ktune::backend

namespace ktune::sweep {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkerTime, setup_ms, load_ms, verify_ms, screen_ms, full_ms, timed_ms, total_ms)

namespace {
using json = nlohmann::json;

constexpr std::array<std::string_view, 4> kStatusNames = {"ok", "verify_failed", "load_failed", "fault"};

RunStatus status_from(std::string_view s) {
  for (size_t i = 0; i < kStatusNames.size(); ++i)
    if (kStatusNames[i] == s) return static_cast<RunStatus>(i);
  throw Error(fmt::format("unknown run status '{}'", s));
}

// JSON has no infinity: an unbounded confidence interval travels as null.
json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double finite_or_inf(const json& j) { return j.is_null() ? std::numeric_limits<double>::infinity() : j.get<double>(); }

template <class F>
auto parsing(std::string_view what, F&& f) {
  try {
    return f();
  } catch (const json::exception& e) {
    throw Error(fmt::format("malformed {}: {}", what, e.what()));
  }
}

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string_view to_string(RunStatus s) noexcept { return kStatusNames[static_cast<size_t>(s)]; }

json to_json(const RunRequest& r) {
  return {{"op", "run"},
          {"family", r.family},
          {"key", r.key.canonical()},
          {"config", r.config.canonical()},
          {"shape", r.shape.canonical()},
          {"code", base64_encode(r.code)},
          {"symbols", r.symbols},
          {"seed", r.seed},
          {"screen", r.screen},
          {"full", r.full},
          {"full_cutoff_us", r.full_cutoff_us},
          {"verify", r.verify}};
}

RunRequest run_request_from(const json& j) {
  return parsing("run request", [&] {
    RunRequest r;
    j.at("family").get_to(r.family);
    r.key = Params::parse_canonical(j.at("key").get<std::string>());
    r.config = Params::parse_canonical(j.at("config").get<std::string>());
    r.shape = Params::parse_canonical(j.at("shape").get<std::string>());
    r.code = base64_decode(j.at("code").get<std::string>());
    j.at("symbols").get_to(r.symbols);
    j.at("seed").get_to(r.seed);
    j.at("screen").get_to(r.screen);
    j.at("full").get_to(r.full);
    j.at("full_cutoff_us").get_to(r.full_cutoff_us);
    j.at("verify").get_to(r.verify);
    return r;
  });
}

json to_json(const RunResult& r) {
  return {{"status", to_string(r.status)},
          {"detail", r.detail},
          {"max_abs_err", finite_or_null(r.max_abs_err)},
          {"rel_l2_err", finite_or_null(r.rel_l2_err)},
          {"median_us", r.stats.median_us},
          {"p10_us", r.stats.p10_us},
          {"p90_us", r.stats.p90_us},
          {"samples", r.stats.n},
          {"rel_ci", finite_or_null(r.stats.rel_ci)},
          {"stop", bench::to_string(r.stats.stop)},
          {"fully_timed", r.fully_timed},
          {"bytes", r.traffic.bytes},
          {"flops", r.traffic.flops},
          {"fatal", r.fatal},
          {"rss_bytes", r.rss_bytes},
          {"device_used_bytes", r.device_used_bytes},
          {"time", r.time}};
}

RunResult run_result_from(const json& j) {
  return parsing("run result", [&] {
    RunResult r;
    r.status = status_from(j.at("status").get<std::string>());
    j.at("detail").get_to(r.detail);
    r.max_abs_err = finite_or_inf(j.at("max_abs_err"));
    r.rel_l2_err = finite_or_inf(j.at("rel_l2_err"));
    j.at("median_us").get_to(r.stats.median_us);
    j.at("p10_us").get_to(r.stats.p10_us);
    j.at("p90_us").get_to(r.stats.p90_us);
    j.at("samples").get_to(r.stats.n);
    r.stats.rel_ci = finite_or_inf(j.at("rel_ci"));
    // Optional (absent or null): a worker that does not say why its sampling stopped.
    const auto stop = j.contains("stop") && !j.at("stop").is_null() ? j.at("stop").get<std::string>() : "none";
    if (const auto s = bench::stop_from_string(stop))
      r.stats.stop = *s;
    else
      throw Error(fmt::format("stop '{}' is none of converged, max_samples, budget, abandoned, none", stop));
    j.at("fully_timed").get_to(r.fully_timed);
    j.at("bytes").get_to(r.traffic.bytes);
    j.at("flops").get_to(r.traffic.flops);
    j.at("fatal").get_to(r.fatal);
    // Optional: a worker that does not measure its memory leaves them out.
    r.rss_bytes = j.value("rss_bytes", int64_t{0});
    r.device_used_bytes = j.value("device_used_bytes", int64_t{0});
    // Optional too (a worker that does not time itself), but whole when present.
    if (j.contains("time")) j.at("time").get_to(r.time);
    return r;
  });
}

json to_json(const backend::CompileRequest& r) {
  json j = r;
  j["op"] = "compile";
  return j;
}

backend::CompileRequest compile_request_from(const json& j) {
  return parsing("compile request", [&] { return j.get<backend::CompileRequest>(); });
}

json compile_reply(const backend::CompileResult& r) {
  return {{"ok", true}, {"code", base64_encode(r.code)}, {"lowered_names", r.lowered_names}, {"log", r.log}};
}

json compile_error_reply(std::string_view what, std::string_view log) {
  return {{"ok", false}, {"error", what}, {"log", log}};
}

backend::CompileResult compile_result_from(const json& j) {
  return parsing("compile reply", [&] {
    if (!j.at("ok").get<bool>()) throw CompileError(j.at("error").get<std::string>(), j.at("log").get<std::string>());
    backend::CompileResult r;
    r.code = base64_decode(j.at("code").get<std::string>());
    j.at("lowered_names").get_to(r.lowered_names);
    j.at("log").get_to(r.log);
    return r;
  });
}

std::string base64_encode(std::span<const char> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (size_t rest = bytes.size() - i) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | (rest == 2 ? uint32_t(uint8_t(bytes[i + 1])) << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::vector<char> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) throw Error(fmt::format("base64: length {} is not a multiple of 4", text.size()));
  std::vector<char> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      uint32_t d = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
      } else {
        auto at = kAlphabet.find(c);
        if (at == std::string_view::npos || pad) throw Error(fmt::format("base64: invalid character at {}", i + k));
        d = static_cast<uint32_t>(at);
      }
      v = v << 6 | d;
    }
    out.push_back(static_cast<char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<char>(v >> 8 & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(v & 0xff));
  }
  return out;
}

}  // namespace ktune::sweep
