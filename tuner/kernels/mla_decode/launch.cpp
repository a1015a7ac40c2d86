#include "kernels/mla_decode/launch.hpp"

namespace ktune::mla {

LaunchPlan launch_plan(const LaunchProblem& p, const Config& config, size_t shared_bytes, int num_splits) noexcept {
  const int64_t rows = p.batch * p.block_len * p.heads;
  LaunchPlan plan;
  plan.main.arguments = {{p.q, p.kv_cache, p.block_table, p.kv_lens, p.o, p.lse, p.part_o, p.part_lse, p.softmax_scale,
                          p.kv_scale, static_cast<int>(p.heads), static_cast<int>(p.block_len), p.max_pages,
                          p.page_size, num_splits}};
  const int64_t row_tiles = (p.heads * p.block_len + config.rows - 1) / config.rows;
  plan.main.shape.grid = {static_cast<unsigned>(row_tiles), static_cast<unsigned>(num_splits),
                          static_cast<unsigned>(p.batch)};
  plan.main.shape.block = static_cast<unsigned>(config.threads);
  plan.main.shape.shared_bytes = shared_bytes;
  if (num_splits > 1) {
    const int total_rows = static_cast<int>(rows);
    plan.combine.emplace();
    plan.combine->arguments = {{p.part_o, p.part_lse, p.o, p.lse, total_rows, num_splits}};
    plan.combine->shape.grid = {static_cast<unsigned>(total_rows), 1, 1};
    plan.combine->shape.block = static_cast<unsigned>(kCombineThreads);
    plan.combine->shape.overlaps_previous = true;
  }
  return plan;
}

}  // namespace ktune::mla
