#pragma once
// Each verb lives in its own file and registers itself here; main.cpp knows none of them.
#include <CLI/CLI.hpp>
#include <string>

namespace ktune::cli {

// Options every verb sees (set by main.cpp before the verb runs).
struct Globals {
  std::string templates_dir;  // --templates: override the embedded templates
  bool quiet = false;
  std::string amd_compiler = "auto";  // --amd-compiler: auto, hiprtc or clang
};
Globals& globals();

using VerbSetup = void (*)(CLI::App& app);
struct VerbRegistrar {
  // `order` fixes the position in --help.
  VerbRegistrar(int order, VerbSetup setup);
};

}  // namespace ktune::cli

#define KTUNE_CONCAT2(a, b) a##b
#define KTUNE_CONCAT(a, b) KTUNE_CONCAT2(a, b)
#define KTUNE_VERB(order, setup) \
  static const ::ktune::cli::VerbRegistrar KTUNE_CONCAT(ktune_verb_, __LINE__)(order, setup)
