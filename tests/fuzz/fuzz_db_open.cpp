// libFuzzer target: arbitrary bytes as a database file, opened read-only as the query verbs do
// and read through every query. Only ktune::Error may escape, and the file must stay
// byte-identical (a read-only open never writes, whatever the file holds).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "db/database.hpp"
#include "support/temp_dir.hpp"

namespace {
namespace fs = std::filesystem;

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The input alone decides the outcome: no -wal, -shm or -journal of an earlier input remains.
void write_fresh(const std::string& path, std::string_view bytes) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) {
    std::perror("fuzz_db_open: writing the input");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One private directory per fuzzing process (libFuzzer's -jobs/-fork run several), removed at exit.
  static const ktune::test_support::TempDir dir;
  static const std::string path = dir.file("fuzz.ktune.db");
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  write_fresh(path, bytes);
  try {
    auto db = ktune::db::Database::open(path, /*create=*/false, /*read_only=*/true);
    db->runs();
    db->measurements();
    db->gaps();
    db->winners();
  } catch (const ktune::Error&) {
    // The documented rejection.
  }
  if (contents(path) != bytes) {
    std::fprintf(stderr, "fuzz_db_open: a read-only open changed the file\n");
    std::abort();
  }
  return 0;
}
