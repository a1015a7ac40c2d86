#pragma once
// On-disk cache of compiled code objects. An entry is named by a hash of everything that can
// change the binary (rendered source, source name, name expressions, options, arch, the
// compiler's identity: Backend::compiler_identity), so a stale entry is never found rather than
// invalidated. Entries are written atomically (temporary file + rename) and carry their length,
// their own key and a checksum:
// a torn, truncated or corrupt file reads as a miss (and is removed), never as code.
#include <optional>
#include <string>
#include <string_view>

#include "backend/backend.hpp"

namespace ktune::jit {

class CodeCache {
 public:
  // Creates `dir` when absent (empty: default_dir()). Throws Error when it cannot be created.
  explicit CodeCache(std::string dir = {});

  // $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune, else $HOME/.cache/ktune.
  static std::string default_dir();
  const std::string& dir() const noexcept { return dir_; }

  // 32 hex digits (xxh3-128) over every field of `req` and `compiler_identity`.
  static std::string key(const backend::CompileRequest& req, std::string_view compiler_identity);
  std::string path_of(const std::string& key) const;

  // The entry for `key`; nullopt when absent, unreadable or not a file (an unreadable entry is
  // removed so that the recompiled one replaces it): the cache only saves time, it never fails
  // a compile.
  std::optional<backend::CompileResult> load(const std::string& key) const noexcept;
  // Empty when the entry was written; else why not ("cannot create PATH: Permission denied").
  // The cache only saves time, so a failed write costs a recompile next time and never a result.
  [[nodiscard]] std::string store(const std::string& key, const backend::CompileResult& result) const noexcept;

 private:
  std::string dir_;
};

}  // namespace ktune::jit
