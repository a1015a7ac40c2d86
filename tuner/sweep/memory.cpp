#include "sweep/memory.hpp"

#include <cstdio>
#include <cstring>

namespace ktune::sweep {
namespace {

// The value of a "Name:   1234 kB" line of /proc/self/status, in bytes.
int64_t status_kib_field(const char* name) noexcept {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  const size_t n = std::strlen(name);
  char line[256];
  long long kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, name, n) == 0 && line[n] == ':' && std::sscanf(line + n + 1, "%lld", &kib) == 1) break;
  std::fclose(f);
  return kib * 1024;
}

}  // namespace

int64_t resident_bytes() noexcept { return status_kib_field("VmRSS"); }
int64_t peak_resident_bytes() noexcept { return status_kib_field("VmHWM"); }

}  // namespace ktune::sweep
