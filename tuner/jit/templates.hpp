#pragma once
// Kernel template sources: embedded at build time, overridable with a directory (--templates).
// Rendering inlines quoted #include directives so that hipRTC / NVRTC get one self-contained
// source; the hash of that rendered text is the template hash stored with every result.
#include <string>
#include <string_view>

namespace ktune::jit {

// Reads templates from `dir` instead of the embedded copy (empty = embedded).
void set_template_root(std::string dir);
const std::string& template_root() noexcept;

// Contents of one template file (relative path). Throws Error if it does not exist.
std::string read_template(std::string_view path);

// `path` with every `#include "x"` replaced by the contents of template x (once each).
// Throws Error on a missing include or an include cycle.
std::string render(std::string_view path);

// render(path) from the templates embedded in this binary, whatever --templates says: for ktune's
// own instruments (the matrix-core probes), which must measure the same on both sides of an A/B of
// template trees, and exist in a tree older than they are.
std::string render_embedded(std::string_view path);

// Hex xxh64 of code_text(render(path)): changes whenever anything that the compiler acts on
// changes, and not for a comment or a blank line.
std::string template_hash(std::string_view path);

// Hex xxh64 of render(path), comments and all: the template hash that ktune recorded before the
// code-only one. A run carrying it measured these very templates, byte for
// byte, which is how `ktune migrate` knows that it may give such a run template_hash(path).
std::string source_hash(std::string_view path);

}  // namespace ktune::jit
