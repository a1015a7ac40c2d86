// Consumer of the installed ktune package: the generated tables at compile time, the runtime at run
// time, both families. Without a GPU it prints the runtime's no_device status and exits 0; with an
// NVIDIA GPU (libcuda.so.1 and a device) it computes a small MLA decode through ktune::mla_decode
// and a qk_rope_cache through ktune::qk_rope_cache and checks both against double-precision
// references written here (the contracts of docs/kernels/), exiting 1 on any mismatch.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ktune/runtime.hpp"
#include "mla_decode-sm_90a/mla_decode_package.hpp"
#include "qk_rope_cache-sm_90a/qk_rope_cache_package.hpp"

namespace d = ktune_dispatch::mla_decode;
namespace r = ktune_dispatch::qk_rope_cache;

// The generated tables at compile time: a tuned key selects a kernel that the package holds.
constexpr d::Key kTuned{16, 1, 1, d::KvDtype::bf16, 32};
static_assert(d::select("sm_90a", kTuned).kind == d::Selection::Kind::kernel, "the packaged table lost its key");
static_assert(d::code_object_index(*d::select("sm_90a", kTuned).kernel) < d::kCodeObjects.size(),
              "the kernel has no code object");
constexpr r::Key kRopeTuned{16, r::KvDtype::fp8_e4m3fn, r::QDtype::bf16, r::Rope::full, 1, 64};
static_assert(r::select("sm_90a", kRopeTuned).kind == r::Selection::Kind::kernel, "the packaged table lost its key");
static_assert(r::code_object_index(*r::select("sm_90a", kRopeTuned).kernel) < r::kCodeObjects.size(),
              "the kernel has no code object");

namespace {

constexpr int kHeadDim = 576, kValueDim = 512;

uint16_t to_bf16(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);  // round to nearest even
}
float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

// The few CUDA driver calls the consumer needs to own a context and buffers.
struct Cuda {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  template <class F>
  F fn(const char* name) const {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
  // Makes device 0's primary context current; false without a driver or device.
  bool make_context() const {
    int dev = 0;
    void* ctx = nullptr;
    return lib != nullptr && fn<int (*)(unsigned)>("cuInit")(0) == 0 &&
           fn<int (*)(int*, int)>("cuDeviceGet")(&dev, 0) == 0 &&
           fn<int (*)(void**, int)>("cuDevicePrimaryCtxRetain")(&ctx, dev) == 0 &&
           fn<int (*)(void*)>("cuCtxSetCurrent")(ctx) == 0;
  }
};

struct Problem {
  int batch = 2, heads = 16, page_size = 16, max_pages = 3;
  std::vector<int32_t> kv_lens{40, 33};
  float scale = 0.0721687836f;
  std::vector<uint16_t> q, kv;
  std::vector<int32_t> block_table;
  Problem() {
    q.resize(static_cast<size_t>(batch) * heads * kHeadDim);
    kv.resize(static_cast<size_t>(batch) * max_pages * page_size * kHeadDim);
    uint32_t state = 12345;
    auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f;
    };
    for (auto& x : q) x = to_bf16(next());
    for (auto& x : kv) x = to_bf16(next());
    for (int b = 0; b < batch; ++b)
      for (int p = 0; p < max_pages; ++p) block_table.push_back(b * max_pages + (max_pages - 1 - p));  // reversed pages
  }
  const uint16_t* key_row(int b, int j) const {
    const int page = block_table[static_cast<size_t>(b) * max_pages + j / page_size];
    return &kv[(static_cast<size_t>(page) * page_size + j % page_size) * kHeadDim];
  }
  // Block length 1: the causal row sees every key.
  std::vector<double> reference_o() const {
    std::vector<double> o(static_cast<size_t>(batch) * heads * kValueDim);
    for (int b = 0; b < batch; ++b)
      for (int h = 0; h < heads; ++h) {
        const uint16_t* qr = &q[(static_cast<size_t>(b) * heads + h) * kHeadDim];
        std::vector<double> s(kv_lens[b]);
        double max = -INFINITY, sum = 0;
        for (int j = 0; j < kv_lens[b]; ++j) {
          double dot = 0;
          for (int d = 0; d < kHeadDim; ++d) dot += double(from_bf16(qr[d])) * from_bf16(key_row(b, j)[d]);
          s[j] = dot * scale;
          max = std::fmax(max, s[j]);
        }
        for (auto& x : s) sum += (x = std::exp(x - max));
        for (int j = 0; j < kv_lens[b]; ++j)
          for (int d = 0; d < kValueDim; ++d)
            o[(static_cast<size_t>(b) * heads + h) * kValueDim + d] += s[j] / sum * from_bf16(key_row(b, j)[d]);
      }
    return o;
  }
};

