// Proof in the machine code: every math path of mla_decode compiled for each AMD target emits
// the instructions it claims. The code objects are disassembled with llvm-objdump of the offline
// compiler's LLVM, and each path's row of kMathPaths names the instructions that must appear (the
// MFMA of the cache type's operands) and those that must not (any MFMA on SIMT; fp8 MFMA on the
// software-decode path). A path that silently falls back to other instructions fails: the last
// test plants such a fallback and shows that the check catches it.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend/backend.hpp"
#include "backend/clang_compiler.hpp"
#include "common/error.hpp"
#include "common/run_command.hpp"
#include "compile/family_compile_support.hpp"
#include "jit/templates.hpp"
#include "kernels/mla_decode/family.hpp"
#include "support/temp_dir.hpp"

namespace ktune {
namespace {

const Family& family() { return mla::mla_decode_family(); }

// One math path: which instances of the default space take it, and what their machine code must
// and must not contain (regular expressions matched against whole mnemonics).
struct MathPath {
  const char* name;
  const char* kernel;                  // the template: "ktune::mla_decode<" or "ktune::mla_decode_mma<"
  int math;                            // its MATH argument
  std::set<int> kv_dtypes;             // its KV_DTYPE arguments (0 bf16, 1 fp8_e4m3fn, 2 fp8_e4m3fnuz)
  std::set<std::string> archs;         // the targets it exists on (empty: every AMD target)
  std::vector<const char*> required;   // each matches at least one instruction
  std::vector<const char*> forbidden;  // none matches any instruction
};

// bf16 operands: v_mfma_f32_16x16x16bf16_1k on gfx90a, v_mfma_f32_16x16x16_bf16 from gfx942 on.
constexpr const char* kMfmaBf16 = "v_mfma_f32_\\d+x\\d+x\\d+_?bf16(_1k)?";
// f16 operands ("_?f16" cannot match the "_bf16" of the row above).
constexpr const char* kMfmaF16 = "v_mfma_f32_\\d+x\\d+x\\d+_?f16";
constexpr const char* kMfmaFp8 = "v_mfma_\\w*(fp8|bf8)\\w*";
constexpr const char* kAnyMfma = "v_mfma\\w*";
// gfx950's double-rate bf16 form (K = 32) and the K = 16 forms it replaces.
constexpr const char* kMfmaBf16X32 = "v_mfma_f32_\\d+x\\d+x32_bf16";
constexpr const char* kMfmaBf16X16 = "v_mfma_f32_\\d+x\\d+x16_?bf16(_1k)?";

const std::vector<MathPath>& math_paths() {
  static const std::vector<MathPath> paths = {
      {"SIMT", "ktune::mla_decode<", 0, {0, 1, 2}, {}, {}, {kAnyMfma}},
      {"MFMA, bf16 cache", "ktune::mla_decode_mma<", 1, {0}, {}, {kMfmaBf16}, {kMfmaF16, kMfmaFp8}},
      // fp8 codes decoded in software to f16 before the f16 MFMA: no fp8 matrix instruction.
      {"MFMA, fp8 cache decoded in software", "ktune::mla_decode_mma<", 1, {1, 2}, {}, {kMfmaF16}, {kMfmaFp8}},
      // mfma_native (MATH 5): the cache's codes straight into the fp8 MFMA for Q K^T (fnuz on gfx942,
      // OCP on gfx950), P V on the f16 MFMA as mma's; bf16 on gfx950's 16x16x32 form alone.
      {"native fp8 MFMA, fp8_e4m3fnuz cache",
       "ktune::mla_decode_mma<",
       5,
       {2},
       {"gfx942"},
       {kMfmaFp8, kMfmaF16},
       {kMfmaBf16}},
      {"native fp8 MFMA, fp8_e4m3fn cache",
       "ktune::mla_decode_mma<",
       5,
       {1},
       {"gfx950"},
       {kMfmaFp8, kMfmaF16},
       {kMfmaBf16}},
      {"x32 bf16 MFMA, bf16 cache",
       "ktune::mla_decode_mma<",
       5,
       {0},
       {"gfx950"},
       {kMfmaBf16X32},
       {kMfmaBf16X16, kMfmaF16, kMfmaFp8}},
  };
  return paths;
}

// The n-th template argument of "ktune::kernel<a, b, ...>".
int template_argument(const std::string& name, int n) {
  size_t at = name.find('<') + 1;
  for (int i = 0; i < n; ++i) at = name.find(',', at) + 1;
  return std::stoi(name.substr(at));
}

// The first instance of the default space on `arch` that takes `path` and is causal, and the
// first that is not: both masks' code.
std::vector<std::string> instances_of(const MathPath& path, const std::string& arch) {
  std::vector<std::string> picked;
  std::set<int> causal_seen;
  for (const std::string& n : compile_test::feasible_instances(family(), "default", arch)) {
    if (n.rfind(path.kernel, 0) != 0 || template_argument(n, 4) != path.math ||
        !path.kv_dtypes.count(template_argument(n, 5)))
      continue;
    if (causal_seen.insert(template_argument(n, 6)).second) picked.push_back(n);
  }
  return picked;
}

// The mnemonics of every instruction in llvm-objdump's disassembly of `code`.
std::multiset<std::string> mnemonics(const std::string& objdump, const std::vector<char>& code) {
  test_support::TempDir dir;
  const std::string file = dir.path() + "/code.hsaco";
  {
    std::ofstream out(file, std::ios::binary);
    out.write(code.data(), static_cast<std::streamsize>(code.size()));
  }
  const CommandResult r = run_command({objdump, "-d", file});
  if (!r.ok()) throw Error(fmt::format("{} -d failed: {}", objdump, r.output));
  std::multiset<std::string> found;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '\t') continue;  // instructions are indented by a tab
    std::istringstream words(line);
    std::string word;
    if (words >> word && word.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos)
      found.insert(word);
  }
  return found;
}

