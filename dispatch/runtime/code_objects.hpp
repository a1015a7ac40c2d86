#pragma once
// Code objects of the package, loaded once per (device, code object) and kept for the life of the
// cache: the first launch of a kernel on a device reads its file (checking the bytes against the
// xxh64 in its name), loads it and resolves its symbols, under one mutex, so that concurrent
// first launches load it once; later launches find it in the map.
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "dispatch/runtime/gpu_api.hpp"

namespace ktune::runtime {

// A code object file that is not in the package directories, or whose bytes do not match its name.
class MissingCodeObject : public Error {
 public:
  using Error::Error;
};

struct LoadedKernels {
  void* main = nullptr;
  void* combine = nullptr;
};

class CodeObjectCache {
 public:
  // `dirs`: where to look for code object files, in order.
  explicit CodeObjectCache(std::vector<std::string> dirs) : dirs_(std::move(dirs)) {}
  ~CodeObjectCache();
  CodeObjectCache(const CodeObjectCache&) = delete;
  CodeObjectCache& operator=(const CodeObjectCache&) = delete;

  // The kernels of code object `index` on `device`, loading it on first use with `api`.
  // Throws MissingCodeObject, or Error when the driver refuses the load or a symbol; a failed
  // load is retried on the next call.
  LoadedKernels get(const GpuApi& api, const Device& device, size_t index, size_t shared_bytes);

  size_t loads() const;  // code objects loaded so far
  const std::vector<std::string>& dirs() const noexcept { return dirs_; }

 private:
  std::string read(size_t index) const;

  struct Loaded {
    const GpuApi* api;
    void* module;
    LoadedKernels kernels;
  };
  std::vector<std::string> dirs_;
  mutable std::mutex mutex_;
  std::map<std::pair<const void*, size_t>, Loaded> loaded_;
};

}  // namespace ktune::runtime
