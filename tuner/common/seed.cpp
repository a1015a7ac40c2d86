#include "common/seed.hpp"

#include <xxhash.h>

namespace ktune {

uint64_t seed_of(std::string_view id) noexcept { return XXH64(id.data(), id.size(), 0x6b74756e65); }

uint64_t seed_of(const Params& key) noexcept { return seed_of(key.canonical()); }

}  // namespace ktune
