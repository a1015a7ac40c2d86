// Non-ASCII text where toml++ 3.3 has undefined behaviour (found by tests/fuzz/fuzz_space) is
// refused with a position; the same characters in strings and comments still parse.
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "sweep/toml_guard.hpp"

namespace ktune::sweep {
namespace {

// The error text for `text`, or "" when it is accepted.
std::string refusal(const std::string& text) {
  try {
    require_toml_safe_for_parser(text, "spaces/s.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SweepTomlGuard, RefusesNonAsciiAfterAValueWithItsPosition) {
  EXPECT_EQ(refusal("family = \"toy\"\nctx = 4096\xc9\xa2\n"),
            "spaces/s.toml:2:11: not valid TOML: a non-ASCII character outside a string or comment (only strings "
            "and comments may hold one)");
  EXPECT_EQ(refusal("family = \"toy\"\nctx = 4096\n"), "");
}

TEST(SweepTomlGuard, RefusesNonAsciiAfterAQuoteInABareValue) {
  // toml++ reads `+!"` and `+!{"` on as one bare value and tests the 'é' for whitespace (both found
  // by fuzz_space).
  EXPECT_EQ(refusal(std::string("a =+!\"\0\xc3\xa9\n", 10)),
            "spaces/s.toml:1:8: not valid TOML: a non-ASCII character outside a string or comment (only strings "
            "and comments may hold one)");
  EXPECT_NE(refusal(std::string("a =+!{\"\0\xc3\xa9\n", 11)), "");
  EXPECT_NE(refusal("a = 1'\xc3\xa9'\n"), "");
  EXPECT_NE(refusal("a = [1, 2x\"\xc3\xa9\"]\n"), "");
  EXPECT_EQ(refusal("a=\"\xc3\xa9\"\nb = [\"\xc3\xa9\",'\xc3\xa9', # \xc3\xa9\n  \"\xc3\xa9\"]\n"
                    "c.\"\xc3\xa9\" = {d=\"\xc3\xa9\", e = [1,\"\xc3\xa9\"]}\n[t]\nf = 1 # \xc3\xa9\ng = \"\xc3\xa9\"\n"),
            "")
      << "a quote where a value, a key or an array element starts opens a string";
}

TEST(SweepTomlGuard, ReadsABareValueOnAcrossTheSpaceOfADateTime) {
  // toml++ reads `0490-06-2h 1"` on as a date and a time, and tests the U+FEFE for whitespace
  // (found by fuzz_space).
  EXPECT_EQ(refusal("f=0490-06-2h 1\"\xef\xbb\xbe"),
            "spaces/s.toml:1:16: not valid TOML: a non-ASCII character outside a string or comment (only strings "
            "and comments may hold one)");
  EXPECT_NE(refusal("d = 1979-05-27 07:32:00\"\xc3\xa9\"\n"), "");
  // A date-time with a space and values followed by a space and a comment still pass.
  EXPECT_EQ(refusal("d = 1979-05-27 07:32:00Z # \xc3\xa9\ne = 1 # \xc3\xa9\nf = [1 , 2 ] # \xc3\xa9\n"), "");
}

TEST(SweepTomlGuard, AcceptsNonAsciiInStringsAndComments) {
  EXPECT_EQ(refusal("description = \"2\xc3\x97 faster\" # \xc2\xb5s\nx = 'caf\xc3\xa9'\n"
                    "y = \"\"\"\n\xc3\xa9\"\"\"\nz = '''\xc3\xa9'''\n"),
            "");
  EXPECT_NE(refusal("description = \"2\xc3\x97 faster\" \xc2\xb5s\n"), "");  // the comment's '#' removed
}

TEST(SweepTomlGuard, RefusesNonAsciiAfterABackslashInAMultiLineString) {
  EXPECT_NE(refusal("d = \"\"\"\\\n  \xc2\xa7\"\"\"\n"), "");
  EXPECT_NE(refusal("d = \"\"\"\\\xc3\xa9\"\"\"\n"), "");
  EXPECT_EQ(refusal("d = \"\"\"\\\n  x\xc2\xa7\"\"\"\n"), "");
  EXPECT_EQ(refusal("d = \"\xc3\xa9\\\"\xc3\xa9\"\n"), "");  // an escaped quote does not end a string
}

TEST(SweepTomlGuard, FollowsStringEndsWithExtraQuotes) {
  // """x""""" ends after five quotes (two of them content): what follows is outside the string.
  EXPECT_NE(refusal("a = \"\"\"x\"\"\"\"\"\nb = 1\xc3\xa9\n"), "");
  EXPECT_NE(refusal("a = '''x'''''\nb = 1\xc3\xa9\n"), "");
  EXPECT_EQ(refusal("a = '''x'''''\nb = 1\n"), "");
}

}  // namespace
}  // namespace ktune::sweep
