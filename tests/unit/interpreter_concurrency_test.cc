// The interpreter backend from several threads at once: one executable run
// concurrently (labelled "concurrency"; the ThreadSanitizer build runs it).
#include <thread>
#include <vector>

#include "tests/unit/test_util.h"

namespace kiln {
namespace {

TEST(InterpreterBackendTest, ConcurrentExecutionsOfOneExecutable) {
  Builder builder("concurrent");
  Op x = builder.Parameter(0, Shape(ElementType::kF32, {256}), "x");
  builder.Mul(x, x);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto backend, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(auto executable, backend->Compile(*module, CompileOptions{}));
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> values(256, static_cast<float>(t));
      auto buffer = backend->BufferFromLiteral(Literal::FromVector<float>(values), nullptr);
      if (!buffer.ok()) {
        failures[static_cast<size_t>(t)] = 1;
        return;
      }
      for (int run = 0; run < 20; ++run) {
        DeviceBuffer* arguments[] = {buffer->get()};
        auto results = executable->Execute(arguments, {});
        if (!results.ok()) {
          failures[static_cast<size_t>(t)] = 1;
          return;
        }
        auto literal = (*results)[0]->ToLiteral();
        if (!literal.ok() || literal->data<float>()[255] != static_cast<float>(t * t))
          failures[static_cast<size_t>(t)] = 1;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
}

}  // namespace
}  // namespace kiln
