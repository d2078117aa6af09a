// The Vulkan runtime layer on lavapipe: device description, buffers,
// kernels and command lists, with the validation layers on (the ctest
// environment sets KILN_VULKAN_VALIDATION=1) and no validation message
// allowed in any test.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_buffer.h"
#include "backends/vulkan/vulkan_commands.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_instance.h"
#include "backends/vulkan/vulkan_kernel.h"
#include "backends/vulkan/vulkan_loader.h"
#include "shaders/saxpy.h"
#include "shaders/workgroup_ids.h"
#include "tests/vulkan/lavapipe_environment.h"

namespace kiln::vulkan {
namespace {

struct SaxpyParameters {
  float a;
  uint32_t n;
};

template <typename T>
std::span<const std::byte> ValueBytes(const T& value) {
  return std::as_bytes(std::span<const T, 1>(&value, 1));
}

bool EnvFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != 0 && std::strcmp(value, "0") != 0;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// Every test opens the process's device (a failure to open it fails the
// test) and ends with no validation message recorded.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::shared_ptr<Device>> device = Device::Default();
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
    Instance::TakeValidationMessages();  // earlier tests' messages were reported there
  }
  void TearDown() override {
    const std::vector<std::string> messages = Instance::TakeValidationMessages();
    EXPECT_TRUE(messages.empty()) << messages.size() << " validation messages:\n" << Join(messages);
  }

  std::shared_ptr<Buffer> MakeBuffer(uint64_t bytes) {
    StatusOr<std::shared_ptr<Buffer>> buffer = Buffer::Create(device_, bytes);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    return buffer.ok() ? *buffer : nullptr;
  }
  template <typename T>
  std::shared_ptr<Buffer> MakeBuffer(const std::vector<T>& data) {
    std::shared_ptr<Buffer> buffer = MakeBuffer(data.size() * sizeof(T));
    if (buffer != nullptr) {
      Status status = buffer->Upload(data.data(), data.size() * sizeof(T));
      EXPECT_TRUE(status.ok()) << status.ToString();
    }
    return buffer;
  }
  template <typename T>
  std::vector<T> Read(const Buffer& buffer) {
    std::vector<T> data(buffer.size() / sizeof(T));
    Status status = buffer.Download(data.data(), data.size() * sizeof(T));
    EXPECT_TRUE(status.ok()) << status.ToString();
    return data;
  }
  std::shared_ptr<Kernel> Saxpy(uint32_t workgroup_size = 64) {
    KernelSpec spec;
    spec.name = "saxpy";
    spec.spirv.assign(std::begin(kSaxpySpirv), std::end(kSaxpySpirv));
    spec.buffer_count = 2;
    spec.push_constant_bytes = sizeof(SaxpyParameters);
    spec.workgroup_size_x = workgroup_size;
    StatusOr<std::shared_ptr<Kernel>> kernel = Kernel::Create(device_, spec);
    EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
    return kernel.ok() ? *kernel : nullptr;
  }

  std::shared_ptr<Device> device_;
};

using Lavapipe = VulkanTest;