int compute_on_gpu(const Cuda& cu) {
  using Dptr = unsigned long long;
  auto check = [](int r, const char* what) {
    if (r != 0) std::fprintf(stderr, "consumer: %s failed (CUresult %d)\n", what, r);
    return r == 0;
  };
  const auto alloc = cu.fn<int (*)(Dptr*, size_t)>("cuMemAlloc_v2");
  const auto upload = cu.fn<int (*)(Dptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  const auto download = cu.fn<int (*)(void*, Dptr, size_t)>("cuMemcpyDtoH_v2");
  const auto sync = cu.fn<int (*)()>("cuCtxSynchronize");

  const Problem p;
  const size_t rows = static_cast<size_t>(p.batch) * p.heads;
  Dptr q = 0, kv = 0, table = 0, lens = 0, o = 0, lse = 0, workspace = 0;
  if (!check(alloc(&q, p.q.size() * 2), "cuMemAlloc") || !check(alloc(&kv, p.kv.size() * 2), "cuMemAlloc") ||
      !check(alloc(&table, p.block_table.size() * 4), "cuMemAlloc") ||
      !check(alloc(&lens, p.kv_lens.size() * 4), "cuMemAlloc") ||
      !check(alloc(&o, rows * kValueDim * 2), "cuMemAlloc") || !check(alloc(&lse, rows * 4), "cuMemAlloc"))
    return 1;
  upload(q, p.q.data(), p.q.size() * 2);
  upload(kv, p.kv.data(), p.kv.size() * 2);
  upload(table, p.block_table.data(), p.block_table.size() * 4);
  upload(lens, p.kv_lens.data(), p.kv_lens.size() * 4);

  ktune_mla_decode_args a{};
  a.q = reinterpret_cast<void*>(q);
  a.kv_cache = reinterpret_cast<void*>(kv);
  a.block_table = reinterpret_cast<const int32_t*>(table);
  a.kv_lens = reinterpret_cast<const int32_t*>(lens);
  a.o = reinterpret_cast<void*>(o);
  a.lse = reinterpret_cast<float*>(lse);
  a.softmax_scale = p.scale;
  a.kv_scale = 1.0f;
  a.max_pages = p.max_pages;
  a.page_size = p.page_size;
  a.max_kv_len = 40;
  a.key = {p.heads, 1, 1, 0, p.batch};
  size_t bytes = 0;
  if (const auto r = ktune::mla_decode_workspace_size(a, bytes); !r.launched()) {
    std::printf("consumer: workspace query: %s: %s\n", ktune::to_string(r.status).data(), r.message.c_str());
    return 1;
  }
  if (bytes > 0 && !check(alloc(&workspace, bytes), "cuMemAlloc")) return 1;
  a.workspace = reinterpret_cast<void*>(workspace);
  a.workspace_bytes = bytes;
  const auto r = ktune::mla_decode(nullptr, a);
  std::printf("consumer: mla_decode: %s (%s), %d split(s)\n", ktune::to_string(r.status).data(), r.message.c_str(),
              r.splits);
  if (!r.launched() || !check(sync(), "cuCtxSynchronize")) return 1;
  std::vector<uint16_t> out(rows * kValueDim);
  download(out.data(), o, out.size() * 2);
  const auto ref = p.reference_o();
  double max_err = 0;
  size_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(from_bf16(out[i]) - ref[i]);
    max_err = std::fmax(max_err, std::isnan(err) ? INFINITY : err);
    bad += !(err <= 1e-2 + 1e-2 * std::fabs(ref[i]));
  }
  std::printf("consumer: computed MLA decode through ktune: max abs err %.3g, %zu of %zu outside tolerance\n", max_err,
              bad, out.size());
  return bad == 0 ? 0 : 1;
}

