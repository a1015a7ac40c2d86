// Built only with the HIP headers (KTUNE_WITH_HIP, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_HIP
#include "backend/hip_context.hpp"

#include <fmt/format.h>

#include "backend/checks.hpp"

namespace ktune::backend {
namespace {

// Destructors cannot report failures: after a DeviceFault every call fails, and what is left
// goes with the process that must then be discarded anyway.
void ignore(hipError_t) {}

// The HIP runtime acts on the calling thread's current device; a Context may move between
// threads (one at a time), so every entry point selects its device first.
void select(const HipRuntime& h, int ordinal) { h.check(h.hipSetDevice(ordinal), "hipSetDevice"); }

class Stream {
 public:
  Stream(const HipRuntime& h, int ordinal) : h_(h), ordinal_(ordinal) {
    select(h, ordinal);
    // Non-blocking: no implicit synchronisation with the null stream other code might use.
    h.check(h.hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  }
  ~Stream() {
    ignore(h_.hipSetDevice(ordinal_));
    ignore(h_.hipStreamDestroy(stream_));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  hipStream_t get() const noexcept { return stream_; }

 private:
  const HipRuntime& h_;
  int ordinal_;
  hipStream_t stream_ = nullptr;
};

class HipBuffer final : public Buffer {
 public:
  HipBuffer(const HipRuntime& h, int ordinal, void* ptr, size_t size)
      : h_(h), ordinal_(ordinal), ptr_(ptr), size_(size) {}
  ~HipBuffer() override {
    if (!ptr_) return;
    ignore(h_.hipSetDevice(ordinal_));
    ignore(h_.hipFree(ptr_));
  }
  uint64_t address() const noexcept override { return reinterpret_cast<uint64_t>(ptr_); }
  size_t size() const noexcept override { return size_; }

 private:
  const HipRuntime& h_;
  int ordinal_;
  void* ptr_;
  size_t size_;
};

class HipModule final : public Module {
 public:
  HipModule(const HipRuntime& h, int ordinal, hipModule_t module) : h_(h), ordinal_(ordinal), module_(module) {}
  ~HipModule() override {
    ignore(h_.hipSetDevice(ordinal_));
    ignore(h_.hipModuleUnload(module_));
  }
  void* function(std::string_view lowered_name) override {
    std::string name(lowered_name);
    hipFunction_t fn = nullptr;
    select(h_, ordinal_);
    h_.check(h_.hipModuleGetFunction(&fn, module_, name.c_str()), "hipModuleGetFunction(" + name + ")");
    return fn;
  }

 private:
  const HipRuntime& h_;
  int ordinal_;
  hipModule_t module_;
};

class HipEvent final : public Event {
 public:
  HipEvent(const HipRuntime& h, int ordinal) : h_(h), ordinal_(ordinal) {
    select(h, ordinal);
    h.check(h.hipEventCreateWithFlags(&event_, hipEventDefault), "hipEventCreateWithFlags");
  }
  ~HipEvent() override {
    ignore(h_.hipSetDevice(ordinal_));
    ignore(h_.hipEventDestroy(event_));
  }
  hipEvent_t get() const noexcept { return event_; }

 private:
  const HipRuntime& h_;
  int ordinal_;
  hipEvent_t event_ = nullptr;
};

class HipGraph final : public Graph {
 public:
  // Owns `graph` from here on, so that it is destroyed also when instantiate() fails.
  HipGraph(const HipRuntime& h, int ordinal, hipGraph_t graph) : h_(h), ordinal_(ordinal), graph_(graph) {}
  void instantiate() { h_.check(h_.hipGraphInstantiate(&exec_, graph_, nullptr, nullptr, 0), "hipGraphInstantiate"); }
  ~HipGraph() override {
    ignore(h_.hipSetDevice(ordinal_));
    if (exec_) ignore(h_.hipGraphExecDestroy(exec_));
    ignore(h_.hipGraphDestroy(graph_));
  }
  hipGraphExec_t exec() const noexcept { return exec_; }

 private:
  const HipRuntime& h_;
  int ordinal_;
  hipGraph_t graph_;
  hipGraphExec_t exec_ = nullptr;
};

class HipContext final : public Context {
 public:
  HipContext(const HipRuntime& h, const DeviceInfo& info) : h_(h), info_(info), stream_(h, info.ordinal) {}

  const DeviceInfo& info() const noexcept override { return info_; }

  int64_t free_memory_bytes() override {
    bind();
    size_t free = 0, total = 0;
    h_.check(h_.hipMemGetInfo(&free, &total), "hipMemGetInfo");
    return static_cast<int64_t>(free);
  }

  std::unique_ptr<Buffer> alloc(size_t bytes) override {
    void* ptr = nullptr;
    if (bytes > 0) {
      bind();
      h_.check(h_.hipMalloc(&ptr, bytes), fmt::format("hipMalloc({} bytes)", bytes));
    }
    return std::make_unique<HipBuffer>(h_, info_.ordinal, ptr, bytes);
  }

  void upload(Buffer& dst, const void* src, size_t bytes, size_t dst_offset) override {
    require_range(dst, dst_offset, bytes, "upload");
    if (bytes == 0) return;
    bind();
    // hipMemcpyHtoDAsync takes a non-const source pointer but only reads it.
    h_.check(
        h_.hipMemcpyHtoDAsync(device_ptr(dst.address() + dst_offset), const_cast<void*>(src), bytes, stream_.get()),
        "hipMemcpyHtoDAsync");
    synchronize();  // the caller may reuse `src` as soon as this returns
  }

  void download(void* dst, const Buffer& src, size_t bytes, size_t src_offset) override {
    require_range(src, src_offset, bytes, "download");
    if (bytes == 0) return;
    bind();
    h_.check(h_.hipMemcpyDtoHAsync(dst, device_ptr(src.address() + src_offset), bytes, stream_.get()),
             "hipMemcpyDtoHAsync");
    synchronize();
  }

  void fill(Buffer& dst, uint8_t byte) override {
    if (dst.size() == 0) return;
    bind();
    h_.check(h_.hipMemsetD8Async(device_ptr(dst.address()), byte, dst.size(), stream_.get()), "hipMemsetD8Async");
  }

  void copy(Buffer& dst, const Buffer& src, size_t bytes) override {
    require_range(dst, 0, bytes, "copy (destination)");
    require_range(src, 0, bytes, "copy (source)");
    if (bytes == 0) return;
    bind();
    h_.check(h_.hipMemcpyDtoDAsync(device_ptr(dst.address()), device_ptr(src.address()), bytes, stream_.get()),
             "hipMemcpyDtoDAsync");
  }

  std::unique_ptr<Module> load(std::span<const char> code) override {
    if (code.empty()) throw Error("hipModuleLoadData: empty code object");
    bind();
    hipModule_t module = nullptr;
    h_.check(h_.hipModuleLoadData(&module, code.data()), "hipModuleLoadData");
    return std::make_unique<HipModule>(h_, info_.ordinal, module);
  }

  // AMD GPUs have no opt-in step: a launch may use all of the block's LDS directly. Only the
  // limit itself is checked.
  void set_shared_limit(void* fn, size_t bytes) override {
    if (static_cast<int64_t>(bytes) > info_.shared_per_block_optin)
      throw Error(fmt::format("a kernel asks for {} bytes of shared memory; {} allows at most {}", bytes, info_.name,
                              info_.shared_per_block_optin));
  }

  void launch(void* fn, Dim3 grid, Dim3 block, size_t shared_bytes, void** args) override {
    bind();
    hipError_t e = h_.hipModuleLaunchKernel(static_cast<hipFunction_t>(fn), grid.x, grid.y, grid.z, block.x, block.y,
                                            block.z, static_cast<unsigned>(shared_bytes), stream_.get(), args, nullptr);
    if (e != hipSuccess)  // the message is formatted only on failure: launches are the hot path
      h_.check(e, fmt::format("hipModuleLaunchKernel(grid {}x{}x{}, block {}x{}x{}, {} shared bytes)", grid.x, grid.y,
                              grid.z, block.x, block.y, block.z, shared_bytes));
  }

  std::unique_ptr<Event> event() override { return std::make_unique<HipEvent>(h_, info_.ordinal); }

  void record(Event& e) override {
    bind();
    h_.check(h_.hipEventRecord(downcast<HipEvent>(e, "event").get(), stream_.get()), "hipEventRecord");
  }

  float elapsed_ms(const Event& start, const Event& stop) override {
    const HipEvent& from = downcast<const HipEvent>(start, "start event");
    const HipEvent& to = downcast<const HipEvent>(stop, "stop event");
    bind();
    h_.check(h_.hipEventSynchronize(to.get()), "hipEventSynchronize");
    float ms = 0;
    h_.check(h_.hipEventElapsedTime(&ms, from.get(), to.get()), "hipEventElapsedTime");
    return ms;
  }

  void synchronize() override {
    bind();
    h_.check(h_.hipStreamSynchronize(stream_.get()), "hipStreamSynchronize");
  }

  void begin_capture() override {
    bind();
    // Thread-local mode: only this thread's unsafe calls break the capture.
    h_.check(h_.hipStreamBeginCapture(stream_.get(), hipStreamCaptureModeThreadLocal), "hipStreamBeginCapture");
  }

  std::unique_ptr<Graph> end_capture() override {
    bind();
    hipGraph_t graph = nullptr;
    h_.check(h_.hipStreamEndCapture(stream_.get(), &graph), "hipStreamEndCapture");
    auto captured = std::make_unique<HipGraph>(h_, info_.ordinal, graph);
    captured->instantiate();
    return captured;
  }

  void replay(Graph& g) override {
    bind();
    h_.check(h_.hipGraphLaunch(downcast<HipGraph>(g, "graph").exec(), stream_.get()), "hipGraphLaunch");
  }

 private:
  static hipDeviceptr_t device_ptr(uint64_t address) { return reinterpret_cast<hipDeviceptr_t>(address); }
  void bind() { select(h_, info_.ordinal); }

  const HipRuntime& h_;
  DeviceInfo info_;
  Stream stream_;
};

}  // namespace

std::unique_ptr<Context> open_hip_context(const HipRuntime& runtime, const DeviceInfo& info) {
  return std::make_unique<HipContext>(runtime, info);
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_HIP
