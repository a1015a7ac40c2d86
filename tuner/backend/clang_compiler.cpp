#include "backend/clang_compiler.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include "common/error.hpp"
#include "common/run_command.hpp"

namespace ktune::backend {
namespace {

namespace fs = std::filesystem;

// The Debian LLVM versions tried, newest first. clang-19 is bookworm's newest; clang-22 comes from
// bookworm-security and is the first of them that knows gfx950.
constexpr int kClangVersions[] = {22, 21, 20, 19};

// Every compile passes these besides the arch and the device libraries. Device code only, without
// ROCm's own device library search (Debian's are linked explicitly below); HIP 5.2's headers still
// read __AMDGCN_WAVEFRONT_SIZE, which clang 22 no longer defines (every ktune target is wave64);
// code object version 5, which every ROCm that runs gfx942 or gfx950 loads, so that the device
// libraries' ABI version below matches whatever the clang's default is.
constexpr const char* kOptions[] = {"-x",
                                    "hip",
                                    "--cuda-device-only",
                                    "-nogpulib",
                                    "-O3",
                                    "-std=c++17",
                                    "-mcode-object-version=5",
                                    "-D__HIP_PLATFORM_AMD__",
                                    "-D__AMDGCN_WAVEFRONT_SIZE=64",
                                    "-include",
                                    "hip/hip_runtime.h",
                                    "-Wno-pragma-once-outside-header"};

// ROCm device libraries linked into every compile, as hipRTC links them: HIP's and the math and
// kernel libraries, with the control variables of hipRTC's defaults (denormals kept, no unsafe or
// finite-only math, correctly rounded sqrt, wave64, code object ABI 5). __oclc_ISA_version is
// defined by the source itself (Debian's libraries predate gfx942 and gfx950).
constexpr const char* kDeviceLibraries[] = {"hip.bc",
                                            "ocml.bc",
                                            "ockl.bc",
                                            "oclc_daz_opt_off.bc",
                                            "oclc_unsafe_math_off.bc",
                                            "oclc_finite_only_off.bc",
                                            "oclc_correctly_rounded_sqrt_on.bc",
                                            "oclc_wavefrontsize64_on.bc",
                                            "oclc_abi_version_500.bc"};
constexpr const char* kDeviceLibraryDirs[] = {"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
                                              "/usr/lib/aarch64-linux-gnu/amdgcn/bitcode"};
constexpr const char* kHipVersionHeader = "/usr/include/hip/hip_version.h";

constexpr std::string_view kNameVariable = "ktune_name_expression_";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {}", path));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string hash_files(const std::vector<std::string>& paths) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (const std::string& p : paths) {
    const std::string bytes = read_file(p);
    XXH3_64bits_update(state, bytes.data(), bytes.size());
  }
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("{:016x}", h);
}

// The clang to use, with the reason for each one that is not there.
std::string find_clang(std::vector<std::string>& tried) {
  if (const char* named = std::getenv("KTUNE_AMD_CLANG"); named && *named) {
    std::string found = find_program(named);
    if (found.empty()) tried.push_back(fmt::format("KTUNE_AMD_CLANG={} (not found)", named));
    return found;
  }
  for (int v : kClangVersions) {
    const std::string name = fmt::format("clang-{}", v);
    std::string found = find_program(name);
    if (!found.empty()) return found;
    tried.push_back(name);
  }
  return {};
}

// A folder of its own for one compile, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/ktune-clang-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (::mkdtemp(pattern.data()) == nullptr) throw Error(fmt::format("cannot create a folder like {}", pattern));
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

// Compiler output names the scratch copy of the source; the log names the caller's source.
std::string name_source_in_log(std::string log, const std::string& scratch) {
  const std::string prefix = scratch + "/";
  for (size_t at = log.find(prefix); at != std::string::npos; at = log.find(prefix, at)) log.erase(at, prefix.size());
  while (!log.empty() && log.back() == '\n') log.pop_back();
  return log;
}

void write_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out.flush()) throw Error(fmt::format("cannot write {}", path));
}

}  // namespace

