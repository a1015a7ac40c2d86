#pragma once
// A full disk, simulated without root: a SQLite VFS that passes everything to the default one,
// except that once the armed number of bytes has been written (to any file: the database, its
// -wal or -journal) every further write fails with SQLITE_FULL, which is what the unix VFS answers
// when write(2) fails with ENOSPC. Registered as the default VFS while it lives, so every
// connection opened meanwhile (Database::open included) writes through it.
#include <atomic>
#include <cstdint>
#include <stdexcept>

#include <sqlite3.h>

namespace ktune::testing {

class FullDiskVfs {
 public:
  FullDiskVfs() : base_(sqlite3_vfs_find(nullptr)) {
    if (!base_) throw std::runtime_error("no default SQLite VFS");
    vfs_ = *base_;
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + base_->szOsFile;
    vfs_.zName = "ktune_full_disk";
    vfs_.pAppData = this;
    vfs_.pNext = nullptr;
    vfs_.xOpen = &open;
    if (sqlite3_vfs_register(&vfs_, 1) != SQLITE_OK) throw std::runtime_error("cannot register the VFS");
  }
  ~FullDiskVfs() {
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(base_, 1);  // the default again
  }
  FullDiskVfs(const FullDiskVfs&) = delete;
  FullDiskVfs& operator=(const FullDiskVfs&) = delete;

  // From now on, `bytes` more may be written; then the disk is full. Negative: no limit.
  void fill_after(int64_t bytes) noexcept { left_ = bytes; }
  // Writes refused since the disk filled up.
  int refused() const noexcept { return refused_; }

 private:
  // Our file, with the default VFS's file right behind it in the same allocation.
  struct File {
    sqlite3_file base;
    FullDiskVfs* owner;
    sqlite3_file* real() noexcept { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };
  static_assert(sizeof(File) % 8 == 0, "the default VFS's file must stay 8-byte aligned");

  static File& our(sqlite3_file* f) noexcept { return *reinterpret_cast<File*>(f); }
  static sqlite3_file* real(sqlite3_file* f) noexcept { return our(f).real(); }

  static int open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
    auto* self = static_cast<FullDiskVfs*>(vfs->pAppData);
    File& file = our(f);
    file.owner = self;
    int rc = self->base_->xOpen(self->base_, name, file.real(), flags, out_flags);
    // SQLite closes a file whose pMethods is set, even after a failed open.
    file.base.pMethods = file.real()->pMethods ? &methods : nullptr;
    return rc;
  }

  static int write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
    FullDiskVfs& self = *our(f).owner;
    for (int64_t left = self.left_; left >= 0;) {
      if (amount > left) {
        self.left_ = 0;
        ++self.refused_;
        return SQLITE_FULL;
      }
      if (self.left_.compare_exchange_weak(left, left - amount)) break;
    }
    return real(f)->pMethods->xWrite(real(f), data, amount, offset);
  }

  // Every other method goes to the default VFS's file as it is.
  static constexpr sqlite3_io_methods methods = {
      3,
      [](sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); },
      [](sqlite3_file* f, void* p, int n, sqlite3_int64 o) { return real(f)->pMethods->xRead(real(f), p, n, o); },
      &write,
      [](sqlite3_file* f, sqlite3_int64 n) { return real(f)->pMethods->xTruncate(real(f), n); },
      [](sqlite3_file* f, int flags) { return real(f)->pMethods->xSync(real(f), flags); },
      [](sqlite3_file* f, sqlite3_int64* n) { return real(f)->pMethods->xFileSize(real(f), n); },
      [](sqlite3_file* f, int l) { return real(f)->pMethods->xLock(real(f), l); },
      [](sqlite3_file* f, int l) { return real(f)->pMethods->xUnlock(real(f), l); },
      [](sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); },
      [](sqlite3_file* f, int op, void* arg) { return real(f)->pMethods->xFileControl(real(f), op, arg); },
      [](sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); },
      [](sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); },
      [](sqlite3_file* f, int page, int size, int extend, void volatile** p) {
        return real(f)->pMethods->xShmMap(real(f), page, size, extend, p);
      },
      [](sqlite3_file* f, int offset, int n, int flags) {
        return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
      },
      [](sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); },
      [](sqlite3_file* f, int remove) { return real(f)->pMethods->xShmUnmap(real(f), remove); },
      [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return real(f)->pMethods->xFetch(real(f), o, n, p); },
      [](sqlite3_file* f, sqlite3_int64 o, void* p) { return real(f)->pMethods->xUnfetch(real(f), o, p); },
  };

  sqlite3_vfs* base_;
  sqlite3_vfs vfs_{};
  std::atomic<int64_t> left_{-1};
  std::atomic<int> refused_{0};
};

}  // namespace ktune::testing
