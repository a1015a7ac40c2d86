#include "backend/amd_compiler_choice.hpp"

#include <atomic>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::backend {
namespace {
std::atomic<AmdCompilerChoice> g_choice{AmdCompilerChoice::automatic};
}  // namespace

void set_amd_compiler_choice(AmdCompilerChoice choice) noexcept { g_choice = choice; }
AmdCompilerChoice amd_compiler_choice() noexcept { return g_choice; }

AmdCompilerChoice parse_amd_compiler_choice(std::string_view text) {
  for (AmdCompilerChoice c : {AmdCompilerChoice::automatic, AmdCompilerChoice::hiprtc, AmdCompilerChoice::clang})
    if (to_string(c) == text) return c;
  throw Error(fmt::format("unknown AMD compiler '{}': auto, hiprtc or clang", text));
}

std::string_view to_string(AmdCompilerChoice choice) noexcept {
  switch (choice) {
    case AmdCompilerChoice::hiprtc: return "hiprtc";
    case AmdCompilerChoice::clang: return "clang";
    case AmdCompilerChoice::automatic: break;
  }
  return "auto";
}

}  // namespace ktune::backend
