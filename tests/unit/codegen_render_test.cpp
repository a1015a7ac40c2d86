// Rendering the dispatch header as text: escaping of database text, determinism, provenance, and
// the atomic write. Whether the text compiles and answers correctly is codegen_compile_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "dispatch/codegen.hpp"
#include "dispatch/cpp_text.hpp"
#include "dispatch/write_file.hpp"
#include "dispatch_support.hpp"

namespace ktune::dispatch {
namespace {

using test::config;
using test::key;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

TEST(CodegenText, IdentifiersAreValidAndNeverKeywordsOrReserved) {
  EXPECT_EQ(identifier("kv_dtype"), "kv_dtype");
  EXPECT_EQ(identifier("auto"), "auto_");
  EXPECT_EQ(identifier("default"), "default_");
  EXPECT_EQ(identifier("fp8-e4m3"), "fp8_e4m3");
  EXPECT_EQ(identifier("8bit"), "v8bit");
  EXPECT_EQ(identifier("_Reserved"), "v_Reserved");
  EXPECT_EQ(identifier(""), "v");
  EXPECT_THAT(identifier("a__b"), Not(HasSubstr("__")));
  EXPECT_EQ(type_name("kv_dtype"), "KvDtype");
  EXPECT_EQ(type_name("rope-mode"), "RopeMode");
}

TEST(CodegenText, StringLiteralsKeepEveryByteAndEscapeTheRest) {
  EXPECT_EQ(string_literal("plain text"), "\"plain text\"");
  EXPECT_EQ(string_literal("a\"b\\c?"), "\"a\\\"b\\\\c\\?\"");
  EXPECT_EQ(string_literal("line\nnext"), "\"line\\012next\"");
  // Three octal digits always, so that a following digit cannot extend the escape.
  EXPECT_EQ(string_literal(std::string("\0"
                                       "1",
                                       2)),
            "\"\\0001\"");
  EXPECT_EQ(string_literal("\xc3\xa9"), "\"\\303\\251\"");
}

TEST(CodegenText, CommentTextCannotCloseTheCommentOrSpanLines) {
  const auto c = comment_text("end */ start /* log\nnext\\");
  EXPECT_THAT(c, AllOf(Not(HasSubstr("*/")), Not(HasSubstr("/*")), Not(HasSubstr("\n")), HasSubstr("next")));
  EXPECT_EQ(comment_text("**//"), "** //");  // "*/" broken apart, "//" left alone
  // A backslash at the end of a line would splice the next into the comment; "??/" is one where
  // trigraphs are on.
  EXPECT_EQ(comment_text("C:\\dir\\"), "C:?dir?");
  EXPECT_EQ(comment_text("missing ?"
                         "?/"),
            "missing ? ?/");
  EXPECT_EQ(comment_text("a\\\\b"), "a? ?b");
}

TEST(CodegenText, ExcerptIsTheFirstLineCutOnACharacterBoundary) {
  EXPECT_EQ(excerpt("error: too many registers\nnote: in kernel\n", 100), "error: too many registers...");
  EXPECT_EQ(excerpt("one line\n", 100), "one line");
  EXPECT_EQ(excerpt("abcdef", 3), "abc...");
  EXPECT_EQ(excerpt("ab\xc3\xa9z", 3), "ab...");  // would split the two bytes of U+00E9
}

// A small database with kernels, a measured gap with a hostile compiler log, and a declared gap.
void fill(test::ToyDb& t) {
  auto r = t.run();
  t.ok(r, key(16, 2, 0, 1, 32), config(32, 2, 1), 9.0);
  t.ok(r, key(16, 2, 0, 1, 1), config(64), 5.5);
  t.ok(r, key(64, 1, 1, 0, 32), config(128, 4, 0), 21.0);
  t.measured_gap(r, "sm_90a", key(128, 16, 1, 2, 32), db::GapReason::compile_error,
                 "error: \"*/ /* \\ \xc3\xa9 too much shared memory\nsecond line");
  t.declared_gap("sm_90a", key(8, 2, 0, 1, 32), std::string(db::test::kAiterFoldSource), "abort() in the CSV lookup",
                 key(8, 4, 0, 1, 32).canonical(), "pad the block to 4 tokens");
}

TEST(CodegenRender, SameDatabaseGivesTheSameBytes) {
  test::ToyDb t;
  fill(t);
  const auto first = render_header(build_table(t.db(), test::toy(), test::request()));
  const auto second = render_header(build_table(t.db(), test::toy(), test::request()));
  EXPECT_EQ(first, second);
  // A copy of the file (with its write-ahead log) is the same database.
  db::test::TempDir dir;
  fs::copy_file(t.path(), dir.file("copy.db"));
  if (fs::exists(t.path() + "-wal")) fs::copy_file(t.path() + "-wal", dir.file("copy.db-wal"));
  auto copy = db::Database::open(dir.file("copy.db"), false, true);
  EXPECT_EQ(render_header(build_table(*copy, test::toy(), test::request())), first);
  // Twin: one more result changes the text.
  t.ok(t.run(), key(32, 1, 0, 0, 8), config(16), 3.0);
  EXPECT_NE(render_header(build_table(t.db(), test::toy(), test::request())), first);
}

TEST(CodegenRender, TextDoesNotDependOnTheCurrentTemplatesWhenTheSelectionIsTheSame) {
  // A header made with --allow-stale names the runs it came from, not the current templates'
  // hash: the same selection gives the same text.
  test::ToyDb t;
  fill(t);
  const auto fresh = render_header(build_table(t.db(), test::toy(), test::request()));
  auto stale = test::request("0000000000000000");
  stale.allow_stale = true;
  EXPECT_EQ(render_header(build_table(t.db(), test::toy(), stale)), fresh);
}

TEST(CodegenRender, HeaderDeclaresTheFamilyTypesAndProvenance) {
  test::ToyDb t;
  fill(t);
  const auto h = render_header(build_table(t.db(), test::toy(), test::request()));
  EXPECT_THAT(h, AllOf(HasSubstr("namespace ktune_dispatch::toy_decode {"),
                       HasSubstr("enum class KvDtype : std::int64_t { bf16 = 0, fp8_e4m3fn = 1, fp8_e4m3fnuz = 2 };"),
                       HasSubstr("enum class Policy : std::int64_t { auto_ = 0, fixed = 1 };"),
                       HasSubstr("KvDtype kv_dtype;"), HasSubstr("std::int64_t rows;"),
                       HasSubstr("constexpr Selection select(std::string_view arch, const Key& key) noexcept"),
                       HasSubstr("inline constexpr std::size_t kTableSize = 5;"),
                       HasSubstr("inline constexpr std::size_t kArchCount = 1;")));
  EXPECT_THAT(h, AllOf(HasSubstr("ktune " KTUNE_VERSION), HasSubstr("arch sm_90a: 3 kernel(s), 2 gap(s)"),
                       HasSubstr("run 1, started 2025-06-01T10:01:00Z: device 'NVIDIA H200' (132 CUs)"),
                       HasSubstr("driver '580.65', compiler 'nvrtc 13.0'"),
                       HasSubstr("template hash " + std::string(test::kHash)),
                       HasSubstr("command: ktune sweep --kernel mla_decode"),
                       HasSubstr("Regenerate: ktune codegen --db DB --kernel toy_decode --out FILE")));
  EXPECT_THAT(
      h, AllOf(HasSubstr("\"toy::attn<32, 0, 1>\", \"toy::combine<2>\""), HasSubstr("{32, 2, Policy::fixed}, kNames"),
               HasSubstr("compile_error (measured in run 1): error: \\\"*/ /* \\\\ \\303\\251"),
               HasSubstr("declared (aiter 0.1.19 has no fp8 2-token non-causal fold): abort() in the CSV "
                         "lookup; fallback heads=8 block_len=4 causal=0 kv_dtype=fp8_e4m3fn batch=32: pad "
                         "the block to 4 tokens")));
  // Nothing of the hostile log escapes its string literal.
  EXPECT_THAT(h, Not(HasSubstr("second line")));
}

TEST(CodegenRender, RowsAreInLookupOrderFixedFieldsFirst) {
  test::ToyDb t;
  auto r = t.run();
  t.ok(r, key(16, 1, 1, 0, 1), config(32), 1.0);  // causal=1 sorts after every causal=0 row
  t.ok(r, key(128, 1, 0, 0, 1), config(32), 2.0);
  t.ok(r, key(16, 1, 0, 0, 8), config(32), 3.0);
  t.ok(r, key(16, 1, 0, 0, 1), config(32), 4.0);
  const auto h = render_header(build_table(t.db(), test::toy(), test::request()));
  auto at = [&](const std::string& row) {
    auto p = h.find("    {" + row + ", Selection::Kind::kernel");
    EXPECT_NE(p, std::string::npos) << row;
    return p;
  };
  EXPECT_LT(at("{16, 1, 0, KvDtype::bf16, 1}"), at("{16, 1, 0, KvDtype::bf16, 8}"));
  EXPECT_LT(at("{16, 1, 0, KvDtype::bf16, 8}"), at("{128, 1, 0, KvDtype::bf16, 1}"));
  EXPECT_LT(at("{128, 1, 0, KvDtype::bf16, 1}"), at("{16, 1, 1, KvDtype::bf16, 1}"));
}

TEST(CodegenRender, FieldsThatCannotBeNamedInCppAreRefused) {
  test::ToyDb t;
  fill(t);
  auto table = build_table(t.db(), test::toy(), test::request());
  EXPECT_NO_THROW(render_header(table));
  auto clash = table;
  clash.config_fields[2].labels = {"fp8-x", "fp8_x"};
  EXPECT_THROW(render_header(clash), Error);
  auto two_types = table;
  two_types.config_fields[2].name = "kv-dtype";  // also the type KvDtype, with other labels
  EXPECT_THROW(render_header(two_types), Error);
  auto empty = table;
  empty.key_fields.clear();
  EXPECT_THROW(render_header(empty), Error);
}

TEST(CodegenWrite, ReplacesTheFileAtomicallyAndLeavesNoTemporaryFile) {
  db::test::TempDir dir;
  const auto out = dir.file("toy_dispatch.hpp");
  write_file_atomically(out, "first\n");
  write_file_atomically(out, "second\n");
  EXPECT_EQ(db::test::read_file(out), "second\n");
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::others_read, fs::perms::others_read);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// A new file gets 0666 less the umask, as any tool's would (not a fixed 0644); a file replaced
// keeps its permissions.
TEST(CodegenWrite, PermissionsFollowTheUmaskAndSurviveAReplacement) {
  db::test::TempDir dir;
  {
    struct Umask {
      mode_t before = ::umask(027);
      ~Umask() { ::umask(before); }
    } umask;
    write_file_atomically(dir.file("new.hpp"), "text\n");
  }
  EXPECT_EQ(fs::status(dir.file("new.hpp")).permissions(), fs::perms(0640));
  fs::permissions(dir.file("new.hpp"), fs::perms(0604));
  write_file_atomically(dir.file("new.hpp"), "again\n");
  EXPECT_EQ(fs::status(dir.file("new.hpp")).permissions(), fs::perms(0604));
  EXPECT_EQ(db::test::read_file(dir.file("new.hpp")), "again\n");
}

// The temporary name does not grow with the target's: a name of 255 bytes, the most a file
// system takes, is written (target + ".tmp.XXXXXX" was too long from 245 bytes on).
TEST(CodegenWrite, ANameOfTheLongestLengthIsWritten) {
  db::test::TempDir dir;
  const auto out = dir.file(std::string(250, 'h') + ".hpp.");
  write_file_atomically(out, "text\n");
  EXPECT_EQ(db::test::read_file(out), "text\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// Staged files change together: one that cannot be staged (a directory holds its name) leaves
// every path as it was, the ones staged before it included, and no temporary file behind.
TEST(CodegenWrite, StagedFilesAreWrittenAllOrNone) {
  db::test::TempDir dir;
  db::test::write_file(dir.file("a.hpp"), "old a\n");
  fs::create_directory(dir.file("c.hpp"));
  {
    StagedFiles files;
    files.stage(dir.file("a.hpp"), "new a\n");
    files.stage(dir.file("b.hpp"), "new b\n");
    EXPECT_THROW(files.stage(dir.file("c.hpp"), "new c\n"), Error);
  }
  EXPECT_EQ(db::test::read_file(dir.file("a.hpp")), "old a\n");
  EXPECT_FALSE(fs::exists(dir.file("b.hpp")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 2) << "a.hpp and c.hpp";

  StagedFiles files;
  files.stage(dir.file("a.hpp"), "new a\n");
  files.stage(dir.file("b.hpp"), "new b\n");
  EXPECT_EQ(db::test::read_file(dir.file("a.hpp")), "old a\n") << "nothing replaced before commit()";
  files.commit();
  EXPECT_EQ(db::test::read_file(dir.file("a.hpp")), "new a\n");
  EXPECT_EQ(db::test::read_file(dir.file("b.hpp")), "new b\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 3);
}

// `--out` naming the database (or a link to it) must not replace it with a header.
TEST(CodegenWrite, ADatabaseIsNeverReplaced) {
  db::test::TempDir dir;
  const auto db_path = dir.file("t.db");
  db::Database::open(db_path, /*create=*/true);
  const auto before = db::test::read_file(db_path);
  fs::create_symlink(db_path, dir.file("link.hpp"));
  for (const auto& out : {db_path, dir.file("link.hpp")}) {
    try {
      write_file_atomically(out, "// header\n");
      ADD_FAILURE() << out << " was written";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(out), HasSubstr("is an SQLite database")));
    }
  }
  EXPECT_EQ(db::test::read_file(db_path), before);
  EXPECT_TRUE(fs::is_symlink(dir.file("link.hpp")));
}

// A link is written through (the rename would replace the link); a loop of links is an Error
// naming the path, not a filesystem exception.
TEST(CodegenWrite, LinksAreWrittenThroughAndLoopsAreNamed) {
  db::test::TempDir dir;
  fs::create_directory(dir.file("real"));
  fs::create_symlink(dir.file("real/out.hpp"), dir.file("out.hpp"));
  write_file_atomically(dir.file("out.hpp"), "through\n");
  EXPECT_TRUE(fs::is_symlink(dir.file("out.hpp")));
  EXPECT_EQ(db::test::read_file(dir.file("real/out.hpp")), "through\n");

  fs::create_symlink(dir.file("b"), dir.file("a"));
  fs::create_symlink(dir.file("a"), dir.file("b"));
  try {
    write_file_atomically(dir.file("a") + "/x.hpp", "text");
    ADD_FAILURE() << "wrote under a loop of links";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir.file("a") + "/x.hpp"));
  }
}

TEST(CodegenWrite, FailureLeavesTheTargetAloneAndNamesThePath) {
  db::test::TempDir dir;
  try {
    write_file_atomically(dir.file("missing/out.hpp"), "text");
    ADD_FAILURE() << "writing into a missing directory succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir.file("missing/out.hpp")));
  }
  fs::create_directory(dir.file("sub"));
  EXPECT_THROW(write_file_atomically(dir.file("sub"), "text"), Error);
  EXPECT_TRUE(fs::is_directory(dir.file("sub")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.file("sub")), fs::directory_iterator()), 0);
}

}  // namespace
}  // namespace ktune::dispatch
