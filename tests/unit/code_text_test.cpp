// jit::code_text: what of a template the hash covers. Each edit that cannot change the binary is
// set against one that can and that looks much like it (a literal's text, a line break that ends a
// directive, the space a comment stands for), so that a stripper too eager fails here.
#include "jit/code_text.hpp"
#include <gtest/gtest.h>

namespace ktune::jit {
namespace {

TEST(CodeText, DropsCommentsAndBlankLinesAndTrimsLines) {
  EXPECT_EQ(code_text("  int a;  // the first\n\n/* a block\n   of two lines */\n\tint b; /* inline */ int c;\n"),
            "int a;\nint b;   int c;\n");
  EXPECT_EQ(code_text(""), "");
  EXPECT_EQ(code_text("// only a comment"), "");
  EXPECT_EQ(code_text("x\r\n  y"), "x\ny\n");
}

TEST(CodeText, CommentEditsAndReindentingLeaveItUnchanged) {
  const std::string base = "#pragma unroll 1\nfor (int m = 0; m < N; ++m) {\n  f(m);\n}\n";
  for (const char* edited : {
           "// Rolled: unrolled, it spilled.\n#pragma unroll 1\nfor (int m = 0; m < N; ++m) {\n  f(m);\n}\n",
           "#pragma unroll 1\nfor (int m = 0; m < N; ++m) {  // every chunk\n  f(m);\n}\n",
           "#pragma unroll 1\n\n\nfor (int m = 0; m < N; ++m) {\n      f(m);  /* reworded\n over two lines */\n}\n",
           "#pragma unroll 1\nfor (int m = 0; m < N; ++m) {\n  f(m); // a comment continued \\\n onto this line\n}\n",
       })
    EXPECT_EQ(code_text(edited), code_text(base)) << edited;
}

TEST(CodeText, CodeEditsChangeIt) {
  const std::string base = "#define TILE 32\nconst char* s = \"a//b /*c*/\"; char q = '\"'; int x = a / b;\n";
  EXPECT_EQ(code_text(base), base) << "a literal's comment markers are its text";
  for (const char* edited : {
           "#define TILE 64\nconst char* s = \"a//b /*c*/\"; char q = '\"'; int x = a / b;\n",
           "#define TILE 32\nconst char* s = \"a//b /*d*/\"; char q = '\"'; int x = a / b;\n",
           "#define TILE 32\nconst char* s = \"a//c /*c*/\"; char q = '\"'; int x = a / b;\n",
           "#define TILE 32\nconst char* s = \"a//b /*c*/\"; char q = '\"'; int x = a / c;\n",
           "#define TILE 32 const char* s = \"a//b /*c*/\"; char q = '\"'; int x = a / b;\n",
       })
    EXPECT_NE(code_text(edited), code_text(base)) << edited;
  // An escaped quote does not end the literal, nor a comment marker after it start a comment.
  EXPECT_EQ(code_text("s = \"x\\\"//y\";"), "s = \"x\\\"//y\";\n");
  // A comment is a space: a/**/b is two tokens, ab one.
  EXPECT_NE(code_text("int a/**/b;"), code_text("int ab;"));
}

// A // comment runs on over line splices, as the compiler's does; a macro's continued lines stay
// lines (their backslashes are code). And code_text of its own output changes nothing, also on
// the fuzzer's finds (tests/fuzz/corpus/fuzz_code_text/regression_*): a backslash that ends an
// unterminated literal's line, and one that trimming leaves at a line's end.
TEST(CodeText, CommentsRunOnOverLineSplicesAndItIsAFixedPointOfItself) {
  EXPECT_EQ(code_text("#define X(a) \\\n    f(a)  // why\n"), "#define X(a) \\\nf(a)\n");
  EXPECT_EQ(code_text("int a; // runs on \\\nint b;\nint c;"), "int a;\nint c;\n");
  EXPECT_EQ(code_text("int a; // runs on \\\r\nint b;\r\nint c;"), "int a;\nint c;\n");
  for (const char* s : {"a \\ /* c */\nb", "x \"t /*\\\n\n(y / ;\"\n", "'\\ \n\n'", "a\\\r\nb \\  \r\n c", "d;\\\\",
                        "'a\\\\\n\nb'", "s = \"a\\\n//b\";"}) {
    const std::string once = code_text(s);
    EXPECT_EQ(code_text(once), once) << s;
  }
}

// A digit separator opens no literal: the comment after it is a comment, and a literal after it
// is one (the character literals with a prefix that ends in a digit too).
TEST(CodeText, DigitSeparatorsAreNotQuotes) {
  EXPECT_EQ(code_text("int n = 1'0; // a note\n"), "int n = 1'0;\n");
  EXPECT_EQ(code_text("x = 0x1'F; s = \"a'//b\";"), "x = 0x1'F; s = \"a'//b\";\n");
  EXPECT_NE(code_text("x = 1'0; s = \"a'//b\";"), code_text("x = 1'0; s = \"a'//c\";"));
  EXPECT_EQ(code_text("c = u8'/'; // why"), "c = u8'/';\n");
  EXPECT_EQ(code_text("f(.5'0); // why"), "f(.5'0);\n");
}

// Raw string literals and literals spliced across lines: the source whole, so that no edit inside
// them (after a quote and a comment marker, or in the spaces at a line's start) goes unseen.
TEST(CodeText, RawAndSplicedLiteralsKeepTheSourceWhole) {
  for (const char* whole : {"s = R\"(a \" // b)\";\n", "s = u8R\"x(\n  a\n)x\"; // c\n", "s = \"a\\\n   b\"; // c\n",
                            "s = LR\"(a)\";", "s = uR\"(a)\"; t = UR\"(b)\";"}) {
    EXPECT_EQ(code_text(whole), whole) << whole;
  }
  EXPECT_NE(code_text("s = R\"(a \" // b)\";"), code_text("s = R\"(a \" // c)\";"));
  EXPECT_NE(code_text("s = \"a\\\n   b\";"), code_text("s = \"a\\\n b\";"));
  // An identifier that ends in R is no prefix, a comment that holds R"( no literal.
  EXPECT_EQ(code_text("f(xR\"a\"); // c"), "f(xR\"a\");\n");
  EXPECT_EQ(code_text("int a; // R\"(\n"), "int a;\n");
}

TEST(CodeText, UnterminatedCommentsAndLiteralsEndWithTheSource) {
  EXPECT_EQ(code_text("int a; /* never closed\nint b;"), "int a;\n");
  EXPECT_EQ(code_text("s = \"never closed"), "s = \"never closed\n");
  EXPECT_EQ(code_text("c = '\\"), "c = '\\\n");
}

}  // namespace
}  // namespace ktune::jit