std::string beside_clang(const std::string& clang, std::string_view name) {
  const fs::path p(clang);
  const std::string file = p.filename().string();
  const std::string suffix = file.starts_with("clang") ? file.substr(5) : std::string();
  return (p.parent_path() / (std::string(name) + suffix)).string();
}

int oclc_isa_version(std::string_view arch) {
  if (arch.size() < 6 || !arch.starts_with("gfx")) throw Error(fmt::format("'{}' is no gfx target", arch));
  const std::string_view digits = arch.substr(3);
  const auto hex = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw Error(fmt::format("'{}' is no gfx target", arch));
  };
  int major = 0;
  for (char c : digits.substr(0, digits.size() - 2)) major = major * 10 + hex(c);
  return major * 1000 + hex(digits[digits.size() - 2]) * 100 + hex(digits.back());
}

std::string name_expression_variables(const std::vector<std::string>& name_expressions) {
  std::string out = "\n// ktune: one variable per name expression, naming its instance's symbol.\n";
  for (size_t i = 0; i < name_expressions.size(); ++i)
    out += fmt::format("extern \"C\" __device__ __attribute__((used)) void* const {}{} = (void*)&({});\n",
                       kNameVariable, i, name_expressions[i]);
  return out;
}

std::vector<std::string> lowered_names_from_assembly(std::string_view assembly, size_t count) {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const std::string label = fmt::format("\n{}{}:", kNameVariable, i);
    const size_t at = assembly.find(label);
    const size_t quad = at == std::string_view::npos ? at : assembly.find(".quad", at + label.size());
    if (quad == std::string_view::npos)
      throw Error(fmt::format("clang's assembly names no symbol for name expression {}", i));
    size_t begin = assembly.find_first_not_of(" \t", quad + 5);
    const size_t end = assembly.find_first_of(" \t\r\n", begin);
    names.emplace_back(assembly.substr(begin, end - begin));
  }
  return names;
}

ClangCompiler::ClangCompiler() {
  std::vector<std::string> tried;
  clang_ = find_clang(tried);
  if (clang_.empty())
    throw Unavailable(fmt::format("no clang for AMD targets (tried {}; apt-get install clang-22 lld-22, or clang-19 "
                                  "lld-19 for gfx90a and gfx942 only)",
                                  fmt::join(tried, ", ")));
  const CommandResult v = run_command({clang_, "--version"});
  if (!v.ok()) throw Unavailable(fmt::format("{} --version failed: {}", clang_, first_line(v.output)));
  version_line_ = first_line(v.output);
  const size_t at = version_line_.find("version ");
  if (at == std::string::npos) throw Unavailable(fmt::format("{} says no version: {}", clang_, version_line_));
  const std::string number = version_line_.substr(at + 8, version_line_.find_first_of(" (", at + 8) - at - 8);
  version_ = "clang " + number;

  lld_ = beside_clang(clang_, "ld.lld");
  if (::access(lld_.c_str(), X_OK) != 0)
    throw Unavailable(fmt::format("{} has no ld.lld of its version beside it ({}; apt-get install lld-{})", version_,
                                  lld_, number.substr(0, number.find('.'))));
  const CommandResult lld_version = run_command({lld_, "--version"});

  const CommandResult cpus = run_command({clang_, "--target=amdgcn-amd-amdhsa", "--print-supported-cpus"});
  std::istringstream lines(cpus.output);
  for (std::string line; std::getline(lines, line);) {
    const size_t b = line.find_first_not_of(" \t");
    if (b != std::string::npos && line.compare(b, 3, "gfx") == 0) targets_.insert(line.substr(b));
  }
  const CommandResult resource = run_command({clang_, "-print-resource-dir"});
  resource_dir_ = first_line(resource.output);

  for (const char* dir : kDeviceLibraryDirs)
    if (fs::exists(fs::path(dir) / kDeviceLibraries[0])) device_libs_ = dir;
  if (device_libs_.empty())
    throw Unavailable(fmt::format("{}: no ROCm device libraries (looked in {}; apt-get install rocm-device-libs)",
                                  version_, fmt::join(kDeviceLibraryDirs, ", ")));
  if (!fs::exists(kHipVersionHeader))
    throw Unavailable(
        fmt::format("{}: no HIP headers ({} missing; apt-get install libamdhip64-dev)", version_, kHipVersionHeader));
  std::vector<std::string> hashed;
  for (const char* lib : kDeviceLibraries) hashed.push_back(device_libs_ + "/" + lib);
  const std::string libs_hash = hash_files(hashed);
  identity_ = fmt::format("{} ({}) [{}] {} ({}) device libraries {} ({}) hip headers {}", version_line_, clang_,
                          fmt::join(kOptions, " "), first_line(lld_version.output), lld_, libs_hash, device_libs_,
                          hash_files({kHipVersionHeader}));
}