TEST_F(Lavapipe, DescribesTheDevice) {
  if (const std::string why = WhyNotLavapipeEnvironment(); !why.empty()) {
    GTEST_SKIP() << why << "; the device: " << device_->info().ToString();
  }
  StatusOr<const Instance*> instance = Instance::Get();
  ASSERT_TRUE(instance.ok());
  // The ctest environment asks for validation; without it "no messages" would prove nothing.
  EXPECT_TRUE((*instance)->validation_enabled())
      << "KILN_VULKAN_VALIDATION=1 but the validation layer is off";
  const PhysicalDeviceInfo& info = device_->info();
  EXPECT_NE(info.name.find("llvmpipe"), std::string::npos) << info.ToString();
  EXPECT_EQ(info.type, VK_PHYSICAL_DEVICE_TYPE_CPU);
  EXPECT_STREQ(DeviceTypeName(info.type), "cpu");
  EXPECT_FALSE(info.driver_name.empty());
  EXPECT_FALSE(info.driver_info.empty());
  EXPECT_GE(info.api_version, static_cast<uint32_t>(VK_API_VERSION_1_2));
  const DeviceFeatures& features = device_->features();
  EXPECT_GT(features.subgroup_size, 0u);
  EXPECT_TRUE(features.subgroup_basic);
  EXPECT_TRUE(features.subgroup_arithmetic);
  EXPECT_TRUE(features.f64);
  EXPECT_TRUE(features.i64);
  EXPECT_TRUE(features.i16);
  EXPECT_TRUE(features.storage16);
  EXPECT_TRUE(features.timeline_semaphore);
  EXPECT_GE(features.max_workgroup_invocations, 128u);
  EXPECT_GE(features.max_push_constant_bytes, 128u);
  EXPECT_GE(features.max_storage_buffer_range, uint64_t{1} << 27);
  EXPECT_GE(features.max_storage_buffers_per_stage, 4u);
  EXPECT_EQ(features.push_descriptors, !EnvFlag("KILN_VULKAN_NO_PUSH_DESCRIPTORS"));
  // lavapipe's memory is host memory: mapped unless the test forces staging.
  EXPECT_EQ(device_->buffers_host_visible(), !EnvFlag("KILN_VULKAN_FORCE_STAGING"));
  const ShaderFeatures shader = device_->shader_features();
  EXPECT_EQ(shader.subgroup_size, static_cast<int>(features.subgroup_size));
  EXPECT_EQ(shader.f64, features.f64);
  EXPECT_GT(shader.max_workgroup_size, 0);
  std::printf("device: %s, subgroup size %u\n", info.ToString().c_str(), features.subgroup_size);
}

TEST_F(Lavapipe, ChoosesTheDeviceTheEnvironmentNames) {
  if (const std::string why = WhyNotLavapipeEnvironment(); !why.empty()) {
    GTEST_SKIP() << why << "; the device: " << device_->info().ToString();
  }
  // The variable is the process's: an early return must not leave it set
  // for later tests (and the child processes they start).
  struct UnsetDeviceVariable {
    ~UnsetDeviceVariable() { ::unsetenv("KILN_VULKAN_DEVICE"); }
  } unset_at_exit;
  const Instance* instance = *Instance::Get();
  ASSERT_FALSE(instance->devices().empty());
  for (size_t i = 1; i < instance->devices().size(); ++i) {
    EXPECT_NE(std::memcmp(instance->devices()[i].uuid, instance->devices()[0].uuid, VK_UUID_SIZE), 0)
        << "device " << i << " is listed twice";
  }
  ASSERT_EQ(setenv("KILN_VULKAN_DEVICE", "LLVMPIPE", 1), 0);
  StatusOr<const PhysicalDeviceInfo*> by_name = instance->ChooseDevice();
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  EXPECT_NE((*by_name)->name.find("llvmpipe"), std::string::npos);
  ASSERT_EQ(setenv("KILN_VULKAN_DEVICE", "0", 1), 0);
  StatusOr<const PhysicalDeviceInfo*> by_index = instance->ChooseDevice();
  ASSERT_TRUE(by_index.ok()) << by_index.status().ToString();
  EXPECT_EQ(*by_index, &instance->devices()[0]);
  ASSERT_EQ(setenv("KILN_VULKAN_DEVICE", "no-such-gpu", 1), 0);
  StatusOr<const PhysicalDeviceInfo*> missing = instance->ChooseDevice();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("no-such-gpu"), std::string::npos) << missing.status().message();
  EXPECT_NE(missing.status().message().find("llvmpipe"), std::string::npos) << missing.status().message();
  ASSERT_EQ(setenv("KILN_VULKAN_DEVICE", "7", 1), 0);
  EXPECT_EQ(instance->ChooseDevice().status().code(), StatusCode::kInvalidArgument);
  ASSERT_EQ(unsetenv("KILN_VULKAN_DEVICE"), 0);
}

