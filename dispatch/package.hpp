#pragma once
// `ktune package`: what a serving engine ships for one kernel family on one arch. From a
// database (validated like codegen: stale template hash, mixed devices or compilers refused) it
// compiles every winner's program once and writes into one directory:
//   <family>_dispatch.hpp   exactly what `ktune codegen --arch A` writes (select(), Kernel, ...)
//   <family>_package.hpp    includes it and maps every Kernel to its code object file and the
//                           lowered (mangled) symbol of each of its name expressions
//   <hash>.cubin / .hsaco   one code object per distinct list of name expressions, named by the
//                           xxh64 of its bytes (the same code gives the same file name)
//   manifest.json           ktune version, family, arch, compiler version, template hash, the
//                           code objects with their name expressions and symbols, and the size,
//                           xxh64 and xxh3-64 of every file above
// Not byte-for-byte deterministic yet: NVRTC names the internal-linkage constants of the
// templates (namespace-scope constexpr in templates/mla_decode/geometry.hpp) with a part that
// differs per compile, so code objects, their names, the package header and the manifest differ
// between runs of the same inputs. Everything else is a function of database, templates and
// compiler.
#include <string>
#include <vector>

#include "db/database.hpp"
#include "dispatch/table.hpp"
#include "jit/cache.hpp"
#include "jit/compiler.hpp"
#include "kernels/family.hpp"

namespace ktune::dispatch {

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr int kManifestFormat = 1;

struct PackagedCodeObject {
  std::string file;                           // "<xxh64>.cubin" / ".hsaco", relative to the package directory
  std::vector<std::string> name_expressions;  // as in the dispatch header's Kernel
  std::vector<std::string> symbols;           // lowered names, same order
};

struct PackageFile {
  std::string path;  // relative to the package directory
  uint64_t bytes = 0;
  std::string xxh64, xxh3_64;  // 16 hex digits each
};

struct Package {
  std::string family, arch, compiler_version, template_hash;
  // Of the runs whose results it packages: code from another compiler than compiler_version was
  // timed (the packaged code may differ from what won; `ktune package` warns).
  std::vector<std::string> tuned_compiler_versions;
  std::vector<PackagedCodeObject> code_objects;  // sorted by name expressions
  std::vector<PackageFile> files;                // sorted by path; every file but the manifest
  jit::CacheWriteFailures cache_writes_failed;   // of request.cache (`ktune package` warns)
  // Code objects of the package this one replaced that it does not use: removed, and those that
  // could not be ("file: why"; `ktune package` warns).
  std::vector<std::string> removed_code_objects, not_removed;
};

struct PackageRequest {
  Request table;  // table.arch is required: a package serves one arch
  std::string out_dir;
  const jit::CodeCache* cache = nullptr;  // null: compile everything
  int jobs = 0;                           // compiling threads; 0: one per core
};

// "cubin" for sm_*, "hsaco" for gfx*; throws Error naming the arches ktune knows otherwise.
std::string code_object_extension(std::string_view arch);

// Builds the table, compiles its winners with `compiler` and writes the package (see above).
// Throws Error, before anything is written, when the arch is unknown, a validator refuses the
// database, it has nothing for the arch, or a winner does not compile with the current
// templates. Every file is then written next to its path before any is renamed into place (the
// manifest last), so that a failure to write leaves a package already there as it was. Code
// objects of that package which this one does not use are removed after; no other file of the
// directory is touched.
Package write_package(db::Database& db, const Family& family, const jit::Compiler& compiler,
                      const PackageRequest& request);

// The size and hashes of `bytes`, as the manifest records them.
PackageFile describe_file(std::string path, std::string_view bytes);

}  // namespace ktune::dispatch
