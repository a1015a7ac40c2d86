#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "sweep/progress.hpp"

namespace ktune::sweep {
namespace {

// What a Progress printed, through a memory stream.
struct Captured {
  char* data = nullptr;
  size_t size = 0;
  FILE* f = ::open_memstream(&data, &size);
  ~Captured() {
    if (f) std::fclose(f);
    std::free(data);
  }
  std::string text() {
    std::fflush(f);
    return std::string(data, size);
  }
};

TEST(SweepProgress, DurationsReadNaturally) {
  EXPECT_EQ(Progress::format_duration(0), "0s");
  EXPECT_EQ(Progress::format_duration(59.4), "59s");
  EXPECT_EQ(Progress::format_duration(185), "3m05s");
  EXPECT_EQ(Progress::format_duration(3725), "1h02m");
}

TEST(SweepProgress, CountsAndEta) {
  Captured out;
  Progress p(Progress::Mode::lines, 4, out.f);
  EXPECT_NE(p.status_text().find("0/4 candidates, 0 ok, 0 failed"), std::string::npos) << p.status_text();
  EXPECT_NE(p.status_text().find("ETA ?"), std::string::npos) << "no ETA before the first candidate";
  p.candidate_done(true);
  p.candidate_done(false);
  EXPECT_NE(p.status_text().find("2/4 candidates, 1 ok, 1 failed"), std::string::npos) << p.status_text();
  EXPECT_NE(p.status_text().find("ETA 0s"), std::string::npos) << p.status_text();
  p.drop(1);
  EXPECT_NE(p.status_text().find("2/3 candidates"), std::string::npos) << p.status_text();
}

TEST(SweepProgress, ModesPrintWhatTheyShould) {
  Captured lines, bar, quiet;
  {
    Progress l(Progress::Mode::lines, 2, lines.f), b(Progress::Mode::bar, 2, bar.f),
        q(Progress::Mode::quiet, 2, quiet.f);
    for (Progress* p : {&l, &b, &q}) {
      p->candidate_done(true);
      p->key_done("heads=16: 1 ok", false);
      p->key_done("heads=8: gap", true);
    }
  }
  EXPECT_NE(lines.text().find("heads=16: 1 ok [1/2 candidates"), std::string::npos) << lines.text();
  EXPECT_EQ(lines.text().find('\r'), std::string::npos) << "no terminal control without a terminal";
  EXPECT_NE(bar.text().find("\r\x1b[K[==============="), std::string::npos) << bar.text();
  EXPECT_EQ(bar.text().find("heads=16: 1 ok"), std::string::npos) << "the bar reports gaps only";
  EXPECT_NE(bar.text().find("heads=8: gap"), std::string::npos);
  EXPECT_EQ(quiet.text(), "");
}

}  // namespace
}  // namespace ktune::sweep
