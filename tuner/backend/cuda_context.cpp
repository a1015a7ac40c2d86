// Built only with the CUDA headers (KTUNE_WITH_CUDA, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_CUDA
#include "backend/cuda_context.hpp"

#include <fmt/format.h>

#include "backend/checks.hpp"
#include "backend/cuda_programmatic_launch.hpp"

namespace ktune::backend {
namespace {

// Destructors cannot report failures: after a DeviceFault every call fails, and what is left
// goes with the process that must then be discarded anyway.
void ignore(CUresult) {}

// The driver API acts on the calling thread's current context; a Context may move between
// threads (one at a time), so every entry point makes its context current first.
void make_current(const CudaDriver& d, CUcontext ctx) { d.check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); }

class PrimaryContext {
 public:
  PrimaryContext(const CudaDriver& d, int ordinal) : d_(d) {
    d.check(d.cuDeviceGet(&device_, ordinal), fmt::format("cuDeviceGet({})", ordinal));
    d.check(d.cuDevicePrimaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
  }
  ~PrimaryContext() { ignore(d_.cuDevicePrimaryCtxRelease(device_)); }
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  CUcontext get() const noexcept { return ctx_; }

 private:
  const CudaDriver& d_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

class Stream {
 public:
  Stream(const CudaDriver& d, CUcontext ctx) : d_(d), ctx_(ctx) {
    make_current(d, ctx);
    // Non-blocking: no implicit synchronisation with the legacy default stream that other
    // code in the process might use.
    d.check(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  ~Stream() {
    ignore(d_.cuCtxSetCurrent(ctx_));
    ignore(d_.cuStreamDestroy(stream_));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const noexcept { return stream_; }

 private:
  const CudaDriver& d_;
  CUcontext ctx_;
  CUstream stream_ = nullptr;
};

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(const CudaDriver& d, CUcontext ctx, CUdeviceptr ptr, size_t size)
      : d_(d), ctx_(ctx), ptr_(ptr), size_(size) {}
  ~CudaBuffer() override {
    if (ptr_ == 0) return;
    ignore(d_.cuCtxSetCurrent(ctx_));
    ignore(d_.cuMemFree(ptr_));
  }
  uint64_t address() const noexcept override { return ptr_; }
  size_t size() const noexcept override { return size_; }

 private:
  const CudaDriver& d_;
  CUcontext ctx_;
  CUdeviceptr ptr_;
  size_t size_;
};

class CudaModule final : public Module {
 public:
  CudaModule(const CudaDriver& d, CUcontext ctx, CUmodule module) : d_(d), ctx_(ctx), module_(module) {}
  ~CudaModule() override {
    ignore(d_.cuCtxSetCurrent(ctx_));
    ignore(d_.cuModuleUnload(module_));
  }
  void* function(std::string_view lowered_name) override {
    std::string name(lowered_name);
    CUfunction fn = nullptr;
    make_current(d_, ctx_);
    d_.check(d_.cuModuleGetFunction(&fn, module_, name.c_str()), "cuModuleGetFunction(" + name + ")");
    return fn;
  }

 private:
  const CudaDriver& d_;
  CUcontext ctx_;
  CUmodule module_;
};

class CudaEvent final : public Event {
 public:
  CudaEvent(const CudaDriver& d, CUcontext ctx) : d_(d), ctx_(ctx) {
    make_current(d, ctx);
    d.check(d.cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~CudaEvent() override {
    ignore(d_.cuCtxSetCurrent(ctx_));
    ignore(d_.cuEventDestroy(event_));
  }
  CUevent get() const noexcept { return event_; }

 private:
  const CudaDriver& d_;
  CUcontext ctx_;
  CUevent event_ = nullptr;
};

class CudaGraph final : public Graph {
 public:
  // Owns `graph` from here on, so that it is destroyed also when instantiate() fails.
  CudaGraph(const CudaDriver& d, CUcontext ctx, CUgraph graph) : d_(d), ctx_(ctx), graph_(graph) {}
  void instantiate() { d_.check(d_.cuGraphInstantiate(&exec_, graph_, 0), "cuGraphInstantiate"); }
  ~CudaGraph() override {
    ignore(d_.cuCtxSetCurrent(ctx_));
    if (exec_) ignore(d_.cuGraphExecDestroy(exec_));
    ignore(d_.cuGraphDestroy(graph_));
  }
  CUgraphExec exec() const noexcept { return exec_; }

 private:
  const CudaDriver& d_;
  CUcontext ctx_;
  CUgraph graph_;
  CUgraphExec exec_ = nullptr;
};

class CudaContext final : public Context {
 public:
  CudaContext(const CudaDriver& d, const DeviceInfo& info)
      : d_(d), info_(info), primary_(d, info.ordinal), stream_(d, primary_.get()) {}

  const DeviceInfo& info() const noexcept override { return info_; }

  int64_t free_memory_bytes() override {
    bind();
    size_t free = 0, total = 0;
    d_.check(d_.cuMemGetInfo(&free, &total), "cuMemGetInfo");
    return static_cast<int64_t>(free);
  }

  std::unique_ptr<Buffer> alloc(size_t bytes) override {
    CUdeviceptr ptr = 0;
    if (bytes > 0) {  // the driver rejects empty allocations; an empty buffer needs no memory
      bind();
      d_.check(d_.cuMemAlloc(&ptr, bytes), fmt::format("cuMemAlloc({} bytes)", bytes));
    }
    return std::make_unique<CudaBuffer>(d_, primary_.get(), ptr, bytes);
  }

  void upload(Buffer& dst, const void* src, size_t bytes, size_t dst_offset) override {
    require_range(dst, dst_offset, bytes, "upload");
    if (bytes == 0) return;
    bind();
    d_.check(d_.cuMemcpyHtoDAsync(dst.address() + dst_offset, src, bytes, stream_.get()), "cuMemcpyHtoDAsync");
    synchronize();  // the caller may reuse `src` as soon as this returns
  }

  void download(void* dst, const Buffer& src, size_t bytes, size_t src_offset) override {
    require_range(src, src_offset, bytes, "download");
    if (bytes == 0) return;
    bind();
    d_.check(d_.cuMemcpyDtoHAsync(dst, src.address() + src_offset, bytes, stream_.get()), "cuMemcpyDtoHAsync");
    synchronize();
  }

  void fill(Buffer& dst, uint8_t byte) override {
    if (dst.size() == 0) return;
    bind();
    d_.check(d_.cuMemsetD8Async(dst.address(), byte, dst.size(), stream_.get()), "cuMemsetD8Async");
  }

  void copy(Buffer& dst, const Buffer& src, size_t bytes) override {
    require_range(dst, 0, bytes, "copy (destination)");
    require_range(src, 0, bytes, "copy (source)");
    if (bytes == 0) return;
    bind();
    d_.check(d_.cuMemcpyDtoDAsync(dst.address(), src.address(), bytes, stream_.get()), "cuMemcpyDtoDAsync");
  }

  std::unique_ptr<Module> load(std::span<const char> code) override {
    if (code.empty()) throw Error("cuModuleLoadData: empty code object");
    bind();
    CUmodule module = nullptr;
    d_.check(d_.cuModuleLoadData(&module, code.data()), "cuModuleLoadData");
    return std::make_unique<CudaModule>(d_, primary_.get(), module);
  }

  void set_shared_limit(void* fn, size_t bytes) override {
    if (static_cast<int64_t>(bytes) <= info_.shared_per_block) return;
    if (static_cast<int64_t>(bytes) > info_.shared_per_block_optin)
      throw Error(fmt::format("a kernel asks for {} bytes of shared memory; {} allows at most {}", bytes, info_.name,
                              info_.shared_per_block_optin));
    bind();
    d_.check(d_.cuFuncSetAttribute(static_cast<CUfunction>(fn), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(bytes)),
             fmt::format("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {})", bytes));
  }

  void launch(void* fn, Dim3 grid, Dim3 block, size_t shared_bytes, void** args) override {
    bind();
    CUresult r = d_.cuLaunchKernel(static_cast<CUfunction>(fn), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                   static_cast<unsigned>(shared_bytes), stream_.get(), args, nullptr);
    if (r != CUDA_SUCCESS)  // the message is formatted only on failure: launches are the hot path
      d_.check(r, fmt::format("cuLaunchKernel(grid {}x{}x{}, block {}x{}x{}, {} shared bytes)", grid.x, grid.y, grid.z,
                              block.x, block.y, block.z, shared_bytes));
  }

  void launch_dependent(void* fn, Dim3 grid, Dim3 block, size_t shared_bytes, void** args) override {
    if (!info_.overlapping_launches) return launch(fn, grid, block, shared_bytes, args);
    bind();
    const ProgrammaticLaunch l({grid.x, grid.y, grid.z}, {block.x, block.y, block.z},
                               static_cast<unsigned>(shared_bytes), stream_.get());
    CUresult r = d_.cuLaunchKernelEx(&l.config, static_cast<CUfunction>(fn), args, nullptr);
    if (r != CUDA_SUCCESS)
      d_.check(r, fmt::format("cuLaunchKernelEx(grid {}x{}x{}, block {}x{}x{}, {} shared bytes, overlapping the "
                              "previous launch)",
                              grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes));
  }

  std::unique_ptr<Event> event() override { return std::make_unique<CudaEvent>(d_, primary_.get()); }

  void record(Event& e) override {
    bind();
    d_.check(d_.cuEventRecord(downcast<CudaEvent>(e, "event").get(), stream_.get()), "cuEventRecord");
  }

  float elapsed_ms(const Event& start, const Event& stop) override {
    const CudaEvent& from = downcast<const CudaEvent>(start, "start event");
    const CudaEvent& to = downcast<const CudaEvent>(stop, "stop event");
    bind();
    d_.check(d_.cuEventSynchronize(to.get()), "cuEventSynchronize");
    float ms = 0;
    d_.check(d_.cuEventElapsedTime(&ms, from.get(), to.get()), "cuEventElapsedTime");
    return ms;
  }

  void synchronize() override {
    bind();
    d_.check(d_.cuStreamSynchronize(stream_.get()), "cuStreamSynchronize");
  }

  void begin_capture() override {
    bind();
    // Thread-local mode: only this thread's unsafe calls (e.g. cuMemAlloc) break the capture,
    // not those of threads that compile or verify meanwhile.
    d_.check(d_.cuStreamBeginCapture(stream_.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  }

  std::unique_ptr<Graph> end_capture() override {
    bind();
    CUgraph graph = nullptr;
    d_.check(d_.cuStreamEndCapture(stream_.get(), &graph), "cuStreamEndCapture");
    auto captured = std::make_unique<CudaGraph>(d_, primary_.get(), graph);
    captured->instantiate();
    return captured;
  }

  void replay(Graph& g) override {
    bind();
    d_.check(d_.cuGraphLaunch(downcast<CudaGraph>(g, "graph").exec(), stream_.get()), "cuGraphLaunch");
  }

 private:
  void bind() { make_current(d_, primary_.get()); }

  const CudaDriver& d_;
  DeviceInfo info_;
  PrimaryContext primary_;
  Stream stream_;
};

}  // namespace

std::unique_ptr<Context> open_cuda_context(const CudaDriver& driver, const DeviceInfo& info) {
  return std::make_unique<CudaContext>(driver, info);
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_CUDA
