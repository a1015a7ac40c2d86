#include "backend/dl_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>
#include <xxhash.h>

namespace ktune::backend {

DlLibrary DlLibrary::open_first(std::initializer_list<std::string> candidates) {
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

std::string DlLibrary::content_hash() const {
  link_map* map = nullptr;
  if (handle_ == nullptr || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr)
    return "unreadable";
  std::error_code ec;
  const auto size = std::filesystem::file_size(map->l_name, ec);
  if (ec || size == 0) return "unreadable";
  std::string bytes(size, '\0');
  std::ifstream f(map->l_name, std::ios::binary);
  if (!f.read(bytes.data(), static_cast<std::streamsize>(size))) return "unreadable";
  return fmt::format("{:016x}", XXH3_64bits(bytes.data(), bytes.size()));
}

}  // namespace ktune::backend
