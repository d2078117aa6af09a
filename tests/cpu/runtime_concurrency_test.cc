// The CPU runtime from several threads at once: one executable run by two
// threads, the host memory pool shared by four (labelled "concurrency"; the
// ThreadSanitizer build runs these and the thread pool's tests).
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/host_memory_pool.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

TEST(RuntimeExecutableTest, TwoThreadsExecuteOneExecutable) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
cond {
  s = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[16,16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[16,16] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[16,16] tanh(d)
  ROOT r = (s32[], f32[16,16]) tuple(j, t)
}
ENTRY e {
  m = f32[16,16] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[16,16]) tuple(zero, m)
  w = (s32[], f32[16,16]) while(init), condition=cond, body=body
  ROOT r = f32[16,16] get-tuple-element(w), index=1
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  std::vector<std::vector<Literal>> inputs, expected;
  for (uint64_t seed : {1, 2}) {
    inputs.push_back(testing::RandomArguments(*module, seed));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, inputs.back()));
    expected.push_back(std::move(want));
  }
  std::vector<std::string> failures(2);
  auto work = [&](size_t which) {
    StatusOr<std::unique_ptr<DeviceBuffer>> argument = cpu.BufferFromLiteral(inputs[which][0], nullptr);
    if (!argument.ok()) {
      failures[which] = argument.status().ToString();
      return;
    }
    std::vector<DeviceBuffer*> buffers = {argument->get()};
    for (int round = 0; round < 50; ++round) {
      auto results = executable->Execute(buffers, ExecuteOptions());
      if (!results.ok()) {
        failures[which] = results.status().ToString();
        return;
      }
      StatusOr<Literal> got = (*results)[0]->ToLiteral();
      for (int64_t i = 0; got.ok() && i < got->element_count(); ++i) {
        if (std::fabs(got->data<float>()[i] - expected[which][0].data<float>()[i]) > 1e-4f) {
          failures[which] = "round " + std::to_string(round) + " element " + std::to_string(i) + " differs";
          return;
        }
      }
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST(HostMemoryPoolTest, ConcurrentAllocateAndRelease) {
  auto pool = HostMemoryPool::Create(int64_t{256} << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 200; ++i) {
        PooledBytes block = pool->Allocate((int64_t{1} << 18) * (1 + (i + t) % 5));
        ASSERT_NE(block, nullptr);
        block.get()[0] = std::byte{1};
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_GT(pool->reuse_count(), 0);
}

}  // namespace
}  // namespace kiln::cpu
