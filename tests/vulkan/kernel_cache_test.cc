// The on-disk kernel cache (backends/vulkan/kernel_cache.h, disk_cache.h):
// a second client and a second process compile nothing the first compiled
// (counted in glslang compilations), corrupt, truncated and foreign files
// are misses and never crash, a changed key misses, and the directory stays
// under its size bound; glslang's warm-up runs only for compiles without it.
#include "backends/vulkan/kernel_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/disk_cache.h"
#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/vulkan_backend.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"

namespace kiln::vulkan {
namespace {

namespace fs = std::filesystem;

// A softmax: several kernels (exponential, reductions, division).
constexpr const char* kProbe = R"(HloModule cache_probe
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,32] parameter(0)
  e = f32[4,32] exponential(x)
  zero = f32[] constant(0)
  s = f32[4] reduce(e, zero), dimensions={1}, to_apply=add
  b = f32[4,32] broadcast(s), dimensions={0}
  ROOT d = f32[4,32] divide(e, b)
})";

// A directory of its own under the system's temporary directory, removed
// at the end.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    path_ = fs::temp_directory_path() /
            ("kiln_kernel_cache_test_" + std::to_string(::getpid()) + "_" + std::to_string(next_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int next_ = 0;
  fs::path path_;
};

std::span<const std::byte> TextBytes(const std::string& text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

std::vector<fs::path> CacheFiles(const fs::path& directory) {
  std::vector<fs::path> files;
  if (!fs::exists(directory)) return files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory))
    if (entry.path().extension() == ".kvc") files.push_back(entry.path());
  return files;
}

std::unique_ptr<Backend> Vulkan() {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  EXPECT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                           << vulkan.status().ToString();
  return vulkan.ok() ? std::move(vulkan).value() : nullptr;
}

Literal ProbeInput() {
  std::vector<float> values(4 * 32);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  return Literal::FromVector(values, {4, 32});
}

// Compiles the probe on `backend` with the cache in `directory` (empty:
// the environment's choice) and runs it; returns the glslang compilations
// the compile made, and checks the result against the interpreter.
int64_t CompileAndRunProbe(Backend& backend, const fs::path& directory) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kProbe);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return -1;
  CompileOptions options;
  options.cache_dir = directory.string();
  const uint64_t before = GlslCompilationCount();
  StatusOr<std::unique_ptr<Executable>> executable = backend.Compile(**module, options);
  const auto compilations = static_cast<int64_t>(GlslCompilationCount() - before);
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return -1;
  const Literal input = ProbeInput();
  StatusOr<std::unique_ptr<DeviceBuffer>> argument = backend.BufferFromLiteral(input, backend.devices()[0]);
  EXPECT_TRUE(argument.ok()) << argument.status().ToString();
  if (!argument.ok()) return -1;
  DeviceBuffer* arguments[] = {argument->get()};
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results = (*executable)->Execute(arguments, {});
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  if (!results.ok()) return -1;
  StatusOr<Literal> got = (*results)[0]->ToLiteral();
  StatusOr<Literal> want = testing::Run(**module, std::span<const Literal>(&input, 1));
  EXPECT_TRUE(got.ok() && want.ok());
  if (got.ok() && want.ok()) {
    EXPECT_TRUE(testing::LiteralNear(*want, *got, 1e-5));
  }
  return compilations;
}

// Sets environment variables for a scope and puts back what was there.
class ScopedEnvironment {
 public:
  void Set(const char* name, const char* value) {
    if (saved_.count(name) == 0) {
      const char* old = std::getenv(name);
      saved_[name] = old == nullptr ? std::optional<std::string>() : std::string(old);
    }
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(DiskCache, StoresAndLoadsByKey) {
  TemporaryDirectory directory;
  DiskCache cache(directory.path(), kDefaultDiskCacheBytes);
  EXPECT_FALSE(cache.Load("key one").has_value());
  cache.Store("key one", TextBytes("payload one"));
  cache.Store("key two", TextBytes("payload two, longer"));
  std::optional<std::vector<std::byte>> one = cache.Load("key one");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(one->data()), one->size()), "payload one");
  const DiskCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.stores, 2u);
  EXPECT_EQ(stats.ignored, 0u);
  // No temporary file is left behind by the renames.
  EXPECT_EQ(std::distance(fs::directory_iterator(directory.path()), fs::directory_iterator()), 2);
}