// qk_rope_cache: T tokens of H = 16 heads, an fp8_e4m3fn cache (k_scale), a bf16 q_out, NeoX rope
// over a full table; every third token padded (slot -1: its cache row stays untouched).
float from_fp8_e4m3fn(uint8_t b) {
  const int sign = b >> 7, exponent = (b >> 3) & 15, mantissa = b & 7;
  if (exponent == 15 && mantissa == 7) return NAN;
  const float v = exponent == 0 ? std::ldexp(mantissa / 8.0f, -6) : std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
  return sign ? -v : v;
}

struct RopeProblem {
  static constexpr int kTokens = 24, kHeads = 16, kNope = 512, kRope = 64, kRow = 576, kSlots = 64, kTableRows = 128;
  float k_scale = 0.03f;
  std::vector<uint16_t> q_nope, q_pe, kv_c, k_pe;
  std::vector<int64_t> positions, slots;
  std::vector<float> cos, sin;
  RopeProblem() {
    uint32_t state = 777;
    auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) / 16777216.0f * 4.0f - 2.0f;
    };
    for (auto* v : {&q_nope, &q_pe, &kv_c, &k_pe}) {
      const size_t n = (v == &q_nope ? kHeads * kNope : v == &q_pe ? kHeads * kRope : v == &kv_c ? kNope : kRope);
      v->resize(n * kTokens);
      for (auto& x : *v) x = to_bf16(next());
    }
    for (int t = 0; t < kTokens; ++t) {
      positions.push_back((t * 37) % kTableRows);
      slots.push_back(t % 3 == 2 ? -1 : (t * 5 + 1) % kSlots);
    }
    for (int p = 0; p < kTableRows; ++p)
      for (int i = 0; i < kRope / 2; ++i) {
        const double angle = p * std::pow(10000.0, -i / 32.0);
        cos.push_back(static_cast<float>(std::cos(angle)));
        sin.push_back(static_cast<float>(std::sin(angle)));
      }
  }
  // [nope | NeoX rope(pe)] of one row, in double.
  std::vector<double> row(const uint16_t* nope, const uint16_t* pe, int64_t position) const {
    std::vector<double> out(kRow);
    for (int e = 0; e < kNope; ++e) out[e] = from_bf16(nope[e]);
    for (int i = 0; i < kRope / 2; ++i) {
      const double c = cos[position * 32 + i], s = sin[position * 32 + i];
      const double x = from_bf16(pe[i]), y = from_bf16(pe[i + 32]);
      out[kNope + i] = x * c - y * s;
      out[kNope + i + 32] = y * c + x * s;
    }
    return out;
  }
};

