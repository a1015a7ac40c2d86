#include "backend/dl_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xxhash.h>

namespace ktune::backend {

DlLibrary DlLibrary::open_first(std::initializer_list<std::string> candidates) {
  return open_first(std::vector<std::string>(candidates));
}

DlLibrary DlLibrary::open_first(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& name : candidates) {
    // RTLD_NODELETE: vendor runtimes leave threads and exit handlers behind, so their code
    // must stay mapped after the last handle closes (unmapping it crashes at process exit).
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) return DlLibrary(h, name);
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why ? why : name + ": cannot be loaded");
  }
  throw Unavailable("cannot load " + tried);
}

DlLibrary::DlLibrary(DlLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DlLibrary& DlLibrary::operator=(DlLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

DlLibrary::~DlLibrary() {
  if (handle_) dlclose(handle_);
}

void* DlLibrary::find(const char* symbol) const noexcept { return handle_ ? dlsym(handle_, symbol) : nullptr; }

std::string DlLibrary::file() const {
  link_map* map = nullptr;
  if (handle_ == nullptr || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr ||
      *map->l_name == '\0')
    return path_;
  return map->l_name;
}

std::string DlLibrary::content_hash() const {
  if (handle_ == nullptr) return "unreadable";
  std::ifstream f(file(), std::ios::binary);
  const std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  if (!f || !state || XXH3_64bits_reset(state.get()) != XXH_OK) return "unreadable";
  // In pieces: a compiler's library is large (NVRTC 13.0: 109 MB) and need not be in memory whole.
  std::vector<char> piece(1 << 20);
  std::uint64_t total = 0;
  while (f.read(piece.data(), static_cast<std::streamsize>(piece.size())) || f.gcount() > 0) {
    XXH3_64bits_update(state.get(), piece.data(), static_cast<size_t>(f.gcount()));
    total += static_cast<std::uint64_t>(f.gcount());
  }
  if (f.bad() || total == 0) return "unreadable";
  return fmt::format("{:016x}", XXH3_64bits_digest(state.get()));
}

}  // namespace ktune::backend
