#pragma once
// Split-KV policy: how many key chunks each request's rows are split into. Decode batches are
// often too small to fill the GPU with one CTA per (row tile, request); splitting the keys adds
// CTAs at the price of a combine pass. A pure function of the launch, so the dispatcher can
// reproduce it without ktune and tests can check it on the CPU.
#include <algorithm>
#include <cstdint>

namespace ktune::mla {

// Bounds the workspace and the combine's loop; 64 lets a batch of 2 requests of one row tile fill
// the 132 SMs of an H200 (one CTA per SM: the mma kernel's rings take most of the shared memory).
inline constexpr int kMaxSplits = 64;
inline constexpr int kMinTilesPerSplit = 2;  // a split shorter than this costs more than it saves

struct SplitInputs {
  int batch = 1;
  int row_tiles = 1;      // ceil(H * L / rows)
  int max_kv_len = 1;     // longest request of the launch
  int compute_units = 1;  // SMs / CUs of the device
  int ctas_per_unit = 0;  // the config's split knob: 0 never splits
  int keys_per_tile = 16;
};

// The most splits for which batch * row_tiles * splits stays within ctas_per_unit *
// compute_units, capped so that each split of the longest request keeps at least
// kMinTilesPerSplit KV tiles, and by kMaxSplits. Always >= 1.
// Rounded down, not up: one CTA past a full wave costs a whole extra wave when a compute unit
// holds one CTA, as the matrix-core configs' rings make it (e.g. 4 splits of 32 requests fill 128
// of 132 SMs in one wave; 5 splits, 160 CTAs, would take two).
constexpr int num_splits(const SplitInputs& in) noexcept {
  if (in.ctas_per_unit <= 0) return 1;
  const int64_t ctas = std::max<int64_t>(1, static_cast<int64_t>(in.batch) * in.row_tiles);
  const int64_t target = static_cast<int64_t>(in.ctas_per_unit) * in.compute_units;
  const int64_t wanted = target / ctas;
  const int64_t by_keys = in.max_kv_len / (static_cast<int64_t>(kMinTilesPerSplit) * std::max(1, in.keys_per_tile));
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({wanted, by_keys, kMaxSplits})));
}

}  // namespace ktune::mla
