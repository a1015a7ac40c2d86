#pragma once
// Which compiler builds AMD code objects: `automatic` takes hipRTC where it knows the arch (the
// in-process JIT of the ROCm the machine runs) and the offline clang elsewhere; `hiprtc` and
// `clang` take that one or none. Process-wide, set once from `ktune --amd-compiler` before any
// compile; compile workers need no copy of it, since only hipRTC compiles in workers and
// `automatic` chooses hipRTC wherever a choice of hipRTC can be made.
#include <string>
#include <string_view>

namespace ktune::backend {

enum class AmdCompilerChoice { automatic, hiprtc, clang };

void set_amd_compiler_choice(AmdCompilerChoice choice) noexcept;
AmdCompilerChoice amd_compiler_choice() noexcept;

// "auto", "hiprtc", "clang" and back; parsing throws Error naming the three.
AmdCompilerChoice parse_amd_compiler_choice(std::string_view text);
std::string_view to_string(AmdCompilerChoice choice) noexcept;

}  // namespace ktune::backend