int compute_rope_on_gpu(const Cuda& cu) {
  using Dptr = unsigned long long;
  const auto alloc = cu.fn<int (*)(Dptr*, size_t)>("cuMemAlloc_v2");
  const auto upload = cu.fn<int (*)(Dptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  const auto download = cu.fn<int (*)(void*, Dptr, size_t)>("cuMemcpyDtoH_v2");
  const auto memset = cu.fn<int (*)(Dptr, unsigned char, size_t)>("cuMemsetD8_v2");
  const auto sync = cu.fn<int (*)()>("cuCtxSynchronize");
  const RopeProblem p;
  using P = RopeProblem;
  auto device_copy = [&](const auto& host) {
    Dptr d = 0;
    alloc(&d, host.size() * sizeof(host[0]));
    upload(d, host.data(), host.size() * sizeof(host[0]));
    return d;
  };
  const Dptr q_nope = device_copy(p.q_nope), q_pe = device_copy(p.q_pe), kv_c = device_copy(p.kv_c),
             k_pe = device_copy(p.k_pe), positions = device_copy(p.positions), slots = device_copy(p.slots),
             cos = device_copy(p.cos), sin = device_copy(p.sin);
  Dptr kv_cache = 0, q_out = 0, workspace = 0;
  alloc(&kv_cache, P::kSlots * P::kRow);
  alloc(&q_out, P::kTokens * P::kHeads * P::kRow * 2);
  memset(kv_cache, 0x5a, P::kSlots * P::kRow);  // the canary of untouched rows
  ktune_qk_rope_cache_args a{};
  a.q_nope = reinterpret_cast<void*>(q_nope);
  a.q_pe = reinterpret_cast<void*>(q_pe);
  a.kv_c = reinterpret_cast<void*>(kv_c);
  a.k_pe = reinterpret_cast<void*>(k_pe);
  a.positions = reinterpret_cast<const int64_t*>(positions);
  a.slot_mapping = reinterpret_cast<const int64_t*>(slots);
  a.cos_table = reinterpret_cast<const float*>(cos);
  a.sin_table = reinterpret_cast<const float*>(sin);
  a.kv_cache = reinterpret_cast<void*>(kv_cache);
  a.q_out = reinterpret_cast<void*>(q_out);
  a.k_scale = p.k_scale;
  a.q_scale = 1.0f;
  a.table_rows = P::kTableRows;
  a.key = {P::kHeads, 1, 0, 0, 1, P::kTokens};
  size_t bytes = 0;
  if (const auto r = ktune::qk_rope_cache_workspace_size(a, bytes); !r.launched()) {
    std::printf("consumer: qk_rope_cache workspace query: %s: %s\n", ktune::to_string(r.status).data(),
                r.message.c_str());
    return 1;
  }
  if (bytes > 0) alloc(&workspace, bytes);
  a.workspace = reinterpret_cast<void*>(workspace);
  a.workspace_bytes = bytes;
  const auto r = ktune::qk_rope_cache(nullptr, a);
  std::printf("consumer: qk_rope_cache: %s (%s)\n", ktune::to_string(r.status).data(), r.message.c_str());
  if (!r.launched() || sync() != 0) return 1;
  std::vector<uint16_t> q(P::kTokens * P::kHeads * P::kRow);
  std::vector<uint8_t> cache(P::kSlots * P::kRow);
  download(q.data(), q_out, q.size() * 2);
  download(cache.data(), kv_cache, cache.size());
  size_t bad = 0, checked = 0;
  double max_err = 0;
  auto expect = [&](double got, double want, double tolerance) {
    const double err = std::fabs(got - want);
    max_err = std::fmax(max_err, std::isnan(err) ? INFINITY : err);
    bad += !(err <= tolerance);
    ++checked;
  };
  std::vector<bool> written(P::kSlots, false);
  for (int t = 0; t < P::kTokens; ++t) {
    for (int h = 0; h < P::kHeads; ++h) {
      const size_t qrow = static_cast<size_t>(t) * P::kHeads + h;
      const auto want = p.row(&p.q_nope[qrow * P::kNope], &p.q_pe[qrow * P::kRope], p.positions[t]);
      for (int e = 0; e < P::kRow; ++e)
        expect(from_bf16(q[qrow * P::kRow + e]), want[e], 1e-2 + 1e-2 * std::fabs(want[e]));
    }
    if (p.slots[t] < 0) continue;
    written[p.slots[t]] = true;
    const auto want = p.row(&p.kv_c[t * P::kNope], &p.k_pe[t * P::kRope], p.positions[t]);
    for (int e = 0; e < P::kRow; ++e)  // fp8 e4m3: 3 mantissa bits, one rounding
      expect(from_fp8_e4m3fn(cache[p.slots[t] * P::kRow + e]) * p.k_scale, want[e], 0.07 * std::fabs(want[e]) + 1e-2);
  }
  for (int s = 0; s < P::kSlots; ++s)
    if (!written[s])
      for (int e = 0; e < P::kRow; ++e) bad += cache[s * P::kRow + e] != 0x5a;
  std::printf("consumer: computed qk_rope_cache through ktune: max abs err %.3g, %zu of %zu outside tolerance or "
              "written where padded\n",
              max_err, bad, checked);
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main() {
  std::printf("consumer: %s\n", ktune::runtime_info().data());
  const Cuda cu;
  const bool gpu = cu.make_context();
  const auto selected = ktune::mla_decode_select({16, 1, 1, 0, 32});
  std::printf("consumer: select on this machine: %s (%s)\n", ktune::to_string(selected.status).data(),
              selected.message.c_str());
  const auto rope_selected = ktune::qk_rope_cache_select({16, 1, 0, 0, 1, 64});
  std::printf("consumer: qk_rope_cache select on this machine: %s (%s)\n",
              ktune::to_string(rope_selected.status).data(), rope_selected.message.c_str());
  // A CPU-only machine: no_device is the expected answer.
  if (!gpu)
    return selected.status == ktune::Status::no_device && rope_selected.status == ktune::Status::no_device ? 0 : 1;
  const int mla = compute_on_gpu(cu);
  const int rope = compute_rope_on_gpu(cu);
  return mla != 0 || rope != 0 ? 1 : 0;
}