std::string ClangCompiler::cannot_build(std::string_view arch) const {
  if (targets_.count(std::string(arch))) return {};
  return fmt::format("{} ({}) does not know {}", version_, clang_, arch);
}

std::vector<std::string> ClangCompiler::compile_command(const CompileRequest& req, const std::string& source,
                                                        const std::string& assembly) const {
  std::vector<std::string> cmd = {clang_, "--offload-arch=" + req.arch};
  cmd.insert(cmd.end(), std::begin(kOptions), std::end(kOptions));
  // The cuda_wrappers folder of clang's own headers, which HIP's math headers include.
  cmd.insert(cmd.end(), {"-isystem", resource_dir_ + "/include/cuda_wrappers"});
  for (const char* lib : kDeviceLibraries)
    cmd.insert(cmd.end(), {"-Xclang", "-mlink-builtin-bitcode", "-Xclang", device_libs_ + "/" + lib});
  cmd.insert(cmd.end(), req.options.begin(), req.options.end());
  cmd.insert(cmd.end(), {"-S", "-o", assembly, source});
  return cmd;
}

CompileResult ClangCompiler::compile(const CompileRequest& req) const {
  if (const std::string why = cannot_build(req.arch); !why.empty()) throw Error(why);
  const ScratchDir dir;
  // clang runs in the scratch folder on relative paths: the source's path is written into the code
  // object (its file symbol), which must not differ between two compiles of the same request.
  const std::string file = fs::path(req.source_name).filename().string();
  const std::string source = file.empty() ? "source.hip" : file;
  const std::string assembly = "code.s", object = "code.o", hsaco = "code.hsaco";
  const auto in_dir = [&](const std::string& name) { return dir.path() + "/" + name; };
  // The library of kernel functions reads the target's ISA version; Debian's ROCm 5.2 ships no
  // definition for gfx942 or gfx950, so the source defines it for every target.
  write_file(in_dir(source),
             fmt::format("{}{}\nextern \"C\" __attribute__((visibility(\"protected\"))) __constant__ const int "
                         "__oclc_ISA_version = {};\n",
                         req.source, name_expression_variables(req.name_expressions), oclc_isa_version(req.arch)));

  CompileResult result;
  const CommandResult compiled = run_command(compile_command(req, source, assembly), dir.path());
  result.log = name_source_in_log(compiled.output, dir.path());
  if (!compiled.ok())
    throw CompileError(fmt::format("{} could not compile {} for {}", version_, req.source_name, req.arch), result.log);
  result.lowered_names = lowered_names_from_assembly(read_file(in_dir(assembly)), req.name_expressions.size());

  const CommandResult assembled = run_command(
      {clang_, "-x", "assembler", "--target=amdgcn-amd-amdhsa", "-mcpu=" + req.arch, "-c", "-o", object, assembly},
      dir.path());
  if (!assembled.ok())
    throw CompileError(fmt::format("{} could not assemble {} for {}", version_, req.source_name, req.arch),
                       name_source_in_log(assembled.output, dir.path()));
  const CommandResult linked = run_command({lld_, "-shared", "-o", hsaco, object}, dir.path());
  if (!linked.ok())
    throw CompileError(fmt::format("{} could not link {} for {}", lld_, req.source_name, req.arch),
                       name_source_in_log(linked.output, dir.path()));
  const std::string code = read_file(in_dir(hsaco));
  if (code.empty()) throw Error(fmt::format("{} produced an empty code object for {}", version_, req.arch));
  result.code.assign(code.begin(), code.end());
  return result;
}

}  // namespace ktune::backend
