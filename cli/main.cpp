// ktune: kernel autotuner and dispatch-table generator. Verbs register themselves (verb.hpp).
#include <algorithm>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "backend/amd_compiler_choice.hpp"
#include "common/error.hpp"
#include "jit/templates.hpp"
#include "verb.hpp"

namespace ktune::cli {

Globals& globals() {
  static Globals g;
  return g;
}

namespace {
std::vector<std::pair<int, VerbSetup>>& verbs() {
  static std::vector<std::pair<int, VerbSetup>> v;
  return v;
}
}  // namespace

VerbRegistrar::VerbRegistrar(int order, VerbSetup setup) { verbs().emplace_back(order, setup); }

}  // namespace ktune::cli

int main(int argc, char** argv) {
  using namespace ktune::cli;
  CLI::App app{"ktune: JIT kernel autotuner and dispatch-table generator"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ktune ") + KTUNE_VERSION);
  app.add_option("--templates", globals().templates_dir, "Read kernel templates from DIR instead of the embedded copy")
      ->check(CLI::ExistingDirectory);
  app.add_flag("-q,--quiet", globals().quiet, "No progress output");
  app.add_option("--amd-compiler", globals().amd_compiler,
                 "Compiler of AMD code objects: auto (hipRTC where it knows the arch, else clang), hiprtc or clang")
      ->check(CLI::IsMember({"auto", "hiprtc", "clang"}));
  // The verbs inherit this: --templates, --quiet and --amd-compiler may also follow the verb, so that a command
  // line of verb flags (a bench case, a script's argument list) can carry them.
  app.fallthrough();
  auto& vs = verbs();
  std::sort(vs.begin(), vs.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, setup] : vs) setup(app);
  app.parse_complete_callback([] {
    if (!globals().templates_dir.empty()) ktune::jit::set_template_root(globals().templates_dir);
    ktune::backend::set_amd_compiler_choice(ktune::backend::parse_amd_compiler_choice(globals().amd_compiler));
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ktune::CompileError& e) {
    fmt::print(stderr, "ktune: error: {}\n{}\n", e.what(), e.log());
    return 1;
  } catch (const ktune::Error& e) {
    fmt::print(stderr, "ktune: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ktune: internal error: {}\n", e.what());
    return 2;
  }
  return 0;
}
