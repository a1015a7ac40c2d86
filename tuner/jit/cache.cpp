#include "jit/cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <xxhash.h>

#include "common/error.hpp"

namespace ktune::jit {
namespace fs = std::filesystem;

namespace {
// Bumped whenever the entry layout or the key derivation changes.
constexpr char kMagic[8] = {'K', 'T', 'C', 'O', 'B', 'J', '0', '1'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 2 * sizeof(uint64_t);  // magic, payload size, checksum

// Length-prefixed fields, so that no two different entries serialise to the same bytes.
class Writer {
 public:
  void u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void bytes(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  std::string& str() noexcept { return out_; }

 private:
  std::string out_;
};

// Reads what Writer wrote; every read is bounds-checked, so any corruption ends as `false`.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool u64(uint64_t& v) {
    if (in_.size() < sizeof v) return false;
    std::memcpy(&v, in_.data(), sizeof v);
    in_.remove_prefix(sizeof v);
    return true;
  }
  bool bytes(std::string_view& s) {
    uint64_t n = 0;
    if (!u64(n) || n > in_.size()) return false;
    s = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  bool at_end() const noexcept { return in_.empty(); }

 private:
  std::string_view in_;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string serialize(const std::string& key, const backend::CompileResult& r) {
  Writer payload;
  payload.bytes(key);
  payload.u64(r.lowered_names.size());
  for (const auto& n : r.lowered_names) payload.bytes(n);
  payload.bytes(std::string_view(r.code.data(), r.code.size()));
  payload.bytes(r.log);
  Writer file;
  file.str().append(kMagic, sizeof kMagic);
  file.u64(payload.str().size());
  file.u64(XXH64(payload.str().data(), payload.str().size(), 0));
  file.str() += payload.str();
  return std::move(file.str());
}

std::optional<backend::CompileResult> deserialize(std::string_view file, const std::string& key) {
  if (file.size() < kHeaderBytes || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  Reader header(file.substr(sizeof kMagic, 2 * sizeof(uint64_t)));
  uint64_t size = 0, checksum = 0;
  header.u64(size);
  header.u64(checksum);
  auto payload = file.substr(kHeaderBytes);
  if (payload.size() != size || XXH64(payload.data(), payload.size(), 0) != checksum) return std::nullopt;
  Reader in(payload);
  std::string_view stored_key, code, log;
  uint64_t names = 0;
  if (!in.bytes(stored_key) || stored_key != key || !in.u64(names) || names > payload.size()) return std::nullopt;
  backend::CompileResult r;
  for (uint64_t i = 0; i < names; ++i) {
    std::string_view n;
    if (!in.bytes(n)) return std::nullopt;
    r.lowered_names.emplace_back(n);
  }
  if (!in.bytes(code) || !in.bytes(log) || !in.at_end()) return std::nullopt;
  r.code.assign(code.begin(), code.end());
  r.log = std::string(log);
  return r;
}
// Marks a temporary file in an entry's name: "<key>.kco.tmp.<host>.<pid>.<n>".
constexpr std::string_view kTemporary = ".tmp.";

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "host";
  return name;
}

// A process killed while writing an entry leaves its temporary file, which nothing renames:
// those of a shard directory a day old go when an entry is stored there (a day: longer than any
// write takes, so never one in progress).
void remove_abandoned_temporaries(const fs::path& shard) {
  std::error_code ec;
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (fs::directory_iterator it(shard, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    std::error_code stat_ec;
    if (name.find(kTemporary) != std::string::npos && it->last_write_time(stat_ec) < old && !stat_ec)
      fs::remove(it->path(), stat_ec);
  }
}

}  // namespace

CodeCache::CodeCache(std::string dir) : dir_(dir.empty() ? default_dir() : std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_))
    throw Error(fmt::format("cannot create the code-object cache directory '{}': {} (set KTUNE_CACHE_DIR or "
                            "--cache-dir to a writable place)",
                            dir_, ec ? ec.message() : "not a directory"));
}

std::string CodeCache::default_dir() {
  if (auto d = env("KTUNE_CACHE_DIR"); !d.empty()) return d;
  if (auto d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/ktune";
  if (auto d = env("HOME"); !d.empty()) return d + "/.cache/ktune";
  throw Error("no cache directory: none of KTUNE_CACHE_DIR, XDG_CACHE_HOME, HOME is set");
}

std::string CodeCache::key(const backend::CompileRequest& req, std::string_view compiler_identity) {
  Writer w;
  w.bytes(std::string_view(kMagic, sizeof kMagic));
  w.bytes(compiler_identity);
  w.bytes(req.arch);
  w.bytes(req.source_name);
  w.bytes(req.source);
  w.u64(req.name_expressions.size());
  for (const auto& n : req.name_expressions) w.bytes(n);
  w.u64(req.options.size());
  for (const auto& o : req.options) w.bytes(o);
  auto h = XXH3_128bits(w.str().data(), w.str().size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

std::string CodeCache::path_of(const std::string& key) const {
  // Two-level layout keeps directories small when a sweep leaves tens of thousands of entries.
  return fmt::format("{}/{}/{}.kco", dir_, key.substr(0, 2), key);
}

std::optional<backend::CompileResult> CodeCache::load(const std::string& key) const noexcept {
  try {
    auto path = path_of(key);
    // Only a regular file can be an entry: a directory or a FIFO left at its path (opening a FIFO
    // would block) is a miss.
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    std::string file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto r = deserialize(file, key);
    if (!r) fs::remove(path, ec);  // a concurrent writer renames a complete entry over it; both are fine
    return r;
  } catch (const std::exception&) {  // a read error (EIO): a miss, and the program is compiled
    return std::nullopt;
  }
}

std::string CodeCache::store(const std::string& key, const backend::CompileResult& result) const noexcept {
  static std::atomic<uint64_t> counter{0};
  try {
    const auto path = path_of(key);
    const auto shard = fs::path(path).parent_path();
    std::error_code ec;
    if (fs::create_directories(shard, ec); ec) return fmt::format("cannot create {}: {}", shard.string(), ec.message());
    // Unique per host, process and call, so that parallel compiles and concurrent sweeps (of
    // containers sharing one cache, too) never share a temporary file; rename() then publishes a
    // complete entry atomically.
    const auto tmp = fmt::format("{}{}{}.{}.{}", path, kTemporary, host_name(), ::getpid(), counter++);
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      if (!f) return fmt::format("cannot create {}: {}", tmp, std::strerror(errno));
      const auto bytes = serialize(key, result);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      f.close();
      if (!f) {
        const std::string why = std::strerror(errno);
        fs::remove(tmp, ec);
        return fmt::format("cannot write {}: {}", tmp, why);
      }
    }
    if (fs::rename(tmp, path, ec); ec) {
      const std::string why = ec.message();
      fs::remove(tmp, ec);
      return fmt::format("cannot rename {} to {}: {}", tmp, path, why);
    }
    remove_abandoned_temporaries(shard);
    return {};
  } catch (const std::exception& e) {
    try {
      return e.what();
    } catch (...) {
      return "out of memory";  // short enough to allocate nothing
    }
  }
}

}  // namespace ktune::jit
