#pragma once
// The sections of `ktune report`'s page: per database and family, the key space coloured by the
// fraction of the binding roof, the roofline of the winners, the tuning gain per key and where
// the sweep's time went; per family of two databases, their diff as a heatmap of ratios.
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/diff.hpp"
#include "db/outcomes.hpp"
#include "kernels/family.hpp"

namespace ktune::cli::report {

// `n`: the database's position on the command line (1 or 2), which section ids carry
// ("keys-1-mla_decode").
std::string family_sections(int n, const db::Outcomes& o, const std::vector<db::Measurement>& ms, const Family& fam);

// B over A per key; `a`, `b` name the two sides.
std::string diff_section(const db::Diff& d, const Family& fam, const std::string& a, const std::string& b);

// The whole document around `body`: title, styles (screen and print), the shared SVG patterns.
std::string page(const std::string& title, const std::string& intro, const std::string& body);

}  // namespace ktune::cli::report
