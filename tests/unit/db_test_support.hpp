#pragma once
// Shared pieces of the db tests: temporary directories, file fingerprints, sample rows, a file of
// schema version 1, and a child process without the privilege to write other users' files.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include <SQLiteCpp/Database.h>

#include "common/error.hpp"
#include "db/database.hpp"
#include "db/schema_sql.hpp"
#include "support/temp_dir.hpp"

namespace ktune::db::test {

using TempDir = ::ktune::test_support::TempDir;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Size and xxh64 of the contents: equal fingerprints mean an untouched file.
inline std::string fingerprint(const std::string& path) {
  const auto bytes = read_file(path);
  return fmt::format("{} bytes, xxh64 {:016x}", bytes.size(), XXH64(bytes.data(), bytes.size(), 0));
}

// A version 1 file made without Database::open: the v1 schema, its meta row, two runs (one with a
// matrix roof) and a measurement of each, inserted with plain SQL.
inline void write_v1_by_hand(const std::string& path) {
  SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  raw.exec(std::string(schema_sql));
  raw.exec(
      "INSERT INTO meta VALUES (1, 1, 'ktune 0.1.0');"
      "INSERT INTO runs VALUES (7, '2025-01-01T00:00:00Z', 'mla_decode', 'hip', 'AMD Instinct MI300X', 'gfx942', 304,"
      " '6.3', 'hiprtc 6.3', 'cafe', '0.1.0', 'node1', 'ktune sweep', 4000, 0);"
      "INSERT INTO runs VALUES (8, '2025-01-02T00:00:00Z', 'mla_decode', 'cuda', 'NVIDIA H200', 'sm_90a', 132,"
      " '13.0', 'nvrtc 13.0', 'cafe', '0.1.0', 'node2', 'ktune sweep', 4000, 631.8);"
      "INSERT INTO measurements (run_id, family, key, config, shape, status, median_us, p10_us, p90_us, samples,"
      " detail) VALUES (7, 'mla_decode', 'heads=16,block_len=2', 'rows=64', 'ctx=4096', 'ok', 12, 11, 13, 40, ''),"
      " (8, 'mla_decode', 'heads=16,block_len=1', 'rows=64', 'ctx=4096', 'ok', 20, 19, 21, 40, '');");
}

inline Run sample_run(std::string family = "mla_decode", std::string device = "NVIDIA H200",
                      std::string arch = "sm_90a", std::string template_hash = "0123456789abcdef") {
  Run r;
  r.family = std::move(family);
  r.backend = "cuda";
  r.device_name = std::move(device);
  r.arch = std::move(arch);
  r.compute_units = 132;
  r.driver_version = "580.65";
  r.compiler_version = "nvrtc 13.0";
  r.template_hash = std::move(template_hash);
  r.ktune_version = "0.1.0";
  r.host = "node17";
  r.command = "ktune sweep --kernel mla_decode";
  r.copy_gbps = 4100;
  r.matrix_tflops = 0;
  return r;
}

inline Params key(int64_t heads, int64_t block_len = 2, int64_t causal = 0, int64_t kv_dtype = 1, int64_t batch = 32) {
  return {{"heads", heads}, {"block_len", block_len}, {"causal", causal}, {"kv_dtype", kv_dtype}, {"batch", batch}};
}

inline Params config(int64_t rows, int64_t warps = 4) { return {{"rows", rows}, {"warps", warps}}; }

// The source of the declared gap this project exists for (docs/design.md): AITER's MLA decode has no
// kernel for fp8 KV with a 2-token non-causal draft block, "the missing fp8 two-token fold".
inline constexpr std::string_view kAiterFoldSource = "aiter 0.1.19 has no fp8 2-token non-causal fold";

// That gap, declared for `key` on `arch`, with the fallback a dispatcher takes ("none" or a key's
// canonical text) and why.
inline Gap declared_gap(std::string arch, Params key, std::string fallback = "none", std::string fallback_note = "") {
  Gap g;
  g.family = "mla_decode";
  g.arch = std::move(arch);
  g.key = std::move(key);
  g.reason = GapReason::declared;
  g.source = std::string(kAiterFoldSource);
  g.fallback = std::move(fallback);
  g.fallback_note = std::move(fallback_note);
  return g;
}

inline Measurement timed(int64_t run_id, Params k, Params c, double median_us, Status s = Status::ok) {
  Measurement m;
  m.run_id = run_id;
  m.key = std::move(k);
  m.config = std::move(c);
  m.shape = {{"ctx", 4096}, {"page_size", 64}};
  m.status = s;
  m.median_us = median_us;
  m.p10_us = median_us * 0.95;
  m.p90_us = median_us * 1.1;
  m.samples = 50;
  m.gbps = 1000.0 / median_us;
  m.tflops = 10.0 / median_us;
  m.frac_copy_bw = m.gbps / 4100;
  m.max_abs_err = 1e-3;
  m.rel_l2_err = 2e-4;
  return m;
}

inline Measurement untimed(int64_t run_id, Params k, Params c, Status s, std::string detail) {
  Measurement m;
  m.run_id = run_id;
  m.key = std::move(k);
  m.config = std::move(c);
  m.status = s;
  m.detail = std::move(detail);
  return m;
}

// Result of running a function in a child process.
struct ChildResult {
  bool ran = false;  // false: the child could not drop its privileges (see text)
  std::string text;  // what the function returned, or why it could not run
};

// Runs `fn` in a forked child that cannot write files it does not own: as root (which ignores
// file permissions) the child first becomes nobody. Permissions on the files decide the rest.
inline ChildResult run_unprivileged(const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) return {false, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    int code = 0;
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      out = "cannot drop root privileges (setuid to nobody failed)";
      code = 3;
    } else {
      try {
        out = fn();
      } catch (const std::exception& e) {
        out = std::string("unexpected exception: ") + e.what();
      }
    }
    [[maybe_unused]] auto n = ::write(fds[1], out.data(), out.size());
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, text};
}

// The message of the ktune::Error that opening `path` throws ("" when it opens).
inline std::string open_error(const std::string& path, bool create, bool read_only) {
  try {
    Database::open(path, create, read_only);
    return "";
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a ktune::Error: ") + e.what();
  }
}

}  // namespace ktune::db::test