// What `code` breaks of `path`'s row: a required pattern no instruction matches, a forbidden one
// that some instruction matches. Empty when the code is what the path claims.
std::vector<std::string> violations(const MathPath& path, const std::multiset<std::string>& instructions) {
  std::vector<std::string> broken;
  const auto count = [&](const char* pattern) {
    const std::regex re(pattern);
    size_t n = 0;
    for (const std::string& i : instructions) n += std::regex_match(i, re);
    return n;
  };
  for (const char* p : path.required)
    if (count(p) == 0) broken.push_back(fmt::format("no instruction matches the required {}", p));
  for (const char* p : path.forbidden)
    if (const size_t n = count(p)) broken.push_back(fmt::format("{} instructions match the forbidden {}", n, p));
  return broken;
}

// llvm-objdump of the offline compiler's LLVM, or why there is none.
std::string objdump(std::string& why) {
  try {
    const backend::ClangCompiler clang;
    const std::string tool = clang.tool("llvm-objdump");
    if (find_program(tool).empty())
      why = tool + " is missing (apt-get install llvm-" + clang.version().substr(6, 2) + ")";
    return why.empty() ? tool : std::string();
  } catch (const Unavailable& e) {
    why = e.what();
    return {};
  }
}

class AmdIsa : public testing::TestWithParam<std::string> {};

TEST_P(AmdIsa, EveryMathPathEmitsWhatItClaims) {
  const std::string arch = GetParam();
  const backend::Backend& b = backend::for_arch(arch);
  if (!b.compiler_available(arch)) GTEST_SKIP() << b.compiler_unavailable_reason(arch);
  std::string why;
  const std::string tool = objdump(why);
  if (tool.empty()) GTEST_SKIP() << why;
  const std::string source = jit::render(family().template_file());
  for (const MathPath& path : math_paths()) {
    if (!path.archs.empty() && !path.archs.count(arch)) continue;
    const auto names = instances_of(path, arch);
    ASSERT_FALSE(names.empty()) << "no instance of the default space takes " << path.name << " on " << arch;
    for (const std::string& name : names) {
      const auto result = b.compile({source, std::string(family().template_file()), {name}, arch, {}});
      const auto instructions = mnemonics(tool, result.code);
      ASSERT_FALSE(instructions.empty()) << name << ": nothing disassembled";
      for (const std::string& v : violations(path, instructions))
        ADD_FAILURE() << path.name << " on " << arch << " (" << name << ", " << b.compiler_version(arch) << "): " << v;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, AmdIsa, testing::Values("gfx90a", "gfx942", "gfx950"),
                         [](const auto& info) { return info.param; });

// The check fails where a path silently falls back: the MFMA product of bf16 operands replaced by
// lane-wise SIMT arithmetic (the kernel still compiles and runs, with other instructions) breaks
// the bf16 MFMA row, which the unplanted source passes (the test above).
TEST(AmdIsaPlanted, AnMfmaPathThatFallsBackToSimtFails) {
  const std::string arch = "gfx942";
  const backend::Backend& b = backend::for_arch(arch);
  if (!b.compiler_available(arch)) GTEST_SKIP() << b.compiler_unavailable_reason(arch);
  std::string why;
  const std::string tool = objdump(why);
  if (tool.empty()) GTEST_SKIP() << why;
  std::string source = jit::render(family().template_file());
  const std::string mfma = "c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);";
  const size_t at = source.find(mfma);
  ASSERT_NE(at, std::string::npos) << "the template no longer has '" << mfma << "'";
  source.replace(at, mfma.size(),
                 "for (int i = 0; i < 4; ++i) c[i] += static_cast<float>(a[i]) * static_cast<float>(b[i]);");
  const MathPath& bf16 = math_paths().at(1);
  const auto names = instances_of(bf16, arch);
  ASSERT_FALSE(names.empty());
  const auto result = b.compile({source, std::string(family().template_file()), {names.front()}, arch, {}});
  const auto broken = violations(bf16, mnemonics(tool, result.code));
  ASSERT_EQ(broken.size(), 1u) << "the planted SIMT fallback was not caught";
  EXPECT_NE(broken[0].find("required"), std::string::npos) << broken[0];
}

}  // namespace
}  // namespace ktune
