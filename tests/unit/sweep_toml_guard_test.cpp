// Text on which toml++ 3.3 reaches undefined behaviour (non-ASCII characters where it tests for
// whitespace: the inputs tests/fuzz/fuzz_space found, and the cases around them) is refused with a
// position before toml++ reads it; the same characters in strings and comments still parse. These
// tests also run under UBSan (scripts/sanitize.sh), where toml++ reading any refused text itself
// would fail the run: a refusal counts only because it comes before that.
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "sweep/toml_guard.hpp"

namespace ktune::sweep {
namespace {

// The error text for `text`, or "" when it parses.
std::string refusal(const std::string& text) {
  try {
    (void)parse_toml(text, "spaces/s.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr std::string_view kOnlyInStrings = " (only strings and comments may hold a non-ASCII character)";

TEST(SweepTomlGuard, NamesANonAsciiCharacterWhereTomlppStopsAtIt) {
  EXPECT_EQ(refusal("family = \"toy\"\nctx = 4096\xc9\xa2\n"),
            "spaces/s.toml:2:11: not valid TOML: Error while parsing decimal integer: expected digit, saw "
            "'\xc9\xa2'" +
                std::string(kOnlyInStrings));
  EXPECT_EQ(refusal("x\xc3\xa9 = 1\n"),
            "spaces/s.toml:1:2: not valid TOML: Error while parsing key-value pair: expected '=', saw '\xc3\xa9'" +
                std::string(kOnlyInStrings));
  EXPECT_EQ(refusal("[t\xc3\xa9]\n"), "spaces/s.toml:1:3: not valid TOML: Error while parsing table header: "
                                      "expected ']', saw '\xc3\xa9'" +
                                          std::string(kOnlyInStrings));
  // The comment's '#' removed: the character is outside a comment now.
  EXPECT_EQ(refusal("description = \"2\xc3\x97 faster\" \xc2\xb5s\n"),
            "spaces/s.toml:1:27: not valid TOML: Error while parsing key-value pair: expected a comment or "
            "whitespace, saw '\xc2\xb5'" +
                std::string(kOnlyInStrings));
  // After a byte order mark, toml++'s columns and the guard's agree.
  EXPECT_EQ(refusal("\xef\xbb\xbf"
                    "a = 1\xc3\xa9\n"),
            "spaces/s.toml:1:6: not valid TOML: Error while parsing decimal integer: expected digit, saw '\xc3\xa9'" +
                std::string(kOnlyInStrings));
  EXPECT_EQ(refusal("family = \"toy\"\nctx = 4096\n"), "");
  EXPECT_EQ(refusal("\xef\xbb\xbf"
                    "a = 1\n"),
            "");
}

TEST(SweepTomlGuard, RefusesTheInputsFuzzingFound) {
  // toml++ reads a bare value on through quotes and brackets, and a date's time across a space and
  // the character after the time's first digit (whatever it is), testing each character for its end.
  for (const std::string& found :
       {std::string("a =+!\"\0\xc3\xa9\n", 10), std::string("a =+!{\"\0\xc3\xa9\n", 11),
        std::string("f=0490-06-2h 1\"\xef\xbb\xbe"), std::string("f=0490-06-2h 1]\"\xef\xbb\xbe")})
    EXPECT_NE(refusal(found), "") << found;
  EXPECT_EQ(refusal("f=0490-06-2h 1]\"\xef\xbb\xbe"),
            "spaces/s.toml:1:3: not valid TOML: Error while parsing value: could not determine value type");
  for (const char* around : {"a = 1'\xc3\xa9'\n", "a = [1, 2x\"\xc3\xa9\"]\n", "d = 1979-05-27 07:32:00\"\xc3\xa9\"\n",
                             "f=0490-06-2h 1,\"\xc3\xa9\"\n", "f=0490-06-2h 1#\xc3\xa9\n", "a = {b\"\xc3\xa9\" = 1}\n",
                             "\"x\"\xc3\xa9 = 1\n"})
    EXPECT_NE(refusal(around), "") << around;
}

TEST(SweepTomlGuard, AcceptsNonAsciiInStringsAndComments) {
  EXPECT_EQ(refusal("description = \"2\xc3\x97 faster\" # \xc2\xb5s\nx = 'caf\xc3\xa9'\n"
                    "y = \"\"\"\n\xc3\xa9\"\"\"\nz = '''\xc3\xa9'''\n"),
            "");
  EXPECT_EQ(refusal("a=\"\xc3\xa9\"\nb = [\"\xc3\xa9\",'\xc3\xa9', # \xc3\xa9\n  \"\xc3\xa9\"]\n"
                    "c.\"\xc3\xa9\" = {d=\"\xc3\xa9\", e = [1,\"\xc3\xa9\"]}\n[t]\nf = 1 # \xc3\xa9\ng = \"\xc3\xa9\"\n"
                    "d = 1979-05-27 07:32:00Z # \xc3\xa9\ne = [1 , 2 ] # \xc3\xa9\n"),
            "");
  // The strings read back as written: the guard's stand-ins never reach the parsed table.
  const toml::table t = parse_toml("x = 'caf\xc3\xa9' # \xc2\xb5s\n", "s.toml");
  EXPECT_EQ(t["x"].value_or(std::string()), "caf\xc3\xa9");
}

TEST(SweepTomlGuard, RefusesNonAsciiAfterABackslashAndBlanks) {
  // In a multi-line basic string toml++ tests the first character after a line-ending backslash
  // (and after a backslash and blanks) for whitespace.
  EXPECT_EQ(refusal("d = \"\"\"\\\n  \xc2\xa7\"\"\"\n"),
            "spaces/s.toml:2:3: not valid TOML: a non-ASCII character after a backslash and blanks (toml++ 3.3 "
            "cannot read it there safely)");
  EXPECT_NE(refusal("d = \"\"\"\\ \xc2\xa7\"\"\"\n"), "");
  EXPECT_NE(refusal("d = \"\"\"\\\xc3\xa9\"\"\"\n"), "");  // an escape toml++ does not know
  EXPECT_EQ(refusal("d = \"\"\"\\\n  x\xc2\xa7\"\"\"\n"), "");
  EXPECT_EQ(refusal("d = \"\xc3\xa9\\\"\xc3\xa9\"\n"), "");  // an escaped quote does not end a string
}

TEST(SweepTomlGuard, FollowsStringEndsWithExtraQuotes) {
  // """x""""" ends after five quotes (two of them content): what follows is outside the string.
  EXPECT_NE(refusal("a = \"\"\"x\"\"\"\"\"\nb = 1\xc3\xa9\n"), "");
  EXPECT_NE(refusal("a = '''x'''''\nb = 1\xc3\xa9\n"), "");
  EXPECT_EQ(refusal("a = '''x'''''\nb = 1\n"), "");
}

TEST(SweepTomlGuard, RefusesInvalidUtf8WithTomlppsPosition) {
  EXPECT_NE(refusal("a = \"\xc3\"\n"), "");
  EXPECT_NE(refusal("a = \"\x80\"\n"), "");
  EXPECT_NE(refusal("# \xff\n"), "");
}

}  // namespace
}  // namespace ktune::sweep
