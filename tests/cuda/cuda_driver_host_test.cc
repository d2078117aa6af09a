// The host side of the CUDA backend (driver loading, devices, buffers,
// module loading and launches) against the fake driver of
// tests/cuda/fake_driver, on machines without a GPU. The fake cannot run
// PTX, so kernel outputs are never checked here; what is checked is what
// the backend asks of the driver.
//
// The driver is loaded once per process, so each scenario is its own ctest
// (tests/cuda/CMakeLists.txt) with its own environment, selecting one test
// suite below with --gtest_filter:
//   FakeDriver         KILN_CUDA_DRIVER = the fake
//   SmallDeviceMemory  ... and KILN_FAKE_CUDA_MEMORY_BYTES=4096
//   OldDriver          ... and KILN_FAKE_CUDA_DRIVER_VERSION=12000 (PTX ISA 8.0 at most)
//   NoDevice           ... and KILN_FAKE_CUDA_DEVICES=0
//   MissingDriver      KILN_CUDA_DRIVER = a path where there is no library
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/literal.h"
#include "core/stop_condition.h"
#include "tests/cuda/while_tiny_hlo.h"

namespace kiln {
namespace {

// The fake driver's test hooks, from the library the backend loaded.
struct FakeHooks {
  int (*launch_count)() = nullptr;
  size_t (*live_bytes)() = nullptr;
  int (*live_modules)() = nullptr;
  int (*device_copies)(size_t* bytes) = nullptr;
  size_t (*take_peak_bytes)() = nullptr;
  int (*last_launch)(char* entry, size_t entry_size, unsigned* grid, unsigned* block, uint64_t* parameters,
                     size_t capacity) = nullptr;
  void (*write_after_launch)(const char* entry_prefix, int parameter, const void* bytes,
                             size_t size) = nullptr;
};

const char* DriverPath() {
  const char* path = std::getenv("KILN_CUDA_DRIVER");
  return path != nullptr ? path : "";
}

FakeHooks Hooks() {
  FakeHooks hooks;
  // The same path gives the same loaded library, whatever flags the
  // backend opened it with.
  void* library = dlopen(DriverPath(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return hooks;
  hooks.launch_count = reinterpret_cast<int (*)()>(dlsym(library, "kiln_fake_cuda_launch_count"));
  hooks.live_bytes = reinterpret_cast<size_t (*)()>(dlsym(library, "kiln_fake_cuda_live_bytes"));
  hooks.live_modules = reinterpret_cast<int (*)()>(dlsym(library, "kiln_fake_cuda_live_modules"));
  hooks.device_copies = reinterpret_cast<int (*)(size_t*)>(dlsym(library, "kiln_fake_cuda_device_copies"));
  hooks.take_peak_bytes = reinterpret_cast<size_t (*)()>(dlsym(library, "kiln_fake_cuda_take_peak_bytes"));
  hooks.last_launch =
      reinterpret_cast<decltype(hooks.last_launch)>(dlsym(library, "kiln_fake_cuda_last_launch"));
  hooks.write_after_launch = reinterpret_cast<decltype(hooks.write_after_launch)>(
      dlsym(library, "kiln_fake_cuda_write_after_launch"));
  return hooks;
}

std::unique_ptr<Module> Parse(const char* text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

constexpr char kAdd[] = R"(HloModule add
ENTRY e {
  p0 = f32[1000] parameter(0)
  p1 = f32[1000] parameter(1)
  ROOT r = f32[1000] add(p0, p1)
})";

// No computation happens: the results are the parameters, reordered.
constexpr char kSwap[] = R"(HloModule swap
ENTRY e {
  a = f32[3] parameter(0)
  b = s32[2,2] parameter(1)
  ROOT t = (s32[2,2], f32[3]) tuple(b, a)
})";

constexpr char kSecondOfTuple[] = R"(HloModule second_of_tuple
ENTRY e {
  t = (f32[3], pred[3]) parameter(0)
  ROOT x = pred[3] get-tuple-element(t), index=1
})";

Literal Halves(const std::vector<uint16_t>& bits) {
  StatusOr<Literal> literal =
      Literal::FromBytes(Shape(ElementType::kF16, {static_cast<int64_t>(bits.size())}),
                         {reinterpret_cast<const uint8_t*>(bits.data()), bits.size() * sizeof(uint16_t)});
  EXPECT_TRUE(literal.ok()) << literal.status().ToString();
  return literal.ok() ? std::move(literal).value() : Literal();
}

class CudaOnFakeDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(*DriverPath(), 0) << "KILN_CUDA_DRIVER is not set: run this test through ctest";
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
    ASSERT_FALSE(backend_->devices().empty());
    device_ = backend_->devices()[0];
    hooks_ = Hooks();
    ASSERT_NE(hooks_.launch_count, nullptr) << DriverPath() << " is not the fake driver";
    ASSERT_NE(hooks_.live_bytes, nullptr);
    ASSERT_NE(hooks_.live_modules, nullptr);
    ASSERT_NE(hooks_.device_copies, nullptr);
    ASSERT_NE(hooks_.take_peak_bytes, nullptr);
    ASSERT_NE(hooks_.last_launch, nullptr);
    ASSERT_NE(hooks_.write_after_launch, nullptr);
  }
  void TearDown() override {
    if (hooks_.write_after_launch != nullptr) hooks_.write_after_launch("", 0, nullptr, 0);
  }

