#pragma once
// Where ktune finds AMD's HIP runtime (libamdhip64) and hipRTC (libhiprtc), as ROCm's users set a
// machine up: the ROCm install that ROCM_PATH names, else /opt/rocm, comes before any copy the
// loader finds by name (LD_LIBRARY_PATH, a distribution's package such as Debian's ROCm 5.2).
// hipRTC is looked for beside the runtime that loaded first, so that the two come from one
// install. ROCm 7, 6 and Debian's 5 name their libraries with those major versions. The tuner's
// backend and ktune_runtime load HIP through this one order.
#include <string>
#include <vector>

namespace ktune::backend {

// $ROCM_PATH when set and not empty, else /opt/rocm.
std::string rocm_root();

// libamdhip64 candidates, first to last: <root>/lib, then the loader's search by name.
std::vector<std::string> amdhip64_candidates(const std::string& root);
// libhiprtc candidates, first to last: the folder of the runtime that loaded (`runtime_file`, may
// be empty), <root>/lib, then the loader's search by name.
std::vector<std::string> hiprtc_candidates(const std::string& root, const std::string& runtime_file);

}  // namespace ktune::backend
