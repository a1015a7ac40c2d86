#pragma once
// Code objects loaded once per (device, code object) and kept for the life of the cache: the
// first launch of a kernel on a device reads its file (checking the bytes against the xxh64 in its
// name) or takes its run-time compiled bytes, loads it and resolves its symbols, under one mutex,
// so that concurrent first launches load it once; later launches find it in the map.
#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "dispatch/runtime/choice.hpp"
#include "dispatch/runtime/gpu_api.hpp"

namespace ktune::runtime {

// A code object file that is not in the package directories, or whose bytes do not match its name.
class MissingCodeObject : public Error {
 public:
  using Error::Error;
};

// The kernels of one code object, in the order of its symbols.
inline constexpr size_t kMaxKernels = 4;
using LoadedKernels = std::array<void*, kMaxKernels>;

class CodeObjectCache {
 public:
  // `roots`: where to look for a package's code object files, in order: root/<package>/file,
  // then root/file (a root that is itself one package directory).
  explicit CodeObjectCache(std::vector<std::string> roots) : roots_(std::move(roots)) {}
  ~CodeObjectCache();
  CodeObjectCache(const CodeObjectCache&) = delete;
  CodeObjectCache& operator=(const CodeObjectCache&) = delete;

  // The kernels of `object` on `device`, loading it on first use with `api`; the main kernel
  // (symbol 0) gets `shared_bytes` of dynamic shared memory. Throws MissingCodeObject, or Error
  // when the driver refuses the load or a symbol; a failed load is retried on the next call.
  LoadedKernels get(const GpuApi& api, const Device& device, const CodeObject& object, size_t shared_bytes);

  size_t loads() const;  // code objects loaded so far
  const std::vector<std::string>& roots() const noexcept { return roots_; }

 private:
  std::string read(const CodeObject& object) const;

  struct Loaded {
    const GpuApi* api;
    void* module;
    LoadedKernels kernels;
  };
  std::vector<std::string> roots_;
  mutable std::mutex mutex_;
  std::map<std::pair<const void*, const CodeObject*>, Loaded> loaded_;
};

}  // namespace ktune::runtime
