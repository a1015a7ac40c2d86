// Template rendering: quoted includes inlined once, cycles and missing files reported, a
// directory root overriding the embedded copy, and the template hash following the includes' code.
#include "jit/templates.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include "common/error.hpp"
#include "jit/embedded_templates.hpp"

namespace ktune::jit {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh directory used as the template root for one test; restores the embedded root after.
class TemplateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ktune_templates_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    set_template_root(dir_.string());
  }
  void TearDown() override {
    set_template_root("");
    fs::remove_all(dir_);
  }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories((dir_ / path).parent_path());
    std::ofstream(dir_ / path, std::ios::binary) << text;
  }
  fs::path dir_;
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(TemplateDir, RootIsTheDirectoryGiven) {
  EXPECT_EQ(template_root(), dir_.string());
  write("k.hip", "exact\r\nbytes\n");
  EXPECT_EQ(read_template("k.hip"), "exact\r\nbytes\n");
}

// ktune's instruments (the matrix-core probes) render from the embedded copy under any root: a
// tree that lacks them (an older one, in an A/B) or that changed what they include measures nothing
// else.
TEST_F(TemplateDir, RenderEmbeddedIgnoresTheRoot) {
  write("common/wgmma.hpp", "#pragma once\nint root_marker;\n");
  EXPECT_THAT(render("common/wgmma.hpp"), HasSubstr("root_marker"));
  EXPECT_THROW(render("probe/wgmma_probe.hip"), Error) << "the root has no probe";
  const std::string probe = render_embedded("probe/wgmma_probe.hip");
  EXPECT_THAT(probe, HasSubstr("wgmma_probe("));
  EXPECT_THAT(probe, Not(HasSubstr("root_marker"))) << "its includes come from the embedded copy too";
  set_template_root("");
  EXPECT_EQ(probe, render("probe/wgmma_probe.hip"));
}

TEST_F(TemplateDir, InlinesQuotedIncludesOnceAndKeepsAngleIncludes) {
  write("common/prelude.hpp", "#pragma once\nint prelude_marker;\n");
  write("common/math.hpp", "#pragma once\n#include \"common/prelude.hpp\"\nint math_marker;\n");
  write("fam/kernel.hip", "#include <stdint.h>\n"
                          "  #include \"common/prelude.hpp\"\n"
                          "#include \"common/math.hpp\"\n"
                          "int kernel_marker;\n");
  const std::string out = render("fam/kernel.hip");
  EXPECT_EQ(out, "#include <stdint.h>\nint prelude_marker;\nint math_marker;\nint kernel_marker;\n");
  EXPECT_EQ(count(out, "prelude_marker"), 1u);
  EXPECT_THAT(out, Not(HasSubstr("#pragma once")));
  EXPECT_THAT(out, Not(HasSubstr("#include \"")));
}

// A kernel cut into phases (mla_decode/mma/) includes a phase, from a folder of its own, at its
// place inside the function body: the rendered source holds the body's lines in their order.
TEST_F(TemplateDir, InlinesAPhaseAtItsPlaceInsideAFunctionBody) {
  write("fam/phases/middle.hpp", "  int middle;\n");
  write("fam/kernel.hip", "void kernel() {\n  int first;\n#include \"fam/phases/middle.hpp\"\n  int last;\n}\n");
  EXPECT_EQ(render("fam/kernel.hip"), "void kernel() {\n  int first;\n  int middle;\n  int last;\n}\n");
}

// The build embeds the templates of subfolders too: the matrix-core kernel's phases render from
// the embedded copy, which ktune and the runtime compile without a template root.
TEST(EmbeddedTemplates, HoldTheMatrixCoreKernelsPhases) {
  const std::string kernel = render_embedded("mla_decode/mla_decode.hip");
  EXPECT_THAT(kernel, Not(HasSubstr("#include \"")));
  EXPECT_THAT(kernel, HasSubstr("produce_decoded<STAGES, CODE_SLOTS>("));  // mla_decode_mma.hip's call
  EXPECT_THAT(kernel, HasSubstr("void produce_decoded("));                 // mma/producer_decoding.hpp
  EXPECT_THAT(kernel, HasSubstr("issue_slot = [&]"));                      // mma/slot_copies.hpp
}

