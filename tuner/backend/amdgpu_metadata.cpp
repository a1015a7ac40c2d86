#include "backend/amdgpu_metadata.hpp"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace ktune::backend {
namespace {

constexpr uint16_t kEmAmdgpu = 224;         // e_machine of AMDGPU code objects
constexpr uint32_t kPtNote = 4;             // program header of a note segment
constexpr uint32_t kNtAmdgpuMetadata = 32;  // note type, owner "AMDGPU"

// A little-endian unsigned integer of `bytes` at `offset`, or Error when the file ends first.
uint64_t read_le(std::span<const char> elf, uint64_t offset, int bytes) {
  if (offset > elf.size() || elf.size() - offset < static_cast<uint64_t>(bytes))
    throw Error(fmt::format("AMDGPU code object: truncated ({} bytes; a field at byte {} of {} bytes lies past "
                            "its end)",
                            elf.size(), offset, bytes));
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(elf[offset + i]);
  return v;
}

std::optional<int64_t> integer(const nlohmann::json& kernel, const char* field) {
  const auto it = kernel.find(field);
  if (it == kernel.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::string text(const nlohmann::json& map, const char* field) {
  const auto it = map.find(field);
  return it != map.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The descriptor of the AMDGPU metadata note, from the note segments.
std::span<const char> metadata_note(std::span<const char> elf) {
  if (elf.size() < 64 || std::memcmp(elf.data(),
                                     "\x7f"
                                     "ELF",
                                     4) != 0)
    throw Error("AMDGPU code object: not an ELF file");
  if (elf[4] != 2 || elf[5] != 1) throw Error("AMDGPU code object: not a 64-bit little-endian ELF");
  if (const auto machine = read_le(elf, 18, 2); machine != kEmAmdgpu)
    throw Error(fmt::format("AMDGPU code object: ELF machine {} is not AMDGPU ({})", machine, kEmAmdgpu));
  const uint64_t phoff = read_le(elf, 32, 8);
  const uint64_t phentsize = read_le(elf, 54, 2);
  const uint64_t phnum = read_le(elf, 56, 2);
  for (uint64_t p = 0; p < phnum; ++p) {
    const uint64_t ph = phoff + p * phentsize;
    if (read_le(elf, ph, 4) != kPtNote) continue;
    const uint64_t offset = read_le(elf, ph + 8, 8), size = read_le(elf, ph + 32, 8);
    if (offset > elf.size() || elf.size() - offset < size)
      throw Error(fmt::format("AMDGPU code object: truncated (a note segment of {} bytes at byte {}, in {} bytes)",
                              size, offset, elf.size()));
    for (uint64_t n = offset; n + 12 <= offset + size;) {
      const uint64_t namesz = read_le(elf, n, 4), descsz = read_le(elf, n + 4, 4), type = read_le(elf, n + 8, 4);
      const uint64_t name = n + 12, desc = name + ((namesz + 3) & ~uint64_t{3});
      const uint64_t next = desc + ((descsz + 3) & ~uint64_t{3});
      if (next > offset + size) throw Error("AMDGPU code object: a note runs past its segment");
      if (type == kNtAmdgpuMetadata && namesz == 7 && std::memcmp(elf.data() + name, "AMDGPU", 7) == 0)
        return elf.subspan(desc, descsz);
      n = next;
    }
  }
  throw Error("AMDGPU code object: no AMDGPU metadata note (a code object older than v3?)");
}

}  // namespace

const AmdgpuKernelMetadata* AmdgpuMetadata::find(std::string_view name) const noexcept {
  for (const auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

AmdgpuMetadata read_amdgpu_metadata(std::span<const char> elf) {
  const auto note = metadata_note(elf);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::from_msgpack(note.begin(), note.end());
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("AMDGPU code object: the metadata note is not MessagePack: {}", e.what()));
  }
  const auto kernels = doc.is_object() ? doc.find("amdhsa.kernels") : doc.end();
  if (!doc.is_object() || kernels == doc.end() || !kernels->is_array())
    throw Error("AMDGPU code object: the metadata note has no amdhsa.kernels list");
  AmdgpuMetadata out;
  out.target = text(doc, "amdhsa.target");
  for (const auto& k : *kernels) {
    if (!k.is_object()) throw Error("AMDGPU code object: an amdhsa.kernels entry is not a map");
    AmdgpuKernelMetadata m;
    m.name = text(k, ".name");
    m.symbol = text(k, ".symbol");
    m.vgpr_count = integer(k, ".vgpr_count");
    m.agpr_count = integer(k, ".agpr_count");
    m.sgpr_count = integer(k, ".sgpr_count");
    m.vgpr_spill_count = integer(k, ".vgpr_spill_count");
    m.sgpr_spill_count = integer(k, ".sgpr_spill_count");
    m.private_segment_fixed_size = integer(k, ".private_segment_fixed_size");
    m.group_segment_fixed_size = integer(k, ".group_segment_fixed_size");
    m.wavefront_size = integer(k, ".wavefront_size");
    m.max_flat_workgroup_size = integer(k, ".max_flat_workgroup_size");
    out.kernels.push_back(std::move(m));
  }
  return out;
}

}  // namespace ktune::backend
