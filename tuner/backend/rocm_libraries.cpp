#include "backend/rocm_libraries.hpp"

#include <algorithm>
#include <cstdlib>

namespace ktune::backend {
namespace {

// Unversioned (a ROCm install's development link), then ROCm 7, 6 and 5 (Debian's).
std::vector<std::string> versions(const std::string& stem) {
  return {stem + ".so", stem + ".so.7", stem + ".so.6", stem + ".so.5"};
}

void add_in(std::vector<std::string>& out, const std::string& folder, const std::string& stem) {
  if (folder.empty()) return;
  for (const auto& name : versions(stem)) {
    const std::string path = folder + "/" + name;
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
}

}  // namespace

std::string rocm_root() {
  const char* env = std::getenv("ROCM_PATH");
  std::string root = env != nullptr && *env != '\0' ? env : "/opt/rocm";
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

std::vector<std::string> amdhip64_candidates(const std::string& root) {
  std::vector<std::string> out;
  add_in(out, root + "/lib", "libamdhip64");
  for (const auto& name : versions("libamdhip64")) out.push_back(name);
  return out;
}

std::vector<std::string> hiprtc_candidates(const std::string& root, const std::string& runtime_file) {
  std::vector<std::string> out;
  if (const auto slash = runtime_file.rfind('/'); slash != std::string::npos)
    add_in(out, runtime_file.substr(0, slash), "libhiprtc");
  add_in(out, root + "/lib", "libhiprtc");
  for (const auto& name : versions("libhiprtc")) out.push_back(name);
  return out;
}

}  // namespace ktune::backend
