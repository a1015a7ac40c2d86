#pragma once
// The dispatch table of one kernel family: for each arch, the winner or the gap of every tuned
// problem key, read from the database and checked by validators (PyTorch TunableOp style) before
// anything is generated from it. Codegen (dispatch/codegen.hpp) renders it; nothing here knows
// about C++ text.
//
// Which row of the database serves a key (per arch):
//  1. Measured outcomes (a run's winner, or a gap the sweep measured: no verified config)
//     compete: the one from a run whose template hash matches the current templates beats a stale
//     one, then the newest run (started_at, then run id) wins. A winner and a gap of one run: the
//     winner.
//  2. A declared gap (a person's statement, e.g. "aiter 0.1.19 has no fp8 2-token non-causal
//     fold") replaces a measured gap, whose reason it explains, but overrides nothing that was
//     measured to work: a declared gap of a key with a winner is ignored and listed in
//     ArchTable::ignored_declarations. Among several declarations of one key, one with a fallback
//     beats one without, then the smallest source text.
//
// Validators (each refusal is an Error naming the validator, the values and the way out):
//  - template hash: a key whose chosen outcome comes from a run with another template hash than
//    the current templates is refused unless Request::allow_stale (re-run the sweep, or pass
//    --allow-stale). Stale results superseded by fresh ones are not an error.
//  - device: the runs with results for one arch must share one device name, unless
//    Request::device chooses one (--device NAME).
//  - compiler: likewise for the compiler version, unless Request::compiler chooses one
//    (--compiler VERSION); results of different compilers are not comparable.
//  - precondition: no winner's config may break a precondition of its variant for its key
//    (Family::precondition_violated; qk_rope_cache: an identity rope needs a variant that clamps
//    positions), so that a row that breaks one (written by an older family, or by hand) never
//    reaches a dispatcher. Rules about fit and speed (the rest of Family::infeasible) may change
//    between sweeps and are not re-checked.
//  - fallback: following the gaps' fallbacks, each selected as a caller's next call would be
//    (dispatch/row_select.hpp), must end at a kernel, a gap without a fallback or an unsupported
//    key; gaps that fall back to one another in a loop are refused, naming the loop.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/params.hpp"
#include "db/database.hpp"
#include "kernels/family.hpp"
#include "kernels/template_lineage.hpp"

namespace ktune::dispatch {

struct Request {
  std::optional<std::string> arch;      // nullopt: every arch the database has for the family
  std::optional<std::string> device;    // device_name to take results from
  std::optional<std::string> compiler;  // compiler_version to take results from
  bool allow_stale = false;
  // A validator's refusal drops that arch (Table::refused) rather than the whole table, for
  // KTUNE_DB at run time: one stale arch must not take the others' results from a process.
  bool drop_refused_arches = false;
  std::string template_hash;  // of the current templates: jit::template_hash(family.template_file())
  // adoptable_template_hashes(family): the older hashes of runs that measured today's kernels. A
  // stale run carrying one is one `ktune migrate` updates, and the refusal says so (empty: the
  // refusal does not look).
  std::vector<AdoptableHash> adoptable;
};

// What the family says about how to call a winner, captured when the table is built so that
// rendering needs no Family.
struct KernelInfo {
  Params config;
  std::vector<std::string> name_expressions;  // Family::name_expressions(key, config)
  LaunchInfo launch;
  double median_us = 0;
  int64_t run_id = 0;
  int64_t measurement_id = 0;
  Params shape;  // what median_us was timed at
};

struct GapInfo {
  db::GapReason reason = db::GapReason::no_config;
  std::string detail;
  std::string source;              // "measured" or the declaration
  std::optional<int64_t> run_id;   // measured gaps
  std::optional<Params> fallback;  // the key to use instead, validated against the key fields
  std::string fallback_note;
};

struct Entry {
  Params key;                        // validated against Family::key_fields
  std::optional<KernelInfo> kernel;  // exactly one of kernel and gap is set
  std::optional<GapInfo> gap;
};

// A declared gap that was not used because its key was measured to work.
struct IgnoredDeclaration {
  Params key;
  std::string source;
  int64_t winner_run_id = 0;
};

struct ArchTable {
  std::string arch;
  std::vector<db::Run> runs;   // runs the entries come from, by id
  std::vector<Entry> entries;  // sorted by key (Params order)
  std::vector<IgnoredDeclaration> ignored_declarations;
  int64_t kernels() const noexcept;
  int64_t gaps() const noexcept;
};

struct Table {
  std::string family;
  std::vector<FieldSpec> key_fields;
  std::vector<FieldSpec> config_fields;
  std::vector<std::string> covering_fields;  // key fields with Family::covers_larger, in key order
  std::string bucket_field = "batch";        // Family::bucket_field
  std::vector<ArchTable> arches;             // sorted by arch, none empty
  Request request;                           // what the table was built from
  struct Refused {
    std::string arch, why;
  };
  std::vector<Refused> refused;  // Request::drop_refused_arches: the arches a validator refused
};

// The loop the gaps' fallbacks on `added.arch` would make with `added` declared (replacing a
// declaration of its key and source), as the fallback validator finds loops, except that every
// key with a winner in any run counts as served by its kernel; empty: none. `winners` and `gaps`:
// the family's in the database. For `ktune gap add`, which refuses a declaration that closes a
// loop before storing it.
std::vector<Params> declared_fallback_loop(const Family& family, const std::vector<db::Winner>& winners,
                                           const std::vector<db::Gap>& gaps, const db::Gap& added);

// Reads and validates. Throws Error when a validator refuses (unless Request::drop_refused_arches
// and another arch is left), when a row does not match the family's fields (the family changed
// since the sweep: re-run it), or when nothing is left.
Table build_table(db::Database& db, const Family& family, const Request& request);

}  // namespace ktune::dispatch
