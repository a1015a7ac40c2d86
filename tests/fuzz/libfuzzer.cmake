# Included with KTUNE_BUILD_FUZZERS before any target exists. Sets KTUNE_HAVE_LIBFUZZER when the
# compiler links a libFuzzer target; then every source of the build gets coverage feedback
# (fuzzer-no-link), so that the fuzzers are guided by the parser and loader they call, not only
# by their own few lines. Elsewhere (g++, clang without libclang-rt-dev) the fuzzers are left out
# with the reason.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }
]] KTUNE_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(KTUNE_HAVE_LIBFUZZER)
  add_compile_options(-fsanitize=fuzzer-no-link)
  message(STATUS "ktune: fuzzers ON (${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} links libFuzzer)")
else()
  message(WARNING "ktune: fuzzers OFF: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=fuzzer "
                  "(configure with CMAKE_CXX_COMPILER=clang++-14; Debian: clang-14 libclang-rt-14-dev)")
endif()
