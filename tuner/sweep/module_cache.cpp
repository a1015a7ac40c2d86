#include "sweep/module_cache.hpp"

#include <algorithm>

namespace ktune::sweep {

backend::Module& ModuleCache::load(backend::Context& ctx, std::span<const char> code) {
  ++uses_;
  for (Entry& e : entries_)
    if (std::ranges::equal(e.code, code)) {
      e.last_use = uses_;
      return *e.module;
    }
  auto module = ctx.load(code);
  if (entries_.size() >= capacity_ && !entries_.empty())
    entries_.erase(std::ranges::min_element(entries_, {}, &Entry::last_use));
  entries_.push_back({{code.begin(), code.end()}, std::move(module), uses_});
  return *entries_.back().module;
}

}  // namespace ktune::sweep