  // From now on every launch of a loop kernel (whole_loop.h) reports
  // `trips` bodies run and `finished`, as the kernel would.
  void LoopKernelsReport(int64_t trips, bool finished) {
    const int64_t status[2] = {trips, finished ? 1 : 0};
    hooks_.write_after_launch("kiln_loop_", 0, status, sizeof(status));
  }

  // The entry point of the last launch, and its grid, block and first
  // parameters.
  struct LaunchSeen {
    std::string entry;
    unsigned grid[3] = {0, 0, 0};
    unsigned block[3] = {0, 0, 0};
    uint64_t parameters[4] = {0, 0, 0, 0};
  };
  LaunchSeen LastLaunch() {
    LaunchSeen seen;
    char entry[64] = {};
    hooks_.last_launch(entry, sizeof(entry), seen.grid, seen.block, seen.parameters, 4);
    seen.entry = entry;
    return seen;
  }

  std::unique_ptr<DeviceBuffer> Buffer(const Literal& literal) {
    StatusOr<std::unique_ptr<DeviceBuffer>> buffer = backend_->BufferFromLiteral(literal, device_);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    return buffer.ok() ? std::move(buffer).value() : nullptr;
  }

  std::unique_ptr<Executable> Compile(const char* text) {
    std::unique_ptr<Module> module = Parse(text);
    if (module == nullptr) return nullptr;
    StatusOr<std::unique_ptr<Executable>> executable = backend_->Compile(*module, CompileOptions{});
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    return executable.ok() ? std::move(executable).value() : nullptr;
  }

  // Runs `executable` once; empty (with a test failure) when it fails.
  static std::vector<std::unique_ptr<DeviceBuffer>> Run(Executable& executable,
                                                        const std::vector<DeviceBuffer*>& arguments) {
    StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results =
        executable.Execute(arguments, ExecuteOptions{});
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    return results.ok() ? std::move(results).value() : std::vector<std::unique_ptr<DeviceBuffer>>();
  }

  static Literal Download(const DeviceBuffer& buffer) {
    StatusOr<Literal> literal = buffer.ToLiteral();
    EXPECT_TRUE(literal.ok()) << literal.status().ToString();
    return literal.ok() ? std::move(literal).value() : Literal();
  }

  std::unique_ptr<Backend> backend_;
  Device* device_ = nullptr;
  FakeHooks hooks_;
};

using FakeDriver = CudaOnFakeDriver;
using OldDriver = CudaOnFakeDriver;

TEST_F(FakeDriver, DescribesTheFakeDevice) {
  EXPECT_EQ(backend_->name(), "cuda");
  const std::string& description = device_->description();
  EXPECT_NE(description.find("Kiln fake GPU"), std::string::npos) << description;
  EXPECT_NE(description.find("sm_80"), std::string::npos) << description;
}

TEST_F(FakeDriver, BufferRoundTripsAreExact) {
  const std::vector<Literal> literals = {
      Literal::FromVector<float>({1.5f, -0.0f, 3.4e38f, 1e-45f, -7.25f, 1e30f}, {2, 3}),
      Literal::FromVector<int32_t>({INT32_MIN, -1, 0, 1, INT32_MAX}),
      Literal::FromVector<bool>({true, false, false, true, true}),
      Halves({0x3c00, 0x8000, 0x7c00, 0x0001, 0x7bff, 0xfe00}),
      Literal::Scalar<int32_t>(42),
  };
  for (const Literal& literal : literals) {
    std::unique_ptr<DeviceBuffer> buffer = Buffer(literal);
    ASSERT_NE(buffer, nullptr) << literal.ToString();
    EXPECT_EQ(buffer->device(), device_);
    EXPECT_EQ(Download(*buffer), literal) << literal.ToString();
  }
}

// The real driver refuses zero-byte allocations; an empty array must still
// make a buffer.
TEST_F(FakeDriver, EmptyArrayRoundTrips) {
  const Literal empty(Shape(ElementType::kF32, {0, 4}));
  std::unique_ptr<DeviceBuffer> buffer = Buffer(empty);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(Download(*buffer), empty);
}

TEST_F(FakeDriver, ProgramsWithoutKernelsReturnTheirArguments) {
  const int launches = hooks_.launch_count();
  const Literal a = Literal::FromVector<float>({1, -2, 3.5f});
  const Literal b = Literal::FromVector<int32_t>({7, 8, 9, 10}, {2, 2});
  std::unique_ptr<DeviceBuffer> a_buffer = Buffer(a);
  std::unique_ptr<DeviceBuffer> b_buffer = Buffer(b);
  std::unique_ptr<Executable> swap = Compile(kSwap);
  ASSERT_TRUE(a_buffer && b_buffer && swap);
  std::vector<std::unique_ptr<DeviceBuffer>> swapped = Run(*swap, {a_buffer.get(), b_buffer.get()});
  ASSERT_EQ(swapped.size(), 2u);
  EXPECT_EQ(Download(*swapped[0]), b);
  EXPECT_EQ(Download(*swapped[1]), a);

  // A tuple parameter arrives as its leaves.
  const Literal flags = Literal::FromVector<bool>({false, true, true});
  std::unique_ptr<DeviceBuffer> flags_buffer = Buffer(flags);
  std::unique_ptr<Executable> second = Compile(kSecondOfTuple);
  ASSERT_TRUE(flags_buffer && second);
  std::vector<std::unique_ptr<DeviceBuffer>> picked = Run(*second, {a_buffer.get(), flags_buffer.get()});
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_EQ(Download(*picked[0]), flags);
  EXPECT_EQ(hooks_.launch_count(), launches) << "a program without kernels launched one";
}

