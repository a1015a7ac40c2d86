#pragma once
// RAII handle of a shared library opened with dlopen. Both GPU backends load their vendor
// libraries this way, so that one ktune binary starts on machines without them.
#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace ktune::backend {

class DlLibrary {
 public:
  // Opens the first of `candidates` (names for the loader's search, or absolute paths) that
  // loads. Throws Unavailable listing each candidate with the loader's reason.
  static DlLibrary open_first(std::initializer_list<std::string> candidates);
  static DlLibrary open_first(const std::vector<std::string>& candidates);

  DlLibrary() = default;
  DlLibrary(DlLibrary&& other) noexcept;
  DlLibrary& operator=(DlLibrary&& other) noexcept;
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;
  ~DlLibrary();

  const std::string& path() const noexcept { return path_; }  // the candidate that loaded
  // The file the loader mapped for it (the candidate's own path where it is one, else where the
  // loader's search found it); the candidate when the loader does not say.
  std::string file() const;
  // xxh3-64 (16 hex digits) of the bytes of the file the loader mapped; "unreadable" when that
  // file cannot be found or read. Reads the whole file (in pieces): call it once.
  std::string content_hash() const;
  // The symbol's address, or nullptr when this library has no such symbol.
  void* find(const char* symbol) const noexcept;
  // The symbol as a function pointer of type F; throws Unavailable when it is missing.
  template <class F>
  F require(const char* symbol) const {
    if (void* p = find(symbol)) return reinterpret_cast<F>(p);
    throw Unavailable(file() + " has no symbol " + symbol);
  }

 private:
  DlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace ktune::backend
