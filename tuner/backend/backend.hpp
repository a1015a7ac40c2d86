#pragma once
// One small interface per GPU API (ggml-style): a Backend compiles and enumerates devices,
// a Context owns one device's stream, memory, modules and events. Implementations load their
// vendor libraries with dlopen, so a binary built here starts on a machine without them and
// reports the backend "unavailable: <why>".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/target_facts.hpp"

namespace ktune::backend {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;       // "NVIDIA H200", "AMD Instinct MI300X"
  std::string arch;       // "sm_90a", "gfx942" (the compile target ktune uses for it)
  int compute_units = 0;  // SMs / CUs
  int warp_size = 0;      // 32 / 64
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int64_t shared_per_block = 0;        // default per-block limit
  int64_t shared_per_block_optin = 0;  // largest a kernel may opt in to
  int clock_khz = 0;
  bool overlapping_launches = false;  // launch_dependent overlaps the launch ahead (CUDA, 9.0 on)

  // The most data that can stay cached between launches: the L2, or a larger cache behind it
  // that the device does not report (target_facts.hpp). Timing rotates its inputs past it;
  // the copy probe exceeds it.
  int64_t last_level_cache_bytes() const noexcept {
    const TargetFacts* facts = target_facts(arch);
    return std::max(l2_bytes, facts ? facts->last_level_cache_bytes : 0);
  }
};

struct CompileRequest {
  std::string source;                         // fully rendered, self-contained source
  std::string source_name;                    // for compiler messages, e.g. "mla_decode.hip"
  std::vector<std::string> name_expressions;  // template instances to emit, e.g. "mla_decode<64,32,...>"
  std::string arch;                           // "gfx90a", "sm_90a"
  std::vector<std::string> options;           // extra compiler flags
};

struct CompileResult {
  std::vector<char> code;                  // hsaco / cubin
  std::vector<std::string> lowered_names;  // mangled symbol for each name expression, same order
  std::string log;                         // compiler output (warnings), may be empty
};

// One compiler of a backend as seen for one arch (`ktune devices`).
struct CompilerStatus {
  std::string name;     // "nvrtc", "hiprtc", "clang"
  std::string version;  // "clang 22.1.8 (/usr/bin/clang-22)"; empty where it is not there at all
  std::string why_not;  // empty when it can build the arch
  bool chosen = false;  // the one the backend compiles the arch with
};

// Device memory. Owned by the Context that allocated it; freed on destruction.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual uint64_t address() const noexcept = 0;  // device pointer as an integer
  virtual size_t size() const noexcept = 0;
  template <class T>
  T* as() const noexcept {
    return reinterpret_cast<T*>(address());
  }
};

// A loaded code object.
class Module {
 public:
  virtual ~Module() = default;
  // Opaque function handle for Context::launch. Throws Error if the symbol is missing.
  virtual void* function(std::string_view lowered_name) = 0;
};

class Event {
 public:
  virtual ~Event() = default;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// A captured sequence of launches that can be replayed with one call.
class Graph {
 public:
  virtual ~Graph() = default;
};

// One device with one stream. Not thread-safe: one Context per thread.
// Every call throws DeviceFault after a sticky device error, Error otherwise.
class Context {
 public:
  virtual ~Context() = default;
  virtual const DeviceInfo& info() const noexcept = 0;
  // Device memory free right now (it changes as this and other processes allocate).
  virtual int64_t free_memory_bytes() = 0;

  virtual std::unique_ptr<Buffer> alloc(size_t bytes) = 0;
  virtual void upload(Buffer& dst, const void* src, size_t bytes, size_t dst_offset = 0) = 0;
  virtual void download(void* dst, const Buffer& src, size_t bytes, size_t src_offset = 0) = 0;
  virtual void fill(Buffer& dst, uint8_t byte) = 0;                     // async on the stream
  virtual void copy(Buffer& dst, const Buffer& src, size_t bytes) = 0;  // device to device, async

