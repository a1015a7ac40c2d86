#pragma once
// Seeds of random inputs, each a hash of the text naming what the inputs depend on, so that every
// process (sweep workers, `ktune bench`) draws the same data for the same thing.
#include <cstdint>
#include <string_view>

#include "common/params.hpp"

namespace ktune {

uint64_t seed_of(std::string_view id) noexcept;

// A key's: the same for every config of the key, so that candidates (and `ktune bench` runs) of
// one key are timed on the same data. Verification draws its inputs with the seed of the fields
// it keeps (sweep::CandidateRunner), the same for keys differing only in those
// Family::fields_verification_ignores; inputs shared between keys' timing instances are drawn
// from the seed of an id of what they depend on (Family::instantiate_for_timing).
uint64_t seed_of(const Params& key) noexcept;

}  // namespace ktune