// The shared step runner (core/lowering/step_runner.h) on this backend:
// a branch chosen by a selector read back from the device, and arrays
// travelling from the infeed queue through the device to the outfeed queue.
// The branches and feeds only move data, which the fake driver really does.
TEST_F(FakeDriver, BranchesAndFeedsMoveDataWithoutKernels) {
  const int launches = hooks_.launch_count();
  std::unique_ptr<Executable> pick = Compile(R"(HloModule m
first {
  ROOT p = f32[3] parameter(0)
}
second {
  ROOT p = f32[3] parameter(0)
}
ENTRY e {
  which = s32[] parameter(0)
  a = f32[3] parameter(1)
  b = f32[3] parameter(2)
  ROOT r = f32[3] conditional(which, a, b), branch_computations={first, second}
})");
  ASSERT_NE(pick, nullptr);
  const Literal a = Literal::FromVector<float>({1, 2, 3});
  const Literal b = Literal::FromVector<float>({-4, 5.5f, 6});
  std::unique_ptr<DeviceBuffer> a_buffer = Buffer(a);
  std::unique_ptr<DeviceBuffer> b_buffer = Buffer(b);
  for (const auto& [selector, expected] :
       std::vector<std::pair<int32_t, const Literal*>>{{0, &a}, {1, &b}, {7, &b}, {-1, &b}}) {
    std::unique_ptr<DeviceBuffer> which = Buffer(Literal::Scalar<int32_t>(selector));
    std::vector<std::unique_ptr<DeviceBuffer>> picked =
        Run(*pick, {which.get(), a_buffer.get(), b_buffer.get()});
    ASSERT_EQ(picked.size(), 1u);
    EXPECT_EQ(Download(*picked[0]), *expected) << "selector " << selector;
  }

  std::unique_ptr<Executable> echo = Compile(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  in = (f32[2], token[]) infeed(t)
  d = f32[2] get-tuple-element(in), index=0
  ROOT o = token[] outfeed(d, t)
})");
  ASSERT_NE(echo, nullptr);
  const Literal fed = Literal::FromVector<float>({2.5f, -1});
  ASSERT_TRUE(backend_->TransferToInfeed(fed).ok());
  Run(*echo, {});
  StatusOr<Literal> out = backend_->TransferFromOutfeed();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, fed);
  // An empty queue is an error that says what to call.
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> starved = echo->Execute({}, ExecuteOptions{});
  ASSERT_FALSE(starved.ok());
  EXPECT_NE(starved.status().message().find("kiln_client_transfer_to_infeed"), std::string::npos)
      << starved.status().ToString();
  EXPECT_EQ(hooks_.launch_count(), launches) << "moving data launched a kernel";
}

// The tape of reverse-mode loops (core/lowering/step_tapes.h): three
// pushes of 16 bytes onto one tape, then three pops. Each push or pop is
// one launch (its counter's kernel, which the fake does not run) and
// device-to-device copies, which the fake really does: one per array, plus
// one per growth of the tape (16, 32, then 64 bytes: the second push copies
// the 16 bytes held, the third the 32). The pops give the arrays back in
// reverse order.
TEST_F(FakeDriver, TapePushesAndPopsAreDeviceCopies) {
  std::unique_ptr<Executable> tape = Compile(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] parameter(2)
  n = s32[] parameter(3)
  n1 = s32[] custom-call(n, a), custom_call_target="kiln_tape_push", backend_config="0"
  n2 = s32[] custom-call(n1, b), custom_call_target="kiln_tape_push", backend_config="0"
  n3 = s32[] custom-call(n2, c), custom_call_target="kiln_tape_push", backend_config="0"
  p3 = (s32[], f32[4]) custom-call(n3), custom_call_target="kiln_tape_pop", backend_config="0"
  m2 = s32[] get-tuple-element(p3), index=0
  p2 = (s32[], f32[4]) custom-call(m2), custom_call_target="kiln_tape_pop", backend_config="0"
  m1 = s32[] get-tuple-element(p2), index=0
  p1 = (s32[], f32[4]) custom-call(m1), custom_call_target="kiln_tape_pop", backend_config="0"
  first = f32[4] get-tuple-element(p3), index=1
  second = f32[4] get-tuple-element(p2), index=1
  third = f32[4] get-tuple-element(p1), index=1
  ROOT r = (f32[4], f32[4], f32[4]) tuple(first, second, third)
})");
  ASSERT_NE(tape, nullptr);
  const Literal a = Literal::FromVector<float>({1, 2, 3, 4});
  const Literal b = Literal::FromVector<float>({-5, 6.5f, 7, 8});
  const Literal c = Literal::FromVector<float>({0.25f, 0, -1, 9});
  std::unique_ptr<DeviceBuffer> a_buffer = Buffer(a);
  std::unique_ptr<DeviceBuffer> b_buffer = Buffer(b);
  std::unique_ptr<DeviceBuffer> c_buffer = Buffer(c);
  std::unique_ptr<DeviceBuffer> n_buffer = Buffer(Literal::Scalar<int32_t>(0));
  ASSERT_TRUE(a_buffer && b_buffer && c_buffer && n_buffer);
  const int launches = hooks_.launch_count();
  size_t bytes_before = 0;
  const int copies_before = hooks_.device_copies(&bytes_before);
  std::vector<std::unique_ptr<DeviceBuffer>> popped =
      Run(*tape, {a_buffer.get(), b_buffer.get(), c_buffer.get(), n_buffer.get()});
  size_t bytes_after = 0;
  const int copies_after = hooks_.device_copies(&bytes_after);
  EXPECT_EQ(hooks_.launch_count(), launches + 6) << "one counter kernel per push and pop";
  EXPECT_EQ(copies_after - copies_before, 3 + 2 + 3) << "pushes, growths, pops";
  EXPECT_EQ(bytes_after - bytes_before, size_t{48 + 16 + 32 + 48});
  ASSERT_EQ(popped.size(), 3u);
  EXPECT_EQ(Download(*popped[0]), c);
  EXPECT_EQ(Download(*popped[1]), b);
  EXPECT_EQ(Download(*popped[2]), a);
}

