// Compiling in worker processes, with fake compile workers: results come back intact, and a
// compiler crash or hang is one program's CompileError, after which compiling goes on.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "sweep/process_compiler.hpp"
#include "sweep_test_support.hpp"

namespace ktune::sweep {
namespace {
using namespace std::chrono_literals;
using testing::TempDir;

const char* kCompileWorker = R"(#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"op":"hello"'*) echo '{"ready":true}' ;;
    *'"op":"exit"'*) exit 0 ;;
    *'crash<'*) echo "comgr: internal error" >&2; kill -ABRT $$ ;;
    *'hang<'*) sleep 30 ;;
    *'bad<'*) echo '{"ok":false,"error":"could not compile","log":"k.hip:1: error: no"}' ;;
    *) echo "{\"ok\":true,\"code\":\"Y29kZQ==\",\"lowered_names\":[\"_Z1kv\"],\"log\":\"pid $$\"}" ;;
  esac
done
)";

backend::CompileRequest request(const char* name) { return {"src", "k.hip", {name}, "gfx90a", {}}; }

TEST(SweepProcessCompiler, CompilesAndSurvivesCrashes) {
  TempDir tmp;
  ProcessCompiler pc("fake 2.0", "fake 2.0 [-O3] library 0123", {"/bin/sh", tmp.write("w.sh", kCompileWorker)}, 500ms);
  EXPECT_EQ(pc.version(), "fake 2.0");
  EXPECT_EQ(pc.identity(), "fake 2.0 [-O3] library 0123");
  auto ok = pc.compile(request("good<1>"));
  EXPECT_EQ(std::string(ok.code.begin(), ok.code.end()), "code");
  EXPECT_EQ(ok.lowered_names, std::vector<std::string>{"_Z1kv"});
  EXPECT_EQ(pc.compile(request("good<2>")).log, ok.log) << "an idle worker is reused";

  auto expect_compile_error = [&](const char* name, const char* mention) {
    try {
      pc.compile(request(name));
      ADD_FAILURE() << name << " compiled";
    } catch (const CompileError& e) {
      auto all = std::string(e.what()) + "\n" + e.log();
      EXPECT_NE(all.find(mention), std::string::npos) << all;
    }
  };
  expect_compile_error("bad<1>", "k.hip:1: error: no");
  expect_compile_error("crash<1>", "comgr: internal error");
  expect_compile_error("hang<1>", "did not finish");
  EXPECT_EQ(pc.compile(request("good<3>")).code, ok.code) << "compiling goes on after a crash and a hang";
}

// A worker that cannot start is the compiler's failure, not the program's: a compile error would
// be recorded for every candidate, and kept by --resume.
TEST(SweepProcessCompiler, AWorkerThatCannotStartIsTheCompilerUnavailable) {
  TempDir tmp;
  ProcessCompiler pc("fake 2.0", "fake 2.0", {tmp.path() + "/no-such-ktune", "worker"}, 500ms);
  try {
    pc.compile(request("good<1>"));
    ADD_FAILURE() << "compiled without a worker";
  } catch (const jit::CompilerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("no compile worker starts (" + tmp.path() + "/no-such-ktune worker)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ktune::sweep
