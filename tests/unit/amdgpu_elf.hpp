#pragma once
// AMDGPU code objects built byte by byte for tests: a 64-bit ELF with one note segment, and the
// MessagePack metadata the compiler writes into its NT_AMDGPU_METADATA note.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune::test_support {

inline void put(std::vector<char>& b, size_t at, uint64_t v, int bytes) {
  if (b.size() < at + bytes) b.resize(at + bytes);
  for (int i = 0; i < bytes; ++i) b[at + i] = static_cast<char>(v >> (8 * i) & 0xff);
}

// A 64-bit little-endian ELF of `machine` with one note segment holding a note of `type` owned by
// `owner`, whose descriptor is `desc`.
inline std::vector<char> elf_with_note(const std::vector<uint8_t>& desc, uint32_t type = 32,
                                       std::string owner = "AMDGPU", uint16_t machine = 224) {
  std::vector<char> b(64, 0);
  std::memcpy(b.data(),
              "\x7f"
              "ELF",
              4);
  b[4] = 2;  // 64-bit
  b[5] = 1;  // little-endian
  b[6] = 1;
  put(b, 18, machine, 2);
  put(b, 32, 64, 8);  // e_phoff
  put(b, 54, 56, 2);  // e_phentsize
  put(b, 56, 1, 2);   // e_phnum
  std::vector<char> note;
  const size_t name_size = owner.size() + 1, name_padded = (name_size + 3) & ~size_t{3};
  put(note, 0, name_size, 4);
  put(note, 4, desc.size(), 4);
  put(note, 8, type, 4);
  note.resize(12 + name_padded, 0);
  std::memcpy(note.data() + 12, owner.c_str(), name_size);
  note.insert(note.end(), desc.begin(), desc.end());
  note.resize((note.size() + 3) & ~size_t{3}, 0);
  const size_t note_at = 64 + 56;
  put(b, 64, 4, 4);                 // PT_NOTE
  put(b, 64 + 8, note_at, 8);       // p_offset
  put(b, 64 + 32, note.size(), 8);  // p_filesz
  b.resize(note_at);
  b.insert(b.end(), note.begin(), note.end());
  return b;
}

inline nlohmann::json sample_kernel(const char* name) {
  return {{".name", name},
          {".symbol", std::string(name) + ".kd"},
          {".vgpr_count", 96},
          {".agpr_count", 16},
          {".sgpr_count", 34},
          {".vgpr_spill_count", 0},
          {".sgpr_spill_count", 0},
          {".private_segment_fixed_size", 0},
          {".group_segment_fixed_size", 1024},
          {".wavefront_size", 64},
          {".max_flat_workgroup_size", 256}};
}

inline std::vector<uint8_t> msgpack(const nlohmann::json& doc) { return nlohmann::json::to_msgpack(doc); }

}  // namespace ktune::test_support
