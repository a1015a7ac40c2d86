#include "verify/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "common/parallel.hpp"

namespace ktune::verify {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string element_name(size_t i, std::string (*index_name)(size_t, const void*), const void* ctx) {
  if (!index_name) return fmt::format("[{}]", i);
  return fmt::format("{} ([{}])", index_name(i, ctx), i);
}

// One chunk's share of a comparison.
struct Tally {
  double max_abs = 0, diff_sq = 0, ref_sq = 0;
  size_t failing = 0, non_finite = 0, first = 0;  // first: the first failing element, if any
};

Tally tally(std::span<const float> out, std::span<const double> ref, size_t begin, size_t end, const Tolerance& tol) {
  Tally t;
  for (size_t i = begin; i < end; ++i) {
    const double o = out[i], r = ref[i];
    const double err = std::fabs(o - r);
    if (!std::isfinite(o)) ++t.non_finite;
    // Written so that NaN (in out or ref) fails, as every comparison with NaN is false, and so
    // that Inf fails even under an infinite tolerance.
    if (!(std::isfinite(o) && err <= tol.atol + tol.rtol * std::fabs(r)) && t.failing++ == 0) t.first = i;
    t.max_abs = std::max(t.max_abs, std::isnan(err) ? kInf : err);
    t.diff_sq += err * err;
    t.ref_sq += r * r;
  }
  return t;
}

}  // namespace

Verdict compare(std::string_view what, std::span<const float> out, std::span<const double> ref, const Tolerance& tol,
                std::string (*index_name)(size_t, const void*), const void* index_ctx) {
  // A size mismatch is a failing verdict, not an exception: verification reports what it found
  // and the sweep records it like any other rejected candidate, with the reason in the detail.
  if (out.size() != ref.size())
    return {false, kInf, kInf,
            fmt::format("{}: output has {} elements but the reference has {}", what, out.size(), ref.size())};

  // Chunks on every core, summed in chunk order: the verdict is the same on any number of cores.
  std::vector<Tally> parts((out.size() + kCompareChunk - 1) / kCompareChunk);
  parallel_for(parts.size(), [&](size_t c) {
    parts[c] = tally(out, ref, c * kCompareChunk, std::min(out.size(), (c + 1) * kCompareChunk), tol);
  });
  Tally all;
  for (const Tally& t : parts) {
    if (t.failing > 0 && all.failing == 0) all.first = t.first;
    all.failing += t.failing;
    all.non_finite += t.non_finite;
    all.max_abs = std::max(all.max_abs, t.max_abs);
    all.diff_sq += t.diff_sq;
    all.ref_sq += t.ref_sq;
  }
  const auto [max_abs, diff_sq, ref_sq, failing, non_finite, first] = all;
  const double diff_norm = std::sqrt(diff_sq), ref_norm = std::sqrt(ref_sq);
  double rel_l2 = ref_norm > 0 ? diff_norm / ref_norm : (diff_norm == 0 ? 0 : kInf);
  if (std::isnan(rel_l2)) rel_l2 = kInf;  // NaN anywhere: an infinite error, never a pass

  Verdict v{failing == 0 && rel_l2 <= tol.max_rel_l2, max_abs, rel_l2, {}};
  if (v.ok) return v;
  if (failing > 0) {
    const double r = ref[first];
    v.detail = fmt::format(
        "{}: {} of {} elements out of tolerance ({} NaN/Inf); first at {}: out={:.7g} ref={:.7g} err={:.3g} "
        "> atol {:.3g} + rtol {:.3g} * |ref|",
        what, failing, out.size(), non_finite, element_name(first, index_name, index_ctx), out[first], r,
        std::fabs(out[first] - r), tol.atol, tol.rtol);
  } else {
    v.detail = fmt::format("{}: every element within tolerance but rel_l2 {:.3g} > {:.3g} (max_abs_err {:.3g})", what,
                           rel_l2, tol.max_rel_l2, max_abs);
  }
  return v;
}

Verdict merge(const Verdict& a, const Verdict& b) {
  std::string detail = a.detail;
  if (!detail.empty() && !b.detail.empty()) detail += "; ";
  detail += b.detail;
  return {a.ok && b.ok, std::max(a.max_abs_err, b.max_abs_err), std::max(a.rel_l2_err, b.rel_l2_err),
          std::move(detail)};
}

}  // namespace ktune::verify
