#pragma once
// What one database says about each problem key of one kernel family: its winner, or its gap.
// The view `ktune diff` compares and `ktune report` draws.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/params.hpp"
#include "db/database.hpp"

namespace ktune::db {

// One key: the best ok measurement of the newest run that has one for it; a key without one in
// any run is a gap (the newest measured gap, else a declared one).
struct KeyOutcome {
  Params key;
  std::optional<Winner> winner;
  std::optional<Gap> gap;  // set exactly when winner is not
};

struct Outcomes {
  std::string path;  // the database
  std::string family;
  std::vector<Run> runs;  // the runs read, ordered by id
  std::map<Params, KeyOutcome> keys;
  // The fastest ok median of each (key, config) in the run that gives the key its winner, so
  // that one side's winning config can be looked up in the other's measurements.
  std::map<std::pair<Params, Params>, double> ok_times;
};

// The families that `db`'s runs and gaps matched by `f` belong to, sorted.
std::vector<std::string> families_in(Database& db, const Filter& f);

// Reads the outcomes of `f.family` (required) from `db`. Throws Error when the runs matched span
// several devices or arches (the keys would mix them): `--device` or `--arch` narrows them.
Outcomes load_outcomes(Database& db, const Filter& f);

// A winner's fraction of the roof that binds at its arithmetic intensity: the larger of its
// fraction of the copy bandwidth and of the matrix-core peak (the attainable rate is the smaller
// of the two roofs), or none where the run measured neither.
std::optional<double> fraction_of_binding_roof(const Measurement& m);

}  // namespace ktune::db