TEST(DiskCache, CorruptTruncatedGarbageAndForeignFilesAreMisses) {
  TemporaryDirectory directory;
  DiskCache cache(directory.path(), kDefaultDiskCacheBytes);
  const std::string payload(200, 'p');
  auto rewrite = [&](const std::string& key, auto&& edit) {
    cache.Store(key, TextBytes(payload));
    std::ifstream in(cache.PathOf(key), std::ios::binary);
    std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    edit(file);
    std::ofstream(cache.PathOf(key), std::ios::binary | std::ios::trunc) << file;
  };
  rewrite("flipped", [](std::string& file) { file[file.size() - 10] ^= 0x40; });
  rewrite("truncated", [](std::string& file) { file.resize(file.size() / 2); });
  rewrite("garbage", [](std::string& file) { file = "not a cache file at all"; });
  rewrite("empty", [](std::string& file) { file.clear(); });
  // Another key's intact file in this key's place (what a hash collision
  // or another device's file would look like).
  cache.Store("other key", TextBytes(payload));
  fs::copy_file(cache.PathOf("other key"), cache.PathOf("foreign"), fs::copy_options::overwrite_existing);
  for (const char* key : {"flipped", "truncated", "garbage", "empty", "foreign"})
    EXPECT_FALSE(cache.Load(key).has_value()) << key;
  EXPECT_EQ(cache.stats().ignored, 5u);
  EXPECT_TRUE(cache.Load("other key").has_value());
  // A store replaces a corrupt file.
  cache.Store("flipped", TextBytes(payload));
  EXPECT_TRUE(cache.Load("flipped").has_value());
}

TEST(DiskCache, StaysUnderItsBoundDroppingTheLeastRecentlyUsed) {
  TemporaryDirectory directory;
  constexpr uint64_t kBound = 8192;
  DiskCache cache(directory.path(), kBound);
  const std::string payload(1000, 'x');
  for (int i = 0; i < 40; ++i) {
    cache.Store("entry " + std::to_string(i), TextBytes(payload));
    uint64_t total = 0;
    for (const fs::path& file : CacheFiles(directory.path())) total += fs::file_size(file);
    EXPECT_LE(total, kBound) << "after " << i + 1 << " stores";
  }
  EXPECT_GT(cache.stats().evicted, 0u);
  EXPECT_TRUE(cache.Load("entry 39").has_value());  // the newest stays
  EXPECT_FALSE(cache.Load("entry 0").has_value());  // the oldest went
  // A payload larger than half the bound is not stored at all.
  cache.Store("huge", TextBytes(std::string(kBound, 'h')));
  EXPECT_FALSE(cache.Load("huge").has_value());
}

TEST(VulkanKernelCache, SecondClientCompilesNothing) {
  TemporaryDirectory directory;
  std::unique_ptr<Backend> first = Vulkan();
  ASSERT_NE(first, nullptr);
  const int64_t cold = CompileAndRunProbe(*first, directory.path());
  EXPECT_GT(cold, 0);
  // SPIR-V per kernel and the driver's pipeline-cache data.
  EXPECT_EQ(static_cast<int64_t>(CacheFiles(directory.path() / "vulkan").size()), cold + 1);
  std::unique_ptr<Backend> second = Vulkan();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(CompileAndRunProbe(*second, directory.path()), 0);
  // Without a disk cache, everything compiles again.
  ScopedEnvironment environment;
  environment.Set("KILN_VULKAN_DISK_CACHE", "0");
  std::unique_ptr<Backend> uncached = Vulkan();
  EXPECT_EQ(CompileAndRunProbe(*uncached, directory.path()), cold);
}

