#pragma once
// The KTUNE_DB override of one family: a tuning database read at the family's first call into a
// dispatch table with codegen's validators (dispatch/table.hpp: template hash of the packages, one
// device, one compiler, the family's preconditions), answered by the generated select()'s rules
// (exact key, nearest batch bucket, covering fields), so that a new database takes effect without
// a rebuild; a key it cannot serve (unsupported) goes to the compiled-in table.
// Its kernels run from the packages' code objects; a winner no package holds has a KernelChoice
// without an object, which the engine compiles at run time (or answers KTUNE_NO_CODE_OBJECT).
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/row_select.hpp"
#include "dispatch/runtime/choice.hpp"
#include "dispatch/runtime/compiled_table.hpp"
#include "dispatch/table.hpp"

namespace ktune::runtime {

class OverrideTable {
 public:
  // Null when the database holds nothing of `family` (then it overrides nothing of it). Throws
  // Error when the database cannot be read or a validator refuses every arch of it (an arch
  // refused among others is left out: refused()). `tables`: the compiled-in
  // packages, whose code objects its winners use.
  static std::unique_ptr<OverrideTable> read(const std::string& db_path, const RuntimeFamily& family,
                                             std::string_view template_hash,
                                             std::span<const CompiledTable* const> tables);

  // nullopt when the database has no table for `arch`: the compiled-in table answers then.
  std::optional<Choice> select(std::string_view arch, const Values& key) const noexcept;
  const std::string& summary() const noexcept { return summary_; }  // "PATH: sm_90a (24 keys), ..."
  // Why the arches a validator refused are not served (empty: none was); the others are.
  const std::string& refused() const noexcept { return refused_; }

  OverrideTable(const OverrideTable&) = delete;  // choices point into it
  OverrideTable& operator=(const OverrideTable&) = delete;

 private:
  OverrideTable() = default;
  struct Arch {
    std::string name;
    std::vector<dispatch::SelectRow> rows;  // the table's entries
    std::vector<Choice> answers;            // each row's answer when the query is its key
  };
  Choice resolve(const Arch& arch, std::span<const int64_t> q) const noexcept;

  dispatch::Table table_;
  std::vector<Arch> arches_;
  std::deque<std::string> texts_;               // the reasons choices point into (a deque never moves them)
  std::deque<KernelChoice> kernels_;            // the kernels choices point to
  std::deque<std::vector<const char*>> names_;  // their name expressions (into table_)
  std::vector<const char*> out_of_range_;
  dispatch::SelectRules rules_;
  const char* cover_reason_ = "";
  std::string summary_;
  std::string refused_;
};

}  // namespace ktune::runtime
