#pragma once
// The KTUNE_DB override: a tuning database read at start-up into a dispatch table with codegen's
// validators (dispatch/table.hpp: template hash of the package, one device, one compiler, the
// family's constraints), answered by the generated select()'s rules (exact key, nearest batch
// bucket, covering heads / block_len), so that a new database takes effect without a rebuild;
// a key it cannot serve (unsupported) goes to the compiled-in table.
// Its kernels run from the package's code objects; a winner the package lacks is answered as
// KTUNE_NO_CODE_OBJECT, naming the config to package.
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/runtime/choice.hpp"
#include "dispatch/table.hpp"

namespace ktune::runtime {

class OverrideTable {
 public:
  // Throws Error when the database cannot be read or a validator refuses it.
  OverrideTable(const std::string& db_path, std::string_view template_hash);

  // nullopt when the database has no table for `arch`: the compiled-in table answers then.
  std::optional<Choice> select(std::string_view arch, const ktune_mla_decode_key& key) const;
  const std::string& summary() const noexcept { return summary_; }  // "PATH: sm_90a (24 keys), ..."

 private:
  struct Row {
    std::vector<int64_t> key;  // in key-field order
    Choice exact;              // the answer when the query is this key
    uint64_t padded_work = 1;  // product of the covering fields: the covering rule's first rank
  };
  struct Arch {
    std::string name;
    std::vector<Row> rows;
  };
  Choice resolve(const Arch& arch, const std::vector<int64_t>& q) const;

  dispatch::Table table_;
  std::vector<Arch> arches_;
  std::deque<std::string> texts_;  // the reasons choices point into (a deque never moves them)
  std::vector<std::string_view> out_of_range_;
  std::vector<bool> covering_;         // per key field
  int bucket_ = -1;                    // index of the bucket field, -1: none
  std::string_view cover_reason_;
  std::string summary_;
};

}  // namespace ktune::runtime