TEST_F(Lavapipe, ValidationMessagesAreRecorded) {
  // Proves the zero-message checks can fail: a buffer of size 0 breaks
  // VUID-VkBufferCreateInfo-size-00912, which the layer reports.
  ASSERT_TRUE((*Instance::Get())->validation_enabled());
  VkBufferCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  create.size = 0;
  create.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer buffer = VK_NULL_HANDLE;
  const VkResult result = device_->api().vkCreateBuffer(device_->handle(), &create, nullptr, &buffer);
  if (result == VK_SUCCESS && buffer != VK_NULL_HANDLE) {
    device_->api().vkDestroyBuffer(device_->handle(), buffer, nullptr);
  }
  const std::vector<std::string> messages = Instance::TakeValidationMessages();
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(Join(messages).find("00912"), std::string::npos) << Join(messages);
}

using Buffers = VulkanTest;

TEST_F(Buffers, RoundTripsManySizes) {
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{3}, uint64_t{4}, uint64_t{1000},
                        (uint64_t{1} << 20) + 7, uint64_t{64} << 20}) {
    SCOPED_TRACE(size);
    std::vector<uint8_t> data(size);
    for (uint64_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>((i * 131 + 7) ^ (i >> 8));
    std::shared_ptr<Buffer> buffer = MakeBuffer(size);
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(buffer->size(), size);
    EXPECT_GE(buffer->allocated_size(), std::max<uint64_t>(size, 4));
    ASSERT_TRUE(buffer->Upload(data.data(), size).ok());
    std::vector<uint8_t> back(size, 0xEE);
    ASSERT_TRUE(buffer->Download(back.data(), size).ok());
    EXPECT_TRUE(back == data);
    if (size >= 8) {
      // A part in the middle of the buffer.
      const uint8_t patch[3] = {0xA1, 0xB2, 0xC3};
      ASSERT_TRUE(buffer->Upload(patch, 3, size / 2 - 1).ok());
      uint8_t window[5] = {};
      ASSERT_TRUE(buffer->Download(window, 5, size / 2 - 2).ok());
      EXPECT_EQ(window[0], data[size / 2 - 2]);
      EXPECT_EQ(window[1], 0xA1);
      EXPECT_EQ(window[2], 0xB2);
      EXPECT_EQ(window[3], 0xC3);
      EXPECT_EQ(window[4], data[size / 2 + 2]);
    }
  }
}