  virtual std::unique_ptr<Module> load(std::span<const char> code) = 0;
  // Raises the dynamic shared-memory limit of `fn` when `bytes` exceeds the default.
  virtual void set_shared_limit(void* fn, size_t bytes) = 0;
  // Enqueues a launch; `args` points to each kernel argument, as in cuLaunchKernel.
  virtual void launch(void* fn, Dim3 grid, Dim3 block, size_t shared_bytes, void** args) = 0;
  // The same for a kernel that may start before the previous launch on the stream has finished, so
  // that its launch overlaps that kernel's tail: it calls wait_for_previous_kernel()
  // (templates/common/launch_order.hpp) before it reads what that kernel wrote. Backends without
  // such launches (DeviceInfo::overlapping_launches false) make an ordinary one.
  virtual void launch_dependent(void* fn, Dim3 grid, Dim3 block, size_t shared_bytes, void** args) {
    launch(fn, grid, block, shared_bytes, args);
  }

  virtual std::unique_ptr<Event> event() = 0;
  virtual void record(Event& e) = 0;
  virtual float elapsed_ms(const Event& start, const Event& stop) = 0;  // waits for stop
  virtual void synchronize() = 0;

  // Stream capture. Backends without it return nullptr from end_capture() after running the
  // launches eagerly, and the caller times eager launches instead.
  virtual void begin_capture() = 0;
  virtual std::unique_ptr<Graph> end_capture() = 0;
  virtual void replay(Graph& g) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const noexcept = 0;  // "cuda", "hip"
  // True when the targets this backend compiles for match `arch` ("sm_*" / "gfx*").
  virtual bool handles_arch(std::string_view arch) const noexcept = 0;

  // Compilation needs only a compiler (hipRTC / NVRTC libraries, or the offline clang for AMD), no
  // device or driver. A backend may have several compilers and choose one per arch (hip: hipRTC
  // where it knows the arch, else clang; backend/amd_compiler_choice.hpp): every question below
  // is about the one it chooses for `arch`.
  virtual bool compiler_available(std::string_view arch) const noexcept = 0;
  virtual std::string compiler_unavailable_reason(std::string_view arch) const = 0;
  virtual std::string compiler_version(std::string_view arch) const = 0;  // "nvrtc 13.0", "clang 22.1.8"
  // What the code-object cache key holds of the compiler: more than its version (the options it
  // always passes, a hash of its library, its path), so that a patch release or a changed option
  // misses.
  virtual std::string compiler_identity(std::string_view arch) const = 0;
  // True where compile() may run on several threads of one process for `arch` (NVRTC, clang);
  // false where it must run in worker processes (hipRTC: sweep/process_compiler.hpp).
  virtual bool compiles_in_threads(std::string_view arch) const = 0;
  // Every compiler this backend has for `arch`, chosen or not, with why one cannot build it.
  virtual std::vector<CompilerStatus> compilers(std::string_view arch) const = 0;
  virtual CompileResult compile(const CompileRequest& req) const = 0;  // req.arch's; throws CompileError
  // The files of the compiler's and the runtime's libraries in use, for people ("" where the
  // backend does not say or did not load one).
  virtual std::string compiler_library() const { return {}; }
  virtual std::string runtime_library() const { return {}; }

  // Devices need the driver / runtime library and a GPU.
  virtual bool available() const noexcept = 0;
  virtual std::string unavailable_reason() const = 0;
  virtual std::string driver_version() const = 0;  // "cuda driver 13.0", "hip runtime 5.2"
  virtual int device_count() const = 0;
  virtual DeviceInfo device_info(int ordinal) const = 0;
  virtual std::unique_ptr<Context> open(int ordinal) const = 0;
};

// All backends compiled into this binary, registered once. Never empty of entries that were
// built; each reports its own availability.
std::span<Backend* const> all();
// The backend that compiles for `arch`; throws Error naming the known arch prefixes.
Backend& for_arch(std::string_view arch);
// A backend by name ("cuda", "hip"); throws Error if it was not built.
Backend& by_name(std::string_view name);

}  // namespace ktune::backend
