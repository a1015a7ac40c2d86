#pragma once
// A kernel family: everything the generic core (jit, sweep, db, codegen, bench) needs to know
// about one kind of kernel, and nothing more. Adding a family means implementing this interface
// in tuner/kernels/<family>/ and registering it in registry.cpp; the core has no special cases.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"
#include "common/params.hpp"
#include "kernels/input_cache.hpp"

namespace ktune {

// What a compile target allows; known without a device (tuner/kernels/targets.cpp).
struct TargetLimits {
  std::string arch;
  int warp_size = 32;
  int64_t shared_per_block = 48 * 1024;  // largest a kernel may use (opt-in included)
  int max_threads_per_block = 1024;
  int registers_per_thread_max = 255;
  int64_t registers_per_block = 65536;  // 32-bit registers all threads of one block share at most
  bool warpgroup_mma = false;           // Hopper's wgmma (sm_90a only: the "a" features)
  // Shared memory the runtime keeps per resident block, beyond what the block asks for. On every
  // known target one compute unit (SM / CU) holds shared_per_block + this in all, and as many
  // registers as one block may have.
  int64_t shared_reserved_per_block = 0;
};
// Throws Error for an arch ktune does not know, listing the ones it does.
const TargetLimits& target_limits(std::string_view arch);
bool is_known_target(std::string_view arch) noexcept;
// "gfx90a, gfx942, ...": for messages.
std::string known_target_names();
// The same as a list, in that order.
std::vector<std::string> known_target_archs();
// How many blocks of `threads` threads and `shared_bytes` of shared memory one compute unit of
// `target` holds at once, counting registers at the most a thread may take (what launch bounds of
// one block per unit let the compiler use); 0 where one does not fit.
int64_t resident_blocks(const TargetLimits& target, int64_t shared_bytes, int threads);

// Bytes moved and floating-point operations of one launch, counted the way the family's
// contract says (FlashMLA's formulas for mla_decode).
struct Traffic {
  double bytes = 0;
  double flops = 0;
};

struct Verdict {
  bool ok = false;
  double max_abs_err = 0;  // over all checked outputs
  double rel_l2_err = 0;   // ||out - ref|| / ||ref||
  std::string detail;      // first failing element, unwritten outputs, NaNs, ...
};

// A compiled candidate: the loaded module and the mangled symbol of each name expression
// (same order as Family::name_expressions).
struct Candidate {
  Params config;
  backend::Module* module = nullptr;
  std::vector<std::string> symbols;
};

// One problem instance on a device: inputs (possibly in several rotated copies, so that timing
// sees a cold L2), outputs, scratch, and optionally the CPU reference of rotation 0.
class Instance {
 public:
  virtual ~Instance() = default;
  // Enqueues one run of `c` on copy `rotation` of the inputs. Throws Error if `c` cannot serve
  // this instance (the caller should have filtered it with Family::infeasible).
  virtual void launch(const Candidate& c, int rotation) = 0;
  virtual int rotations() const noexcept = 0;
  // Poisons the outputs of rotation 0 (so that unwritten elements are caught), for verify.
  virtual void poison() = 0;
  // Downloads the outputs of rotation 0 and compares them with the reference.
  // Requires an instance made with_reference.
  virtual Verdict verify() = 0;
  virtual Traffic traffic() const noexcept = 0;
};

// Launch geometry a dispatcher needs to call a winner without ktune (static part only; the
// grid depends on run-time arguments and is computed by the family's launch code).
struct LaunchInfo {
  int threads_per_block = 0;
  int64_t shared_bytes = 0;
};

// Earlier templates of a family whose machine code is that of the templates of template hash `to`:
// every kernel of the default spaces compiled from them is byte for byte the same code object
// (scripts/code_objects_diff.py), which `evidence` ("experiments/<slug>") shows. Runs recorded
// under `from` measured today's kernels, so `ktune migrate` gives them today's hash; a pair counts
// only while `to` is today's template hash, or leads to it through other pairs
// (kernels/template_lineage.hpp).
struct EquivalentTemplates {
  std::string_view from;
  std::string_view to;
  std::string_view evidence;
};

class Family {
 public:
  virtual ~Family() = default;
  virtual std::string_view name() const noexcept = 0;
  virtual std::string_view summary() const noexcept = 0;

  // Problem key fields (what dispatch switches on; arch is implicit and not listed).
  virtual const std::vector<FieldSpec>& key_fields() const noexcept = 0;
  // Tuning knobs.
  virtual const std::vector<FieldSpec>& config_fields() const noexcept = 0;
  // Run-time shape fields beyond the key (e.g. ctx, page_size), used for timing.
  virtual const std::vector<FieldSpec>& shape_fields() const noexcept = 0;