// glslang's warm-up (PrepareShaderCompiler) is asked for by a backend's
// first compile that runs glslang on every kernel (no disk cache), once per
// backend, and never by a backend that only opens its device (`kiln info`)
// or compiles through a disk cache.
TEST(VulkanKernelCache, ShaderCompilerWarmUpOnlyForACompileWithoutDiskCache) {
  const uint64_t before = ShaderCompilerWarmUpCalls();
  {
    std::unique_ptr<Backend> idle = Vulkan();
    ASSERT_NE(idle, nullptr);
  }
  EXPECT_EQ(ShaderCompilerWarmUpCalls(), before) << "creating the backend started the warm-up";
  TemporaryDirectory directory;
  std::unique_ptr<Backend> cached = Vulkan();
  ASSERT_NE(cached, nullptr);
  EXPECT_GE(CompileAndRunProbe(*cached, directory.path()), 0);
  EXPECT_EQ(ShaderCompilerWarmUpCalls(), before) << "a compile through a disk cache started the warm-up";
  ScopedEnvironment environment;
  environment.Set("KILN_VULKAN_DISK_CACHE", "0");
  std::unique_ptr<Backend> uncached = Vulkan();
  ASSERT_NE(uncached, nullptr);
  EXPECT_GT(CompileAndRunProbe(*uncached, directory.path()), 0);
  EXPECT_EQ(ShaderCompilerWarmUpCalls(), before + 1);
  EXPECT_GT(CompileAndRunProbe(*uncached, directory.path()), 0);
  EXPECT_EQ(ShaderCompilerWarmUpCalls(), before + 1) << "the warm-up runs once per backend";
}

TEST(VulkanKernelCache, KernelCacheDirectoryFollowsOptionEnvironmentAndXdg) {
  ScopedEnvironment environment;
  environment.Set("KILN_VULKAN_DISK_CACHE", nullptr);
  environment.Set("KILN_CACHE_DIR", nullptr);
  environment.Set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(KernelCacheDirectory(""), fs::path("/xdg/kiln"));
  EXPECT_EQ(KernelCacheDirectory("/option"), fs::path("/option"));
  environment.Set("KILN_CACHE_DIR", "/env");
  EXPECT_EQ(KernelCacheDirectory(""), fs::path("/env"));
  EXPECT_EQ(KernelCacheDirectory("/option"), fs::path("/option"));
  environment.Set("XDG_CACHE_HOME", nullptr);
  environment.Set("KILN_CACHE_DIR", nullptr);
  environment.Set("HOME", "/home/someone");
  EXPECT_EQ(KernelCacheDirectory(""), fs::path("/home/someone/.cache/kiln"));
  environment.Set("HOME", nullptr);
  EXPECT_EQ(KernelCacheDirectory(""), fs::path());
  environment.Set("KILN_VULKAN_DISK_CACHE", "0");
  EXPECT_EQ(KernelCacheDirectory("/option"), fs::path());
}

// Compiles the probe with the cache the environment chooses (in the suite:
// XDG_CACHE_HOME in the build tree; as SecondProcessCompilesNothing's child:
// its KILN_CACHE_DIR), checks the result and that the cache holds the
// kernels afterwards, and prints how many kernels glslang compiled, which
// SecondProcessCompilesNothing reads from its two children.
TEST(VulkanKernelCache, CompilesWithTheCacheTheEnvironmentChooses) {
  std::unique_ptr<Backend> vulkan = Vulkan();
  ASSERT_NE(vulkan, nullptr);
  const int64_t compilations = CompileAndRunProbe(*vulkan, fs::path());
  ASSERT_GE(compilations, 0);
  const fs::path directory = KernelCacheDirectory("");
  ASSERT_FALSE(directory.empty()) << "no cache directory from the environment";
  EXPECT_FALSE(CacheFiles(directory / "vulkan").empty()) << directory;
  std::printf("glsl compilations: %lld\n", static_cast<long long>(compilations));
}

int64_t ChildCompilations(const fs::path& directory) {
  const std::string command =
      "KILN_CACHE_DIR='" + directory.string() + "' '" + fs::read_symlink("/proc/self/exe").string() +
      "' --gtest_filter=VulkanKernelCache.CompilesWithTheCacheTheEnvironmentChooses 2>&1";
  FILE* child = ::popen(command.c_str(), "r");
  if (child == nullptr) return -2;
  std::string output;
  char line[4096];
  while (std::fgets(line, sizeof(line), child) != nullptr) output += line;
  const int status = ::pclose(child);
  EXPECT_EQ(status, 0) << output;
  const size_t at = output.find("glsl compilations: ");
  EXPECT_NE(at, std::string::npos) << output;
  if (at == std::string::npos) return -1;
  return std::atoll(output.c_str() + at + std::strlen("glsl compilations: "));
}

TEST(VulkanKernelCache, SecondProcessCompilesNothing) {
  TemporaryDirectory directory;
  const int64_t cold = ChildCompilations(directory.path());
  EXPECT_GT(cold, 0);
  EXPECT_EQ(ChildCompilations(directory.path()), 0);
}

