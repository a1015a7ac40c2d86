// Consumer of the installed ktune package: the generated table at compile time, the runtime at run
// time. Without a GPU it prints the runtime's no_device status and exits 0; with an NVIDIA GPU
// (libcuda.so.1 and a device) it computes a small MLA decode through ktune::mla_decode and checks
// it against a double-precision reference written here, exiting 1 on any mismatch.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ktune/runtime.hpp"
#include "mla_decode_package.hpp"

namespace d = ktune_dispatch::mla_decode;

// The generated table at compile time: a tuned key selects a kernel that the package holds.
constexpr d::Key kTuned{16, 1, 1, d::KvDtype::bf16, 32};
static_assert(d::select("sm_90a", kTuned).kind == d::Selection::Kind::kernel, "the packaged table lost its key");
static_assert(d::code_object_index(*d::select("sm_90a", kTuned).kernel) < d::kCodeObjects.size(),
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
  F fn(const char* name) const { return reinterpret_cast<F>(dlsym(lib, name)); }
  // Makes device 0's primary context current; false without a driver or device.
  bool make_context() const {
    int dev = 0;
    void* ctx = nullptr;
    return lib != nullptr && fn<int (*)(unsigned)>("cuInit")(0) == 0 && fn<int (*)(int*, int)>("cuDeviceGet")(&dev, 0) == 0 &&
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
      !check(alloc(&lens, p.kv_lens.size() * 4), "cuMemAlloc") || !check(alloc(&o, rows * kValueDim * 2), "cuMemAlloc") ||
      !check(alloc(&lse, rows * 4), "cuMemAlloc"))
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
  std::printf("consumer: computed MLA decode through ktune: max abs err %.3g, %zu of %zu outside tolerance\n",
              max_err, bad, out.size());
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
  // A CPU-only machine: no_device is the expected answer.
  if (!gpu) return selected.status == ktune::Status::no_device ? 0 : 1;
  return compute_on_gpu(cu);
}