TEST_F(FakeDriver, AddLaunchesOneKernel) {
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  std::unique_ptr<DeviceBuffer> x = Buffer(Literal::FromVector<float>(values));
  std::unique_ptr<DeviceBuffer> y = Buffer(Literal::FromVector<float>(values));
  std::unique_ptr<Executable> add = Compile(kAdd);
  ASSERT_TRUE(x && y && add);
  const int launches = hooks_.launch_count();
  std::vector<std::unique_ptr<DeviceBuffer>> sum = Run(*add, {x.get(), y.get()});
  EXPECT_EQ(hooks_.launch_count(), launches + 1);
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum[0]->shape(), Shape(ElementType::kF32, {1000}));
  // The fake ran nothing, so only the result's shape is known.
  EXPECT_EQ(Download(*sum[0]).shape(), Shape(ElementType::kF32, {1000}));
}

// Six dots in a chain: five temporaries of 16 KiB, never more than two
// live at once, so the execution's scratch block holds two (the shared
// buffer assignment, core/compiler/buffer_assignment.h); with a range per
// temporary it held five. The device memory allocated at the peak is the
// result and that block.
TEST_F(FakeDriver, AChainOfKernelsReusesTheBytesOfDeadTemporaries) {
  std::unique_ptr<DeviceBuffer> x =
      Buffer(Literal::FromVector<float>(std::vector<float>(64 * 64, 0.5f), {64, 64}));
  std::unique_ptr<DeviceBuffer> w =
      Buffer(Literal::FromVector<float>(std::vector<float>(64 * 64, 0.25f), {64, 64}));
  std::unique_ptr<Executable> chain = Compile(R"(HloModule dot_chain
ENTRY e {
  x = f32[64,64] parameter(0)
  w = f32[64,64] parameter(1)
  d1 = f32[64,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[64,64] dot(d1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[64,64] dot(d2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d4 = f32[64,64] dot(d3, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d5 = f32[64,64] dot(d4, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d6 = f32[64,64] dot(d5, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(x && w && chain);
  const size_t before = hooks_.live_bytes();
  hooks_.take_peak_bytes();
  const int launches = hooks_.launch_count();
  std::vector<std::unique_ptr<DeviceBuffer>> result = Run(*chain, {x.get(), w.get()});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(hooks_.launch_count(), launches + 6);
  constexpr size_t kArray = 64 * 64 * sizeof(float);
  EXPECT_EQ(hooks_.take_peak_bytes() - before, kArray + 2 * kArray) << "the result and two temporaries";
}

// rng-bit-generator is one kernel (rng_bit_generator_emitter.h): a thread
// per bits element or state word, whichever are more, given the state, the
// new state and the bits. The fake cannot run it; the bits are checked
// against the interpreter on the kernel's IR compiled for the host
// (cuda.rng_bit_generator_ir).
TEST_F(FakeDriver, RngBitGeneratorLaunchesOneThreadPerElement) {
  constexpr char kGenerator[] = R"(HloModule rbg
ENTRY e {
  s = u64[3] parameter(0)
  ROOT r = (u64[3], u32[2,5]) rng-bit-generator(s), algorithm=rng_philox
})";
  std::unique_ptr<Module> module = Parse(kGenerator);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(backend_->UnsupportedOps(*module).empty());
  std::unique_ptr<DeviceBuffer> state = Buffer(Literal::FromVector<uint64_t>({1, 2, 3}));
  std::unique_ptr<Executable> generator = Compile(kGenerator);
  ASSERT_TRUE(state && generator);
  const int launches = hooks_.launch_count();
  std::vector<std::unique_ptr<DeviceBuffer>> results = Run(*generator, {state.get()});
  EXPECT_EQ(hooks_.launch_count(), launches + 1);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]->shape(), Shape(ElementType::kU64, {3}));
  EXPECT_EQ(results[1]->shape(), Shape(ElementType::kU32, {2, 5}));
  auto last_launch = reinterpret_cast<int (*)(char*, size_t, unsigned*, unsigned*, uint64_t*, size_t)>(
      dlsym(dlopen(DriverPath(), RTLD_NOW | RTLD_LOCAL), "kiln_fake_cuda_last_launch"));
  ASSERT_NE(last_launch, nullptr);
  char entry[256];
  unsigned grid[3] = {0, 0, 0};
  unsigned block[3] = {0, 0, 0};
  uint64_t parameters[8] = {};
  // state, new state, bits, then the number of threads.
  ASSERT_EQ(last_launch(entry, sizeof entry, grid, block, parameters, 8), 4);
  EXPECT_EQ(parameters[3], 10u);
  EXPECT_GE(uint64_t{grid[0]} * block[0], 10u);
  EXPECT_NE(parameters[0], parameters[1]);
  EXPECT_NE(parameters[1], parameters[2]);
}

// An op no PTX emitter has and no expansion rewrites (LAPACK geev: JAX has
// no GPU version either) is named by the capability query, and compiling it
// is UNIMPLEMENTED naming it, before anything is launched; fft, which has an
// expansion into ordinary HLO (core/passes/expansions/), compiles.
TEST_F(FakeDriver, GeneralEigenIsRefusedByNameAndFftIsExpanded) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  a = f32[4,4]{1,0} parameter(0)
  eig = (f32[4]{0}, f32[4]{0}, c64[4,4]{0,1}, c64[4,4]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_sgeev_ffi", operand_layout_constraints={f32[4,4]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={compute_left = 78 : ui8, compute_right = 86 : ui8}
  ROOT w = f32[4]{0} get-tuple-element(eig), index=0
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(backend_->UnsupportedOps(*module), std::vector<std::string>{"custom-call"});
  StatusOr<std::unique_ptr<Executable>> executable = backend_->Compile(*module, CompileOptions{});
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(executable.status().message().find("custom-call"), std::string::npos)
      << executable.status().ToString();
  std::unique_ptr<Module> fft = Parse(R"(HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  r = c64[4,5] fft(x), fft_type=RFFT, fft_length={8}
  ROOT n = c64[4,5] negate(r)
})");
  ASSERT_NE(fft, nullptr);
  EXPECT_TRUE(backend_->UnsupportedOps(*fft).empty());
  StatusOr<std::unique_ptr<Executable>> expanded = backend_->Compile(*fft, CompileOptions{});
  EXPECT_TRUE(expanded.ok()) << expanded.status().ToString();
  std::unique_ptr<Module> add = Parse(kAdd);
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(backend_->UnsupportedOps(*add).empty());
}

// Sets an environment variable while it lives (the backend reads
// KILN_CUDA_WHOLE_LOOPS when it compiles).
class EnvironmentSetting {
 public:
  EnvironmentSetting(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~EnvironmentSetting() { unsetenv(name_); }
  EnvironmentSetting(const EnvironmentSetting&) = delete;
  EnvironmentSetting& operator=(const EnvironmentSetting&) = delete;

 private:
  const char* name_;
};

// Deadlines and cancellation on this backend (issue 13): a loop whose
// condition is a flag carried in its state, set on entry and never cleared,
// so it runs until stopped with kernels the fake does not run. The flag
// moves by device copies, which the fake does, so the loop really is endless
// here. A deadline and a cancel from another thread each stop it, name the
// loop, and leave the argument and the executable usable.
constexpr char kFlagLoop[] = R"(HloModule flag_loop
cond {
  s = (pred[], f32[8]) parameter(0)
  ROOT go = pred[] get-tuple-element(s), index=0
}
body {
  s = (pred[], f32[8]) parameter(0)
  go = pred[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  y = f32[8] negate(x)
  ROOT t = (pred[], f32[8]) tuple(go, y)
}
ENTRY e {
  go = pred[] parameter(0)
  x = f32[8] parameter(1)
  init = (pred[], f32[8]) tuple(go, x)
  loop = (pred[], f32[8]) while(init), condition=cond, body=body
  ROOT out = f32[8] get-tuple-element(loop), index=1
})";

// The same loop over 5000 elements, past what a loop kernel takes
// (kWholeLoopMaxElements): it runs from the host, a launch per trip.
std::string LargeFlagLoop() {
  std::string text = kFlagLoop;
  for (size_t at = text.find("f32[8]"); at != std::string::npos; at = text.find("f32[8]", at))
    text.replace(at, 6, "f32[5000]");
  return text;
}

constexpr const char* kWhileTiny = cuda_test::kWhileTinyHlo;

// The loop's iterations named in a stop's message ("... in while 'loop'
// after N iterations"); -1 when the message has no such count.
int64_t IterationsInMessage(const std::string& message) {
  const std::string marker = "in while 'loop' after ";
  const size_t at = message.find(marker);
  if (at == std::string::npos) return -1;
  return std::strtoll(message.c_str() + at + marker.size(), nullptr, 10);
}

// Runs `loop` (kFlagLoop or LargeFlagLoop()) with its flag
// set: a deadline and a cancel each stop it, and the arguments stay
// intact. The iterations the deadline's message names, or -1. `launches`
// is the fake driver's launch count: the cancel comes once the loop has
// launched something, so it stops the loop running (a fixed pause before
// it could end the execution before the loop began on a busy machine).
int64_t ExpectDeadlineAndCancelStop(Executable& loop, DeviceBuffer& forever, DeviceBuffer& x,
                                    const Literal& values, const std::function<int()>& launches) {
  const std::vector<DeviceBuffer*> arguments = {&forever, &x};
  ExecuteOptions timed;
  timed.stop = StopCondition(nullptr, StopCondition::Clock::now() + std::chrono::milliseconds(50));
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> deadline = loop.Execute(arguments, timed);
  EXPECT_FALSE(deadline.ok());
  if (deadline.ok()) return -1;
  EXPECT_EQ(deadline.status().code(), StatusCode::kDeadlineExceeded) << deadline.status().ToString();
  const int64_t iterations = IterationsInMessage(deadline.status().message());
  EXPECT_GE(iterations, 0) << deadline.status().message();

  auto flag = std::make_shared<CancellationFlag>();
  ExecuteOptions cancellable;
  cancellable.stop = StopCondition(flag, StopCondition::Clock::time_point::max());
  Status cancelled;
  const int before = launches();
  std::thread runner([&] { cancelled = loop.Execute(arguments, cancellable).status(); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (launches() == before && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  flag->Cancel();
  runner.join();
  EXPECT_EQ(cancelled.code(), StatusCode::kCancelled) << cancelled.ToString();
  EXPECT_NE(cancelled.message().find("in while 'loop' after"), std::string::npos) << cancelled.message();

  StatusOr<Literal> flag_after = forever.ToLiteral();
  StatusOr<Literal> x_after = x.ToLiteral();
  EXPECT_TRUE(flag_after.ok() && x_after.ok());
  if (flag_after.ok() && x_after.ok()) {
    EXPECT_EQ(*flag_after, Literal::Scalar<bool>(true));
    EXPECT_EQ(*x_after, values);
  }
  return iterations;
}

// The loop run step by step from the host (KILN_CUDA_WHOLE_LOOPS=0): each
// trip launches the body's kernel.
TEST_F(FakeDriver, DeadlineAndCancelStopAnEndlessLoop) {
  std::unique_ptr<Executable> loop;
  {
    EnvironmentSetting step_by_step("KILN_CUDA_WHOLE_LOOPS", "0");
    loop = Compile(kFlagLoop);
  }
  ASSERT_NE(loop, nullptr);
  const Literal values = Literal::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8});
  std::unique_ptr<DeviceBuffer> forever = Buffer(Literal::Scalar<bool>(true));
  std::unique_ptr<DeviceBuffer> x = Buffer(values);
  ASSERT_TRUE(forever && x);
  const int launches = hooks_.launch_count();
  ExpectDeadlineAndCancelStop(*loop, *forever, *x, values, [this] { return hooks_.launch_count(); });
  EXPECT_GT(hooks_.launch_count(), launches);
  EXPECT_EQ(LastLaunch().entry.rfind("kiln_kernel_", 0), 0u) << LastLaunch().entry;

  // A run with the flag clear ends at once (no iteration, so no kernel the
  // fake would skip: the result is x).
  std::unique_ptr<DeviceBuffer> stop = Buffer(Literal::Scalar<bool>(false));
  ASSERT_NE(stop, nullptr);
  std::vector<std::unique_ptr<DeviceBuffer>> finished = Run(*loop, {stop.get(), x.get()});
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(Download(*finished[0]), values);
}

// The same loop run whole (whole_loop.h), its kernel reporting the whole
// trip budget spent and the loop not finished, every launch: the host
// relaunches until the deadline or the cancel, which name the trips run
// (whole launches of kWholeLoopTripsPerLaunch = 4096).
TEST_F(FakeDriver, DeadlineAndCancelStopAnEndlessWholeLoop) {
  std::unique_ptr<Executable> loop = Compile(kFlagLoop);
  ASSERT_NE(loop, nullptr);
  const Literal values = Literal::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8});
  std::unique_ptr<DeviceBuffer> forever = Buffer(Literal::Scalar<bool>(true));
  std::unique_ptr<DeviceBuffer> x = Buffer(values);
  ASSERT_TRUE(forever && x);
  LoopKernelsReport(4096, /*finished=*/false);
  const int launches = hooks_.launch_count();
  const int64_t iterations =
      ExpectDeadlineAndCancelStop(*loop, *forever, *x, values, [this] { return hooks_.launch_count(); });
  EXPECT_EQ(iterations % 4096, 0) << iterations;
  EXPECT_GT(hooks_.launch_count(), launches);
  const LaunchSeen seen = LastLaunch();
  EXPECT_EQ(seen.entry, "kiln_loop_0");
  EXPECT_EQ(seen.parameters[1], 4096u) << "the trip budget of one launch";

  // The kernel finding the flag clear at once: one launch, zero trips, and
  // the state as it came in.
  LoopKernelsReport(0, /*finished=*/true);
  std::unique_ptr<DeviceBuffer> stop = Buffer(Literal::Scalar<bool>(false));
  ASSERT_NE(stop, nullptr);
  const int before = hooks_.launch_count();
  std::vector<std::unique_ptr<DeviceBuffer>> finished = Run(*loop, {stop.get(), x.get()});
  EXPECT_EQ(hooks_.launch_count(), before + 1);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(Download(*finished[0]), values);

  // A report the host cannot believe (more trips than the budget) and no
  // report at all (the status as the host reset it) are errors, not loops.
  LoopKernelsReport(5000, /*finished=*/true);
  const std::vector<DeviceBuffer*> stopped = {stop.get(), x.get()};
  Status unbelievable = loop->Execute(stopped, ExecuteOptions{}).status();
  EXPECT_EQ(unbelievable.code(), StatusCode::kInternal) << unbelievable.ToString();
  EXPECT_NE(unbelievable.message().find("kiln_loop_0"), std::string::npos) << unbelievable.message();
  hooks_.write_after_launch("", 0, nullptr, 0);
  Status silent = loop->Execute(stopped, ExecuteOptions{}).status();
  EXPECT_EQ(silent.code(), StatusCode::kInternal) << silent.ToString();
  EXPECT_NE(silent.message().find("wrote nothing"), std::string::npos) << silent.message();
}

// while_tiny's 1000 trips are one launch of one block, the loop kernel,
// whose report ends the loop; the result is the state the loop was given
// (the fake runs no kernel).
TEST_F(FakeDriver, WhileTinyIsOneLaunchOfItsLoopKernel) {
  std::unique_ptr<Executable> loop = Compile(kWhileTiny);
  ASSERT_NE(loop, nullptr);
  const Literal c = Literal::FromVector<float>({1, 2, 3, 4});
  std::unique_ptr<DeviceBuffer> input = Buffer(c);
  ASSERT_NE(input, nullptr);
  LoopKernelsReport(1000, /*finished=*/true);
  const int launches = hooks_.launch_count();
  std::vector<std::unique_ptr<DeviceBuffer>> results = Run(*loop, {input.get()});
  EXPECT_EQ(hooks_.launch_count(), launches + 1);
  const LaunchSeen seen = LastLaunch();
  EXPECT_EQ(seen.entry, "kiln_loop_0");
  EXPECT_EQ(std::vector<unsigned>(seen.grid, seen.grid + 3), std::vector<unsigned>({1, 1, 1}));
  EXPECT_EQ(std::vector<unsigned>(seen.block, seen.block + 3), std::vector<unsigned>({256, 1, 1}));
  EXPECT_EQ(seen.parameters[1], 4096u);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(Download(*results[0]), c);

  // Turned off, the same program launches the condition's kernel first.
  std::unique_ptr<Executable> step_by_step;
  {
    EnvironmentSetting off("KILN_CUDA_WHOLE_LOOPS", "off");
    step_by_step = Compile(kWhileTiny);
  }
  ASSERT_NE(step_by_step, nullptr);
  ExecuteOptions brief;
  brief.stop = StopCondition(nullptr, StopCondition::Clock::now() + std::chrono::milliseconds(20));
  const int before = hooks_.launch_count();
  const std::vector<DeviceBuffer*> arguments = {input.get()};
  (void)step_by_step->Execute(arguments, brief);  // the fake's predicate is whatever the scratch held
  EXPECT_GT(hooks_.launch_count(), before);
  EXPECT_EQ(LastLaunch().entry.rfind("kiln_kernel_", 0), 0u) << LastLaunch().entry;
}

// A setting of KILN_CUDA_WHOLE_LOOPS that is neither on nor off is refused
// by name when a program is compiled.
TEST_F(FakeDriver, WholeLoopSettingIsChecked) {
  EnvironmentSetting bad("KILN_CUDA_WHOLE_LOOPS", "sometimes");
  std::unique_ptr<Module> module = Parse(kFlagLoop);
  ASSERT_NE(module, nullptr);
  const Status status = backend_->Compile(*module, CompileOptions{}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("KILN_CUDA_WHOLE_LOOPS='sometimes'"), std::string::npos)
      << status.message();
}

// A loop over arrays larger than a loop kernel takes runs from the host as
// before: every trip launches the body's kernel, and no loop kernel runs
// (none is reported here, so one would fail the run as INTERNAL).
TEST_F(FakeDriver, LoopsPastTheLimitsRunFromTheHost) {
  const std::string large = LargeFlagLoop();
  std::unique_ptr<Executable> loop = Compile(large.c_str());
  ASSERT_NE(loop, nullptr);
  const Literal values = Literal::FromVector<float>(std::vector<float>(5000, 1.5f));
  std::unique_ptr<DeviceBuffer> forever = Buffer(Literal::Scalar<bool>(true));
  std::unique_ptr<DeviceBuffer> x = Buffer(values);
  ASSERT_TRUE(forever && x);
  const int launches = hooks_.launch_count();
  ExpectDeadlineAndCancelStop(*loop, *forever, *x, values, [this] { return hooks_.launch_count(); });
  EXPECT_GT(hooks_.launch_count(), launches + 1);
  EXPECT_EQ(LastLaunch().entry.rfind("kiln_kernel_", 0), 0u) << LastLaunch().entry;
}

// Executables unload their modules when destroyed. Freed blocks stay in
// the backend's allocation cache (device_memory.h) until the last of the
// backend, its executables and its buffers is gone, so the bytes are
// checked once the backend is destroyed too.
TEST_F(FakeDriver, DestroyingEverythingFreesDeviceMemoryAndModules) {
  backend_.reset();
  const size_t bytes = hooks_.live_bytes();
  const int modules = hooks_.live_modules();
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  backend_ = std::move(backend).value();
  device_ = backend_->devices()[0];
  {
    std::unique_ptr<DeviceBuffer> x = Buffer(Literal::FromVector<float>(std::vector<float>(1000, 1.0f)));
    std::unique_ptr<DeviceBuffer> y = Buffer(Literal::FromVector<float>(std::vector<float>(1000, 2.0f)));
    std::unique_ptr<Executable> add = Compile(kAdd);
    ASSERT_TRUE(x && y && add);
    std::vector<std::unique_ptr<DeviceBuffer>> sum = Run(*add, {x.get(), y.get()});
    EXPECT_EQ(sum.size(), 1u);
    EXPECT_GE(hooks_.live_bytes(), bytes + 3 * 1000 * sizeof(float));
    EXPECT_GT(hooks_.live_modules(), modules);
  }
  EXPECT_EQ(hooks_.live_modules(), modules) << "an executable's module outlived it";
  backend_.reset();
  device_ = nullptr;
  EXPECT_EQ(hooks_.live_bytes(), bytes) << "device memory outlived the backend and everything it made";
}

// A driver older than the PTX ISA LLVM would emit: the backend must choose
// an ISA the driver reads (the fake refuses newer ones as the driver does).
// A concatenate of `inputs` f32[1] parameters: one kernel binding every
// input and its result.
std::string WideConcatenate(int inputs) {
  std::string text = "HloModule wide\nENTRY main {\n";
  std::string operands;
  for (int i = 0; i < inputs; ++i) {
    text += "  p" + std::to_string(i) + " = f32[1] parameter(" + std::to_string(i) + ")\n";
    operands += (i == 0 ? "p" : ", p") + std::to_string(i);
  }
  return text + "  ROOT c = f32[" + std::to_string(inputs) + "] concatenate(" + operands +
         "), dimensions={0}\n}\n";
}

// The fake reports driver 12.8 and sm_80: 32764 bytes of kernel
// parameters, so a kernel of 601 buffers (4 KiB holds 509) compiles, as
// PTX ISA 8.1, and launches with every buffer.
TEST_F(FakeDriver, KernelsTakeTheDevicesLargeParameterSpace) {
  const std::string text = WideConcatenate(600);
  std::unique_ptr<Executable> wide = Compile(text.c_str());
  ASSERT_NE(wide, nullptr);
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<DeviceBuffer*> arguments;
  for (int i = 0; i < 600; ++i) {
    buffers.push_back(Buffer(Literal::FromVector<float>({static_cast<float>(i)})));
    ASSERT_NE(buffers.back(), nullptr);
    arguments.push_back(buffers.back().get());
  }
  const int launches = hooks_.launch_count();
  EXPECT_EQ(Run(*wide, arguments).size(), 1u);
  EXPECT_EQ(hooks_.launch_count(), launches + 1) << "one kernel binds all 601 buffers";
  // The first parameters are the first inputs' buffers.
  const LaunchSeen seen = LastLaunch();
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(buffers[i]->cuda_memory().has_value());
    EXPECT_EQ(seen.parameters[i], buffers[i]->cuda_memory()->address) << "parameter " << i;
  }
}

// Driver 12.0 (before 12.1) keeps every kernel within 4 KiB of
// parameters: the same concatenate is refused by name at compile.
TEST_F(OldDriver, KernelsKeepToThePortableParameterSpace) {
  std::unique_ptr<Module> wide = Parse(WideConcatenate(600).c_str());
  ASSERT_NE(wide, nullptr);
  const Status refused = backend_->Compile(*wide, CompileOptions{}).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented) << refused.ToString();
  EXPECT_NE(refused.message().find("concatenate"), std::string::npos) << refused.ToString();
}

TEST_F(OldDriver, CompilesPtxTheDriverReads) {
  std::unique_ptr<DeviceBuffer> x = Buffer(Literal::FromVector<float>(std::vector<float>(1000, 1.0f)));
  std::unique_ptr<Executable> add = Compile(kAdd);
  ASSERT_TRUE(x && add);
  const int launches = hooks_.launch_count();
  EXPECT_EQ(Run(*add, {x.get(), x.get()}).size(), 1u);
  EXPECT_EQ(hooks_.launch_count(), launches + 1);
}

TEST(SmallDeviceMemory, BufferBeyondTheLimitIsResourceExhausted) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ASSERT_FALSE((*backend)->devices().empty());
  Device* device = (*backend)->devices()[0];
  const Literal mebibyte(Shape(ElementType::kF32, {256, 1024}));
  StatusOr<std::unique_ptr<DeviceBuffer>> buffer = (*backend)->BufferFromLiteral(mebibyte, device);
  ASSERT_FALSE(buffer.ok()) << "a 1 MiB buffer fit in 4096 bytes of device memory";
  EXPECT_EQ(buffer.status().code(), StatusCode::kResourceExhausted) << buffer.status().ToString();
  EXPECT_NE(buffer.status().message().find("cuMemAlloc"), std::string::npos) << buffer.status().ToString();
  // The failure leaves the backend usable.
  const Literal small = Literal::FromVector<int32_t>({1, 2, 3});
  StatusOr<std::unique_ptr<DeviceBuffer>> fits = (*backend)->BufferFromLiteral(small, device);
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  StatusOr<Literal> back = (*fits)->ToLiteral();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, small);
}

TEST(NoDevice, BackendIsUnavailable) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "a driver with no device made a backend";
  EXPECT_EQ(backend.status().code(), StatusCode::kUnavailable) << backend.status().ToString();
  EXPECT_NE(backend.status().message().find("driver"), std::string::npos) << backend.status().ToString();
  EXPECT_NE(backend.status().message().find("GPU"), std::string::npos) << backend.status().ToString();
}

TEST(MissingDriver, BackendIsUnavailableNamingTheLibrary) {
  ASSERT_NE(*DriverPath(), 0) << "KILN_CUDA_DRIVER is not set: run this test through ctest";
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "a missing driver made a backend";
  EXPECT_EQ(backend.status().code(), StatusCode::kUnavailable) << backend.status().ToString();
  EXPECT_NE(backend.status().message().find(DriverPath()), std::string::npos) << backend.status().ToString();
  // Asking again gives the same answer, not a crash or a retry that works.
  StatusOr<std::unique_ptr<Backend>> again = CreateBackend("cuda");
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kiln