TEST(VulkanKernelCache, CorruptFilesAreRecompiledNotTrusted) {
  TemporaryDirectory directory;
  std::unique_ptr<Backend> first = Vulkan();
  ASSERT_NE(first, nullptr);
  const int64_t cold = CompileAndRunProbe(*first, directory.path());
  ASSERT_GT(cold, 0);
  // Every file, the pipeline-cache data included: a byte flipped in the
  // middle, where a driver reading it unchecked could crash.
  for (const fs::path& file : CacheFiles(directory.path() / "vulkan")) {
    std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
    stream.seekg(static_cast<std::streamoff>(fs::file_size(file) / 2));
    const char byte = static_cast<char>(stream.get());
    stream.seekp(static_cast<std::streamoff>(fs::file_size(file) / 2));
    stream.put(static_cast<char>(byte ^ 0x5a));
  }
  std::unique_ptr<Backend> second = Vulkan();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(CompileAndRunProbe(*second, directory.path()), cold);
  // The compile stored good files again.
  std::unique_ptr<Backend> third = Vulkan();
  EXPECT_EQ(CompileAndRunProbe(*third, directory.path()), 0);
}

TEST(VulkanKernelCache, KeysNameDeviceDriverKilnAndFloatControls) {
  StatusOr<std::shared_ptr<Device>> device = Device::Default();
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  TemporaryDirectory directory;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<KernelCache> cache,
                            KernelCache::Open(*device, directory.path(), kDefaultDiskCacheBytes));
  const PhysicalDeviceInfo& info = (*device)->info();
  const std::string key = cache->SpirvKey("void main() {}", FloatControls{{false, true, true}, {}});
  EXPECT_NE(key.find(std::to_string(info.driver_version)), std::string::npos) << key;
  EXPECT_NE(key.find(info.driver_name), std::string::npos) << key;
  EXPECT_NE(key.find("kiln " KILN_VULKAN_TEST_KILN_VERSION), std::string::npos) << key;
  EXPECT_NE(key.find(ShaderCompilerIdentity()), std::string::npos) << key;
  char uuid[3];
  std::snprintf(uuid, sizeof(uuid), "%02x", info.uuid[0]);
  EXPECT_NE(key.find(std::string("device ") + uuid), std::string::npos) << key;
  // SPIR-V stored for one set of float controls is not found for another.
  const std::vector<uint32_t> words = {0x07230203, 0x00010500, 0, 1, 0};
  cache->StoreSpirv("source", FloatControls{{false, true, true}, {}}, words);
  EXPECT_TRUE(cache->LoadSpirv("source", FloatControls{{false, true, true}, {}}).has_value());
  EXPECT_FALSE(cache->LoadSpirv("source", FloatControls{{false, false, true}, {}}).has_value());
  EXPECT_FALSE(
      cache->LoadSpirv("source", FloatControls{{false, true, true}, {false, true, false}}).has_value());
  EXPECT_FALSE(cache->LoadSpirv("source ", FloatControls{{false, true, true}, {}}).has_value());
}

TEST(VulkanKernelCache, ForeignPipelineDataIsNotGivenToTheDriver) {
  StatusOr<std::shared_ptr<Device>> device = Device::Default();
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  TemporaryDirectory directory;
  std::unique_ptr<KernelCache> cache;
  {
    KILN_ASSERT_OK_AND_ASSIGN(cache, KernelCache::Open(*device, directory.path(), kDefaultDiskCacheBytes));
    EXPECT_FALSE(cache->pipeline_data_loaded());
    cache->SavePipelineCache();
  }
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<KernelCache> reopened,
                            KernelCache::Open(*device, directory.path(), kDefaultDiskCacheBytes));
  EXPECT_TRUE(reopened->pipeline_data_loaded());
  // The same file with another device's pipelineCacheUUID, intact
  // otherwise (its checksum is right): refused by the header check.
  std::optional<std::vector<std::byte>> data = reopened->files().Load(reopened->PipelineDataKey());
  ASSERT_TRUE(data.has_value());
  ASSERT_GE(data->size(), 32u);
  (*data)[16] ^= std::byte{0xff};
  reopened->files().Store(reopened->PipelineDataKey(), *data);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<KernelCache> foreign,
                            KernelCache::Open(*device, directory.path(), kDefaultDiskCacheBytes));
  EXPECT_FALSE(foreign->pipeline_data_loaded());
}

}  // namespace
}  // namespace kiln::vulkan