TEST_F(Buffers, RefusesAbsurdSizesAndRanges) {
  const uint64_t limit = device_->features().max_storage_buffer_range;
  for (uint64_t size : {limit + 1, uint64_t{1} << 50, std::numeric_limits<uint64_t>::max()}) {
    StatusOr<std::shared_ptr<Buffer>> buffer = Buffer::Create(device_, size);
    ASSERT_FALSE(buffer.ok()) << size;
    EXPECT_EQ(buffer.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(buffer.status().message().find(std::to_string(size)), std::string::npos)
        << buffer.status().message();
    EXPECT_NE(buffer.status().message().find("maxStorageBufferRange of " + std::to_string(limit)),
              std::string::npos)
        << buffer.status().message();
  }
  // A staging buffer is not bound, but still cannot exceed the memory.
  StatusOr<std::shared_ptr<Buffer>> staging =
      Buffer::Create(device_, uint64_t{1} << 50, BufferKind::kStaging);
  ASSERT_FALSE(staging.ok());
  EXPECT_EQ(staging.status().code(), StatusCode::kResourceExhausted) << staging.status().ToString();

  std::shared_ptr<Buffer> buffer = MakeBuffer(16);
  ASSERT_NE(buffer, nullptr);
  uint8_t bytes[32] = {};
  EXPECT_EQ(buffer->Upload(bytes, 17).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(buffer->Upload(bytes, 8, 9).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(buffer->Download(bytes, 1, std::numeric_limits<uint64_t>::max()).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(buffer->Download(bytes, 0, 16).ok());
}

// A dying buffer leaves its memory in the device's cache; the next buffer of
// its size class takes it without a vkAllocateMemory, and its data is its
// own. Freeing the idle memory makes the next one allocate again.
TEST_F(Buffers, ReuseTheMemoryOfBuffersThatDied) {
  device_->ReleaseIdleMemory();
  const uint64_t before = device_->memory_allocations();
  VkBuffer first_handle = VK_NULL_HANDLE;
  {
    std::shared_ptr<Buffer> first = MakeBuffer(std::vector<float>(250, 1.5f));  // 1000 bytes
    ASSERT_NE(first, nullptr);
    first_handle = first->handle();
  }
  EXPECT_GT(device_->memory_cache().idle_bytes(), 0u);
  const uint64_t after_first = device_->memory_allocations();
  EXPECT_GT(after_first, before);
  std::vector<float> values(252);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.25f;
  std::shared_ptr<Buffer> second = MakeBuffer(values);  // 1008 bytes: the same class
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->handle(), first_handle) << "the idle allocation of the same class is taken";
  EXPECT_EQ(device_->memory_allocations(), after_first) << "no new allocation for a reused buffer";
  EXPECT_EQ(second->size(), values.size() * sizeof(float));
  EXPECT_EQ(Read<float>(*second), values);
  second.reset();
  device_->ReleaseIdleMemory();
  EXPECT_EQ(device_->memory_cache().idle_bytes(), 0u);
  std::shared_ptr<Buffer> third = MakeBuffer(1000);
  ASSERT_NE(third, nullptr);
  EXPECT_GT(device_->memory_allocations(), after_first) << "idle memory was freed: a new allocation";
}

using Kernels = VulkanTest;

TEST_F(Kernels, SaxpyOverOneMillionFloats) {
  const uint32_t n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = static_cast<float>(i % 7) - 3.0f;
  }
  std::shared_ptr<Buffer> xs = MakeBuffer(x), ys = MakeBuffer(y);
  std::shared_ptr<Kernel> saxpy = Saxpy(128);
  ASSERT_TRUE(xs && ys && saxpy);
  StatusOr<std::unique_ptr<CommandList>> commands = CommandList::Create(device_);
  ASSERT_TRUE(commands.ok()) << commands.status().ToString();
  const SaxpyParameters parameters{3.0f, n};
  const std::shared_ptr<Buffer> bindings[] = {xs, ys};
  Status status = (*commands)->Dispatch(saxpy, bindings, ValueBytes(parameters), {(n + 127) / 128, 1, 1});
  ASSERT_TRUE(status.ok()) << status.ToString();
  status = (*commands)->SubmitAndWait();
  ASSERT_TRUE(status.ok()) << status.ToString();
  const std::vector<float> result = Read<float>(*ys);
  ASSERT_EQ(result.size(), n);
  uint32_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) {
    // Small integers: exact in float, with or without a fused multiply-add.
    if (result[i] != 3.0f * x[i] + y[i] && wrong++ < 5) ADD_FAILURE() << "y[" << i << "] = " << result[i];
  }
  EXPECT_EQ(wrong, 0u);
}

TEST_F(Kernels, WorkgroupSizeComesFromTheSpecializationConstant) {
  for (uint32_t size : {1u, 8u, 64u, 256u}) {
    SCOPED_TRACE(size);
    KernelSpec spec;
    spec.name = "workgroup_ids";
    spec.spirv.assign(std::begin(kWorkgroupIdsSpirv), std::end(kWorkgroupIdsSpirv));
    spec.buffer_count = 1;
    spec.workgroup_size_x = size;
    StatusOr<std::shared_ptr<Kernel>> kernel = Kernel::Create(device_, spec);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    const uint32_t groups_x = 3, groups_y = 2;
    const uint32_t invocations = groups_x * size * groups_y;
    std::shared_ptr<Buffer> out = MakeBuffer((1 + invocations) * sizeof(uint32_t));
    ASSERT_NE(out, nullptr);
    StatusOr<std::unique_ptr<CommandList>> commands = CommandList::Create(device_);
    ASSERT_TRUE(commands.ok());
    const std::shared_ptr<Buffer> bindings[] = {out};
    ASSERT_TRUE((*commands)->Dispatch(*kernel, bindings, {}, {groups_x, groups_y, 1}).ok());
    ASSERT_TRUE((*commands)->SubmitAndWait().ok());
    const std::vector<uint32_t> words = Read<uint32_t>(*out);
    EXPECT_EQ(words[0], size);
    for (uint32_t index = 0; index < invocations; ++index) {
      const uint32_t x = index % (groups_x * size), y = index / (groups_x * size);
      ASSERT_EQ(words[1 + index], y * groups_x + x / size) << "invocation " << index;
    }
  }
}

TEST_F(Kernels, RefusesSpecsBeyondTheLimits) {
  KernelSpec spec;
  spec.name = "bad";
  spec.spirv.assign(std::begin(kSaxpySpirv), std::end(kSaxpySpirv));
  spec.buffer_count = 2;
  spec.push_constant_bytes = 8;
  auto refused = [&](const KernelSpec& s, const char* words) {
    StatusOr<std::shared_ptr<Kernel>> kernel = Kernel::Create(device_, s);
    ASSERT_FALSE(kernel.ok()) << words;
    EXPECT_EQ(kernel.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(kernel.status().message().find(words), std::string::npos) << kernel.status().message();
    EXPECT_NE(kernel.status().message().find("\"bad\""), std::string::npos) << kernel.status().message();
  };
  KernelSpec not_spirv = spec;
  not_spirv.spirv = {1, 2, 3, 4, 5, 6};
  refused(not_spirv, "not a SPIR-V module");
  KernelSpec big_push = spec;
  big_push.push_constant_bytes = 132;
  refused(big_push, "132 bytes of push constants");
  KernelSpec odd_push = spec;
  odd_push.push_constant_bytes = 6;
  refused(odd_push, "multiples of 4");
  KernelSpec no_threads = spec;
  no_threads.workgroup_size_x = 0;
  refused(no_threads, "workgroup size 0");
  KernelSpec huge_group = spec;
  huge_group.workgroup_size_x = device_->features().max_workgroup_invocations + 1;
  refused(huge_group, "workgroup size");
  KernelSpec many_buffers = spec;
  many_buffers.buffer_count = device_->features().max_storage_buffers_per_stage + 1;
  refused(many_buffers, "storage buffers exceed");
}

using Commands = VulkanTest;

TEST_F(Commands, DependentStepsInOneRecording) {
  const uint32_t n = 10000;
  const uint64_t bytes = n * sizeof(float);
  std::shared_ptr<Buffer> a = MakeBuffer(bytes), b = MakeBuffer(bytes), c = MakeBuffer(bytes);
  std::shared_ptr<Kernel> saxpy = Saxpy();
  ASSERT_TRUE(a && b && c && saxpy);
  auto bits = [](float value) {
    uint32_t word;
    std::memcpy(&word, &value, 4);
    return word;
  };
  const uint32_t groups = (n + 63) / 64;
  StatusOr<std::unique_ptr<CommandList>> recording = CommandList::Create(device_);
  ASSERT_TRUE(recording.ok());
  CommandList& commands = **recording;
  const SaxpyParameters three{3.0f, n}, two{2.0f, n}, minus_one{-1.0f, n};
  ASSERT_TRUE(commands.Fill(a, 0, bytes, bits(1.0f)).ok());
  ASSERT_TRUE(commands.Fill(b, 0, bytes, bits(2.0f)).ok());
  ASSERT_TRUE(commands.Copy(a, 0, c, 0, bytes).ok());  // c = 1
  const std::shared_ptr<Buffer> ab[] = {a, b}, bc[] = {b, c}, cb[] = {c, b};
  ASSERT_TRUE(commands.Dispatch(saxpy, ab, ValueBytes(three), {groups, 1, 1}).ok());      // b = 3*1 + 2 = 5
  ASSERT_TRUE(commands.Dispatch(saxpy, bc, ValueBytes(two), {groups, 1, 1}).ok());        // c = 2*5 + 1 = 11
  ASSERT_TRUE(commands.Dispatch(saxpy, cb, ValueBytes(minus_one), {groups, 1, 1}).ok());  // b = -11 + 5 = -6
  ASSERT_TRUE(commands.Copy(b, 0, a, 0, bytes / 2).ok());                                 // a[:n/2] = -6
  EXPECT_EQ(commands.steps(), 7u);
  Status status = commands.SubmitAndWait();
  ASSERT_TRUE(status.ok()) << status.ToString();
  const std::vector<float> as = Read<float>(*a), bs = Read<float>(*b), cs = Read<float>(*c);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(as[i], i < n / 2 ? -6.0f : 1.0f) << "a[" << i << "]";
    ASSERT_EQ(bs[i], -6.0f) << "b[" << i << "]";
    ASSERT_EQ(cs[i], 11.0f) << "c[" << i << "]";
  }
  // Recorded once, submitted once.
  EXPECT_EQ(commands.Fill(a, 0, 4, 0).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(commands.Submit().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(commands.Wait().ok());
}

TEST_F(Commands, ConcurrentSubmissionsFromFourThreads) {
  std::shared_ptr<Kernel> saxpy = Saxpy();
  ASSERT_NE(saxpy, nullptr);
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto fail = [&](const std::string& what) {
        if (failures[t].empty()) failures[t] = what;
      };
      for (int round = 0; round < 6; ++round) {
        const uint32_t n = 4096 + 61 * t + round;
        std::vector<float> x(n), y(n);
        for (uint32_t i = 0; i < n; ++i) {
          x[i] = static_cast<float>(i % 100);
          y[i] = static_cast<float>(t * 10 + round);
        }
        StatusOr<std::shared_ptr<Buffer>> xs = Buffer::Create(device_, n * 4),
                                          ys = Buffer::Create(device_, n * 4);
        if (!xs.ok() || !ys.ok()) return fail("buffer creation failed");
        if (!(*xs)->Upload(x.data(), n * 4).ok() || !(*ys)->Upload(y.data(), n * 4).ok())
          return fail("upload");
        StatusOr<std::unique_ptr<CommandList>> commands = CommandList::Create(device_);
        if (!commands.ok()) return fail(commands.status().ToString());
        const SaxpyParameters parameters{static_cast<float>(t + 1), n};
        const std::shared_ptr<Buffer> bindings[] = {*xs, *ys};
        Status status = (*commands)->Dispatch(saxpy, bindings, ValueBytes(parameters), {(n + 63) / 64, 1, 1});
        if (status.ok()) status = (*commands)->SubmitAndWait();
        if (!status.ok()) return fail(status.ToString());
        std::vector<float> result(n);
        if (!(*ys)->Download(result.data(), n * 4).ok()) return fail("download");
        for (uint32_t i = 0; i < n; ++i) {
          if (result[i] != static_cast<float>(t + 1) * x[i] + y[i]) {
            return fail("thread " + std::to_string(t) + " round " + std::to_string(round) + ": y[" +
                        std::to_string(i) + "] = " + std::to_string(result[i]));
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST_F(Commands, RefusesMisuse) {
  std::shared_ptr<Kernel> saxpy = Saxpy();
  std::shared_ptr<Buffer> buffer = MakeBuffer(64), empty = MakeBuffer(0);
  ASSERT_TRUE(saxpy && buffer && empty);
  StatusOr<std::unique_ptr<CommandList>> recording = CommandList::Create(device_);
  ASSERT_TRUE(recording.ok());
  CommandList& commands = **recording;
  const SaxpyParameters parameters{1.0f, 0};
  const std::shared_ptr<Buffer> one[] = {buffer}, two[] = {buffer, empty};
  EXPECT_EQ(commands.Dispatch(saxpy, one, ValueBytes(parameters), {1, 1, 1}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(commands.Dispatch(saxpy, two, {}, {1, 1, 1}).code(), StatusCode::kInvalidArgument);
  const uint32_t too_many = device_->features().max_workgroup_count[0] + 1;
  if (too_many != 0) {
    EXPECT_EQ(commands.Dispatch(saxpy, two, ValueBytes(parameters), {too_many, 1, 1}).code(),
              StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(commands.Fill(buffer, 2, 8, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(commands.Fill(buffer, 0, 68, 0).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(commands.Copy(buffer, 0, empty, 0, 1).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(commands.Copy(buffer, 0, buffer, 8, 16).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(commands.steps(), 0u);
  // A dispatch over no elements, with an empty buffer bound, is fine.
  Status status = commands.Dispatch(saxpy, two, ValueBytes(parameters), {1, 1, 1});
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_TRUE(commands.Dispatch(saxpy, two, ValueBytes(parameters), {0, 1, 1}).ok());
  EXPECT_EQ(commands.steps(), 1u);
  status = commands.SubmitAndWait();
  EXPECT_TRUE(status.ok()) << status.ToString();
}

// A finished command list leaves its pool, command buffer and fence, reset,
// for the next one: recordings after the first create none, and each runs
// its own steps (also after a list that was never submitted).
TEST_F(Commands, FinishedListsLeaveTheirPoolsForTheNext) {
  std::shared_ptr<Buffer> buffer = MakeBuffer(64 * sizeof(uint32_t));
  ASSERT_NE(buffer, nullptr);
  auto fill = [&](uint32_t value) {
    StatusOr<std::unique_ptr<CommandList>> list = CommandList::Create(device_);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    ASSERT_TRUE((*list)->Fill(buffer, 0, buffer->size(), value).ok());
    ASSERT_TRUE((*list)->SubmitAndWait().ok());
  };
  fill(1);
  const uint64_t pools = device_->command_pools_created();
  for (uint32_t value = 2; value < 6; ++value) {
    fill(value);
    EXPECT_EQ(Read<uint32_t>(*buffer), std::vector<uint32_t>(64, value));
  }
  {
    StatusOr<std::unique_ptr<CommandList>> unsubmitted = CommandList::Create(device_);
    ASSERT_TRUE(unsubmitted.ok()) << unsubmitted.status().ToString();
    ASSERT_TRUE((*unsubmitted)->Fill(buffer, 0, buffer->size(), 99).ok());
  }
  fill(7);
  EXPECT_EQ(Read<uint32_t>(*buffer), std::vector<uint32_t>(64, 7u)) << "the abandoned fill never ran";
  EXPECT_EQ(device_->command_pools_created(), pools) << "lists after the first created command pools";
}

TEST(MissingLoader, IsUnavailableWithTheReason) {
  // Only meaningful under the ctest entry vulkan.missing_loader.
  const char* loader = std::getenv("KILN_VULKAN_LOADER");
  ASSERT_NE(loader, nullptr) << "run with KILN_VULKAN_LOADER=/nonexistent/libvulkan.so.1";
  ASSERT_STREQ(loader, "/nonexistent/libvulkan.so.1");
  StatusOr<std::shared_ptr<Device>> device = Device::Default();
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), StatusCode::kUnavailable);
  const std::string& message = device.status().message();
  EXPECT_NE(message.find("no Vulkan loader (/nonexistent/libvulkan.so.1)"), std::string::npos) << message;
  EXPECT_NE(message.find("cpu backend"), std::string::npos) << message;
  EXPECT_EQ(Loader::Get().status().message(), message);
  EXPECT_EQ(Instance::Get().status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kiln::vulkan