// A quoted include the renderer left in the source would be read by the compiler from its working
// directory (NVRTC looks beside the source name): in no hash and no cache key.
TEST_F(TemplateDir, EveryQuotedIncludeIsInlinedAndOtherFormsAreRefused) {
  write("inc.hpp", "int inc_marker;\n");
  write("spaced.hip", "  #  include   \"inc.hpp\"\nint main_part;\n");
  EXPECT_EQ(render("spaced.hip"), "int inc_marker;\nint main_part;\n");
  write("macro.hip", "int a;\n#include KTUNE_HEADER\n");
  write("open.hip", "#include \"inc.hpp\n");
  for (const char* path : {"macro.hip", "open.hip"}) {
    try {
      render(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(std::string("template '") + path), HasSubstr("#include \"path\"")));
    }
  }
  std::filesystem::create_directories(dir_ / "common");
  write("dir.hip", "#include \"common\"\n");
  EXPECT_THROW(
      try { render("dir.hip"); } catch (const Error& e) {
        EXPECT_THAT(e.what(), AllOf(HasSubstr("template 'common'"), HasSubstr("is a directory")));
        throw;
      },
      Error);
}

TEST_F(TemplateDir, IncludeCyclesAreReported) {
  write("a.hpp", "#include \"b.hpp\"\n");
  write("b.hpp", "#include \"a.hpp\"\n");
  write("self.hpp", "#include \"self.hpp\"\n");
  write("ok.hpp", "#include \"leaf.hpp\"\n#include \"leaf.hpp\"\n");
  write("leaf.hpp", "leaf\n");
  EXPECT_THROW(
      try { render("a.hpp"); } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr("include cycle through 'a.hpp'"));
        throw;
      },
      Error);
  EXPECT_THROW(render("self.hpp"), Error);
  EXPECT_EQ(render("ok.hpp"), "leaf\n");  // a repeated include is not a cycle
}

TEST_F(TemplateDir, MissingTemplatesNameThePathAndTheRoot) {
  write("main.hip", "#include \"absent.hpp\"\n");
  for (const char* path : {"nothing.hip", "main.hip"}) {
    try {
      render(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(),
                  HasSubstr(std::string("template '") + (path == std::string("main.hip") ? "absent.hpp" : path)));
      EXPECT_THAT(e.what(), HasSubstr(dir_.string()));
      if (path == std::string("main.hip")) {
        EXPECT_THAT(e.what(), HasSubstr("included by 'main.hip' line 1"));
      }
    }
  }
}

TEST_F(TemplateDir, HashFollowsTheCodeThatReachesTheCompiler) {
  write("inc.hpp", "int v = 1;\n");
  write("unrelated.hpp", "int u = 1;\n");
  write("main.hip", "#include \"inc.hpp\"\nint main_part;\n");
  const std::string h = template_hash("main.hip");
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(template_hash("main.hip"), h);
  write("unrelated.hpp", "int u = 2;\n");
  EXPECT_EQ(template_hash("main.hip"), h);
  write("inc.hpp", "// why v is 1\nint v = 1;  /* reworded */\n\n");  // cannot change a binary
  EXPECT_EQ(template_hash("main.hip"), h);
  write("inc.hpp", "int v = 2;\n");
  const std::string h2 = template_hash("main.hip");
  EXPECT_NE(h2, h);
  write("main.hip", "#include \"inc.hpp\"\nint main_part2;\n");
  EXPECT_NE(template_hash("main.hip"), h2);
}

// The hash ktune recorded before the code-only one (the definition it had: hex xxh64 of the
// rendered source): it follows every byte, a comment's too, which is what lets `ktune migrate` take
// a run that carries it as a run of these very templates.
TEST_F(TemplateDir, SourceHashIsTheOlderHashOfTheWholeRenderedSource) {
  write("inc.hpp", "int v = 1;\n");
  write("main.hip", "#include \"inc.hpp\"\n// why\nint main_part;\n");
  const std::string rendered = render("main.hip"), h = source_hash("main.hip");
  EXPECT_EQ(h, fmt::format("{:016x}", XXH64(rendered.data(), rendered.size(), 0)));
  EXPECT_NE(h, template_hash("main.hip"));  // the comment
  const std::string code = template_hash("main.hip");
  write("inc.hpp", "int v = 1;  // reworded\n");
  EXPECT_EQ(template_hash("main.hip"), code);
  EXPECT_NE(source_hash("main.hip"), h);
}

TEST(EmbeddedTemplates, UnknownPathIsAClearError) {
  ASSERT_EQ(template_root(), "");
  try {
    read_template("no/such/template.hip");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "template 'no/such/template.hip' is not embedded in this binary");
  }
}

TEST(EmbeddedTemplates, MatchTheSourceTreeByteForByteAndRender) {
  const auto embedded = embedded_templates();
  if (embedded.empty()) GTEST_SKIP() << "this build embeds no templates (templates/ has no *.hpp or *.hip)";
  for (const auto& t : embedded) {
    std::ifstream f(fs::path(KTUNE_SOURCE_DIR) / "templates" / t.path, std::ios::binary);
    ASSERT_TRUE(f) << t.path;
    const std::string on_disk((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(read_template(t.path), on_disk) << t.path;
    EXPECT_NO_THROW(render(t.path)) << t.path;
  }
}

}  // namespace
}  // namespace ktune::jit
