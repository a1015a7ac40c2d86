#pragma once
// The refusals of build_table (rules in table.hpp): each returns or throws an Error that names
// the validator, the values it saw and what the user can do about it.
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "dispatch/table.hpp"

namespace ktune::dispatch {

// Ids of the runs (of one family and arch) whose results may be used: those of the chosen
// device and compiler, or all when they agree. Throws the device or compiler validator's Error
// when they do not agree and nothing was chosen.
std::set<int64_t> accepted_runs(const std::map<int64_t, db::Run>& runs, const Request& req, std::string_view family,
                                std::string_view arch);

// A key whose chosen outcome comes from a run with another template hash.
struct StaleKey {
  const Params* key;
  const db::Run* run;
};
// Names `db_path` in the remedy for the stale runs that carry one of req.adoptable.
Error stale_error(const std::vector<StaleKey>& stale, std::string_view family, std::string_view arch,
                  const Request& req, std::string_view db_path);

// Fallback validator: the gaps of `arch` (rows `cycle` of its entries, in the order a caller
// meets them) fall back to one another in a loop, which a caller that follows fallbacks would
// never leave.
Error fallback_cycle_error(const Table& table, const ArchTable& arch, const std::vector<size_t>& cycle);

// Nothing matched the request: says what the database does have.
Error nothing_to_generate(db::Database& db, std::string_view family, const Request& req);

}  // namespace ktune::dispatch
