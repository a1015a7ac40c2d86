// docs/cli.md names every verb and every flag the ktune executable offers: the verbs are read
// from `ktune --help` (and a verb's own subcommands from its --help), the flags from each verb's
// --help, and each must appear in docs/cli.md under a heading of its own: `### ktune` for the
// options before the verb, `### <verb>` (`### gap add`) for a verb, with the flag written as
// `--flag` in that heading's section. A verb or flag added to the CLI without a line in the
// reference fails here, naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_run.hpp"

namespace ktune::testing {
namespace {

// The file's text after a line break, so that a heading on its first line starts with one too.
std::string read_lines(const std::string& path) {
  std::ifstream in(path);
  std::string text = "\n";
  text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return text;
}

std::string help_of(const std::vector<std::string>& verb) {
  std::vector<std::string> args = verb;
  args.emplace_back("--help");
  const auto r = run_ktune_args(args);
  EXPECT_EQ(r.status, 0) << "ktune " << ::testing::PrintToString(args) << ": " << r.out << r.err;
  return r.out;
}

// The first word of each line of one section of CLI11's help ("Options:", "Subcommands:"): the
// lines indented under the section's title, up to the next unindented line.
std::vector<std::string> first_words(const std::string& help, const std::string& title) {
  std::vector<std::string> words;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ') {
      inside = line == title;
      continue;
    }
    std::istringstream fields(line);
    std::string word;
    if (inside && fields >> word) words.push_back(word);
  }
  return words;
}

// The long flags of a help text: "-q,--quiet" gives --quiet; --help, which every verb has, is
// left out.
std::vector<std::string> flags_of(const std::string& help) {
  std::vector<std::string> flags;
  for (const auto& word : first_words(help, "Options:")) {
    std::istringstream names(word);
    for (std::string name; std::getline(names, name, ',');)
      if (name.rfind("--", 0) == 0 && name != "--help") flags.push_back(name);
  }
  return flags;
}

// Subcommands: a description starts past the name's column, so names are the first words.
std::vector<std::string> subcommands_of(const std::string& help) { return first_words(help, "Subcommands:"); }

// The text of docs/cli.md from the line "### <heading>" to the next heading of level 3 or
// higher; empty when there is no such heading.
std::string section(const std::string& doc, const std::string& heading) {
  const std::string start = "\n### " + heading + "\n";
  const auto begin = doc.find(start);
  if (begin == std::string::npos) return {};
  const auto body = begin + start.size();
  auto end = doc.size();
  for (const std::string next : {"\n### ", "\n## ", "\n# "}) end = std::min(end, doc.find(next, body));
  return doc.substr(body, end - body);
}

// Whether `text` writes `flag` as code: "`--db`", or "`--db FILE`" with its argument; "`--gain-by`"
// does not name --gain.
bool names_flag(const std::string& text, const std::string& flag) {
  const std::string code = "`" + flag;
  for (auto at = text.find(code); at != std::string::npos; at = text.find(code, at + 1)) {
    const char next = text[at + code.size()];  // text[text.size()] is the terminating NUL
    if (next == '`' || next == ' ' || next == '=') return true;
  }
  return false;
}

struct Verb {
  std::vector<std::string> words;  // {} for ktune itself, {"gap", "add"}
  std::string heading() const {
    std::string h;
    for (const auto& w : words) h += (h.empty() ? "" : " ") + w;
    return h.empty() ? "ktune" : h;
  }
};

// ktune and every verb its help lists, with the subcommands of verbs that have some.
std::vector<Verb> all_verbs() {
  std::vector<Verb> verbs{{}};
  for (size_t i = 0; i < verbs.size(); ++i)
    for (const auto& sub : subcommands_of(help_of(verbs[i].words))) {
      Verb v = verbs[i];
      v.words.push_back(sub);
      verbs.push_back(v);
    }
  return verbs;
}

const std::string kDoc = KTUNE_SOURCE_DIR "/docs/cli.md";

// The parsing above finds what it should, so that an empty list cannot pass the test below.
TEST(CliDocs, TheHelpListsVerbsAndFlags) {
  const auto verbs = all_verbs();
  std::vector<std::string> headings;
  for (const auto& v : verbs) headings.push_back(v.heading());
  for (const std::string expected : {"ktune", "devices", "sweep", "codegen", "gap add"})
    EXPECT_NE(std::find(headings.begin(), headings.end(), expected), headings.end()) << expected;
  const auto sweep_flags = flags_of(help_of({"sweep"}));
  for (const std::string expected : {"--kernel", "--db", "--resume", "--no-cache"})
    EXPECT_NE(std::find(sweep_flags.begin(), sweep_flags.end(), expected), sweep_flags.end()) << expected;
  const auto global = flags_of(help_of({}));
  EXPECT_NE(std::find(global.begin(), global.end(), "--templates"), global.end());
}

TEST(CliDocs, DocsCliMdNamesEveryVerbAndFlag) {
  const std::string doc = read_lines(kDoc);
  ASSERT_GT(doc.size(), 1u) << kDoc << " is missing or empty";
  for (const auto& verb : all_verbs()) {
    const auto text = section(doc, verb.heading());
    if (text.empty()) {
      ADD_FAILURE() << "docs/cli.md has no section \"### " << verb.heading() << "\" for `ktune "
                    << (verb.words.empty() ? "" : verb.heading() + " ") << "--help`";
      continue;
    }
    for (const auto& flag : flags_of(help_of(verb.words)))
      if (!names_flag(text, flag))
        ADD_FAILURE() << "docs/cli.md, section \"### " << verb.heading() << "\", does not name `" << flag << "`";
  }
}

}  // namespace
}  // namespace ktune::testing