  // Template file (relative to the templates root) that holds the family's kernels. It
  // includes "common/prelude.hpp"; the JIT renders both into one source.
  virtual std::string_view template_file() const noexcept = 0;
  // The family's earlier templates of the same machine code, as data with its evidence (a table
  // in tuner/kernels/<family>/). Default: none.
  virtual std::span<const EquivalentTemplates> equivalent_templates() const noexcept { return {}; }
  // Kernel template instances a candidate needs, as C++ name expressions
  // ("ktune::mla_decode_kernel<64, 32, ...>"). The first is the main kernel.
  virtual std::vector<std::string> name_expressions(const Params& key, const Params& config) const = 0;
  // Why `config` cannot serve `key` on `target` (shared memory, tile shape, precondition),
  // or nullopt when it can. Pure function: the sweep prunes with it before compiling.
  virtual std::optional<std::string> infeasible(const Params& key, const Params& config,
                                                const TargetLimits& target) const = 0;
  // The part of infeasible() that is about correctness rather than fit or speed: why `config`
  // would compute wrong results for `key` because the key breaks a precondition of the variant
  // (qk_rope_cache: a variant that does not clamp positions cannot read a 1-row table), or
  // nullopt. Codegen refuses a winner that breaks one, whatever the database says, so that a
  // dispatcher can never route a key to such a variant. Default: no preconditions.
  virtual std::optional<std::string> precondition_violated(const Params& key, const Params& config) const {
    return std::nullopt;
  }
  virtual LaunchInfo launch_info(const Params& key, const Params& config) const = 0;
  // Why the timing shape `shape` cannot be set up for `key` (mla_decode: a context shorter than
  // the block), or nullopt. The sweep refuses such a space and `bench` such a shape before they
  // look for a device: found when the inputs are drawn, every config of the key would fail.
  // Default: every shape fits.
  virtual std::optional<std::string> shape_unfit(const Params& key, const Params& shape) const { return std::nullopt; }
  // True when a winner tuned for a larger value of key field `field` also serves smaller values
  // correctly, because the value is a run-time argument and the kernel masks the padding
  // (mla_decode: heads and block_len). The generated dispatcher then covers an untuned value with
  // the smallest larger tuned one, reported as a fallback. Default: exact values only.
  virtual bool covers_larger(std::string_view field) const noexcept { return false; }
  // The key fields by how strongly they decide which config wins, strongest first. A sweep runs
  // a key's configs fastest first on the most similar key it has already measured (equal in the
  // first of these fields, then in the next, ...), so that its first candidate sets a tight
  // screening cutoff. Default: the key fields as declared.
  virtual std::vector<std::string> ranking_fields() const {
    std::vector<std::string> names;
    for (const auto& f : key_fields()) names.push_back(f.name);
    return names;
  }
  // The key field the generated dispatcher resolves by the nearest tuned bucket (the smallest
  // tuned value >= the query's, else the largest): requests per launch for mla_decode, tokens per
  // launch for qk_rope_cache. A name that is no key field of the family means: no bucket field.
  virtual std::string_view bucket_field() const noexcept { return "batch"; }
  // The shape an instance of `key` is set up with: a shape field of the bucket field's name at 0
  // stands for the key's value (mla_decode's batch, qk_rope_cache's tokens), so that one space
  // serves every bucket; a family whose keys ignore other shape fields says so too. Two shapes
  // time the same problem when these are equal.
  virtual Params effective_shape(const Params& key, const Params& shape) const {
    Params s = shape;
    if (s.find(bucket_field()) == 0)
      if (const auto value = key.find(bucket_field())) s.set(bucket_field(), *value);
    return s;
  }

  // Small shapes that exercise masks and edges; every candidate is verified on all of them.
  virtual std::vector<Params> verify_shapes(const Params& key) const = 0;
  // Key fields that every verify shape sets itself, so that neither the verify shapes nor the
  // instances made from them depend on the key's value (mla_decode's batch, qk_rope_cache's
  // tokens). A sweep verifies a program once for keys that differ only in these: the same
  // program on the same inputs. Default: none.
  virtual std::vector<std::string> fields_verification_ignores() const { return {}; }
  // Builds an instance on `ctx`. Inputs are random (never zeros), drawn from `seed`.
  // With `with_reference` the CPU reference (double accumulation) is computed too.
  virtual std::unique_ptr<Instance> instantiate(backend::Context& ctx, const Params& key, const Params& shape,
                                                uint64_t seed, bool with_reference) const = 0;
  // An instance to time (no reference) whose inputs may come from, or go into, `inputs`, shared
  // with other keys' instances: a family whose large inputs do not depend on every key field
  // draws those from a seed of the fields they do depend on. Default: instantiate()'s own inputs.
  virtual std::unique_ptr<Instance> instantiate_for_timing(backend::Context& ctx, const Params& key,
                                                           const Params& shape, uint64_t seed,
                                                           InputCache& inputs) const {
    (void)inputs;
    return instantiate(ctx, key, shape, seed, false);
  }
};

// All registered families, in a fixed order.
const std::vector<const Family*>& families();
// Throws Error listing the known families.
const Family& family(std::string_view name);

}  // namespace ktune
