// What the backends read of a registered op's device kernel before they
// launch it: a PTX entry's parameter list (cuda) and the bindings and push
// constants a SPIR-V entry point uses (vulkan). The device tests run whole
// kernels; these pin the readers' corner cases.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/ptx_entry_parameters.h"
#include "backends/vulkan/spirv_interface.h"

namespace kiln {
namespace {

constexpr char kPtx[] = R"(.version 7.0
.target sm_75
.address_size 64
// .entry commented(.param .u64 not_here)
.visible .entry none()
{ ret; }
.visible .entry bare
{ ret; }
.visible .entry mixed(
	.param .u64 pointer, // a comment, with a comma
	.param .align 8 .b8 blob[24], /* another, also with a comma */
	.param .u32 narrow,
	.param .f64 wide
)
{ ret; }
.visible .entry mixed_too(.param .s16 half)
{ ret; }
)";

TEST(PtxEntryParameters, ReadsEachParametersSizeAndName) {
  StatusOr<std::vector<cuda::PtxEntryParameter>> parameters = cuda::ReadPtxEntryParameters(kPtx, "mixed");
  ASSERT_TRUE(parameters.ok()) << parameters.status().message();
  ASSERT_EQ(parameters->size(), 4u);
  EXPECT_EQ((*parameters)[0].name, "pointer");
  EXPECT_EQ((*parameters)[0].bytes, 8);
  EXPECT_EQ((*parameters)[1].name, "blob");
  EXPECT_EQ((*parameters)[1].bytes, 24);
  EXPECT_EQ((*parameters)[2].name, "narrow");
  EXPECT_EQ((*parameters)[2].bytes, 4);
  EXPECT_EQ((*parameters)[3].bytes, 8);
  // `mixed` is not `mixed_too`, and the other way round.
  parameters = cuda::ReadPtxEntryParameters(kPtx, "mixed_too");
  ASSERT_TRUE(parameters.ok()) << parameters.status().message();
  ASSERT_EQ(parameters->size(), 1u);
  EXPECT_EQ((*parameters)[0].bytes, 2);
}

TEST(PtxEntryParameters, KernelsWithoutParameters) {
  for (const char* entry : {"none", "bare"}) {
    StatusOr<std::vector<cuda::PtxEntryParameter>> parameters = cuda::ReadPtxEntryParameters(kPtx, entry);
    ASSERT_TRUE(parameters.ok()) << entry << ": " << parameters.status().message();
    EXPECT_TRUE(parameters->empty()) << entry;
  }
}

TEST(PtxEntryParameters, RefusesWhatItCannotRead) {
  StatusOr<std::vector<cuda::PtxEntryParameter>> missing = cuda::ReadPtxEntryParameters(kPtx, "commented");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("the PTX has no .entry commented"), std::string::npos);
  StatusOr<std::vector<cuda::PtxEntryParameter>> untyped =
      cuda::ReadPtxEntryParameters(".entry k(.param .q64 x) { ret; }", "k");
  ASSERT_FALSE(untyped.ok());
  EXPECT_NE(untyped.status().message().find("parameter 0 of .entry k: '.param .q64 x' has no PTX type"),
            std::string::npos)
      << untyped.status().message();
  StatusOr<std::vector<cuda::PtxEntryParameter>> open =
      cuda::ReadPtxEntryParameters(".entry k(.param .u64 x", "k");
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("no closing parenthesis"), std::string::npos);
}

// A SPIR-V module of the instructions the reader looks at (it validates
// nothing): entry point "main" listing `interface`, then for each variable
// its pointer type, storage class and decorations.
class SpirvWords {
 public:
  explicit SpirvWords(uint32_t version) { words_ = {0x07230203, version, 0, 100, 0}; }
  void EntryPoint(const std::vector<uint32_t>& interface) {
    std::vector<uint32_t> operands = {5, 1};  // GLCompute, function %1
    uint32_t name = 0;
    std::memcpy(&name, "main", 4);
    operands.push_back(name);
    operands.push_back(0);  // the NUL, padded
    operands.insert(operands.end(), interface.begin(), interface.end());
    Add(15, operands);
  }
  void Variable(uint32_t id, uint32_t storage_class) {
    Add(32, {id + 50, storage_class, id + 60});  // OpTypePointer %ptr storage %struct
    Add(59, {id + 50, id, storage_class});       // OpVariable
  }
  void Decorate(uint32_t id, uint32_t decoration, std::vector<uint32_t> literals = {}) {
    std::vector<uint32_t> operands = {id, decoration};
    operands.insert(operands.end(), literals.begin(), literals.end());
    Add(71, operands);
  }
  // Any other instruction (types: OpTypeInt, OpTypeFloat, arrays, structs).
  void Instruction(uint32_t opcode, const std::vector<uint32_t>& operands) { Add(opcode, operands); }
  const std::vector<uint32_t>& words() const { return words_; }

 private:
  void Add(uint32_t opcode, const std::vector<uint32_t>& operands) {
    words_.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | opcode);
    words_.insert(words_.end(), operands.begin(), operands.end());
  }
  std::vector<uint32_t> words_;
};

constexpr uint32_t kUniform = 2, kPushConstant = 9, kStorageBuffer = 12;
constexpr uint32_t kBufferBlock = 3, kBinding = 33, kDescriptorSet = 34;

TEST(SpirvInterface, ReadsBindingsSetsAndPushConstants) {
  SpirvWords spirv(0x00010500);
  spirv.EntryPoint({10, 11, 12, 13});
  spirv.Variable(10, kStorageBuffer);
  spirv.Decorate(10, kBinding, {0});
  spirv.Variable(11, kStorageBuffer);
  spirv.Decorate(11, kBinding, {3});
  spirv.Decorate(11, kDescriptorSet, {1});
  spirv.Variable(12, kUniform);  // a uniform buffer (Block), not a storage buffer
  spirv.Decorate(12, kBinding, {2});
  spirv.Variable(13, kPushConstant);
  spirv.Variable(14, kStorageBuffer);  // not in the entry point's interface: unused
  spirv.Decorate(14, kBinding, {7});
  StatusOr<vulkan::SpirvInterface> interface = vulkan::ReflectSpirvInterface(spirv.words(), "main");
  ASSERT_TRUE(interface.ok()) << interface.status().message();
  ASSERT_EQ(interface->bindings.size(), 3u);
  EXPECT_TRUE(interface->push_constants);
  EXPECT_EQ(interface->bindings[0].binding, 0u);
  EXPECT_EQ(interface->bindings[0].set, 0u);
  EXPECT_TRUE(interface->bindings[0].storage_buffer);
  EXPECT_EQ(interface->bindings[1].binding, 3u);
  EXPECT_EQ(interface->bindings[1].set, 1u);
  EXPECT_EQ(interface->bindings[2].binding, 2u);
  EXPECT_FALSE(interface->bindings[2].storage_buffer);
}

// Before SPIR-V 1.4 an entry point lists only its inputs and outputs: every
// global counts, and a storage buffer is a Uniform whose struct is a BufferBlock.
TEST(SpirvInterface, OlderModulesUseEveryGlobalAndBufferBlocks) {
  SpirvWords spirv(0x00010000);
  spirv.EntryPoint({});
  spirv.Variable(10, kUniform);
  spirv.Decorate(70, kBufferBlock);  // the struct of variable 10 (id + 60)
  spirv.Decorate(10, kBinding, {4});
  StatusOr<vulkan::SpirvInterface> interface = vulkan::ReflectSpirvInterface(spirv.words(), "main");
  ASSERT_TRUE(interface.ok()) << interface.status().message();
  ASSERT_EQ(interface->bindings.size(), 1u);
  EXPECT_EQ(interface->bindings[0].binding, 4u);
  EXPECT_TRUE(interface->bindings[0].storage_buffer);
  EXPECT_FALSE(interface->push_constants);
}

// A storage buffer's element type is the scalar of the array its block
// ends in; a block without one has none.
TEST(SpirvInterface, ReadsTheElementTypeOfEachStorageBuffer) {
  constexpr uint32_t kOpTypeInt = 21, kOpTypeFloat = 22, kOpTypeArray = 28, kOpTypeRuntimeArray = 29,
                     kOpTypeStruct = 30;
  SpirvWords spirv(0x00010500);
  spirv.EntryPoint({10, 11, 12, 13});
  spirv.Instruction(kOpTypeFloat, {80, 32});
  spirv.Instruction(kOpTypeInt, {81, 32, 1});
  spirv.Instruction(kOpTypeInt, {82, 64, 0});
  spirv.Instruction(kOpTypeRuntimeArray, {90, 80});
  spirv.Instruction(kOpTypeRuntimeArray, {91, 81});
  spirv.Instruction(kOpTypeArray, {92, 82, 81});
  spirv.Instruction(kOpTypeStruct, {70, 90});      // variable 10: { float x[]; }
  spirv.Instruction(kOpTypeStruct, {71, 81, 91});  // variable 11: { int n; int x[]; }
  spirv.Instruction(kOpTypeStruct, {72, 92});      // variable 12: { uint64_t x[N]; }
  spirv.Instruction(kOpTypeStruct, {73, 81});      // variable 13: { int n; }
  for (uint32_t id : {10u, 11u, 12u, 13u}) {
    spirv.Variable(id, kStorageBuffer);
    spirv.Decorate(id, kBinding, {id - 10});
  }
  StatusOr<vulkan::SpirvInterface> interface = vulkan::ReflectSpirvInterface(spirv.words(), "main");
  ASSERT_TRUE(interface.ok()) << interface.status().message();
  ASSERT_EQ(interface->bindings.size(), 4u);
  using Kind = vulkan::SpirvScalar::Kind;
  const std::vector<vulkan::SpirvScalar>& want = {
      {Kind::kFloat, 32, true}, {Kind::kInt, 32, true}, {Kind::kInt, 64, false}, {Kind::kUnknown, 0, false}};
  for (size_t b = 0; b < 4; ++b) {
    const vulkan::SpirvScalar& got = interface->bindings[b].element;
    EXPECT_EQ(got.kind, want[b].kind) << "binding " << b;
    EXPECT_EQ(got.bits, want[b].bits) << "binding " << b;
    EXPECT_EQ(got.is_signed, want[b].is_signed) << "binding " << b;
  }
}

TEST(SpirvInterface, RefusesAMissingEntryPoint) {
  SpirvWords spirv(0x00010500);
  spirv.EntryPoint({});
  StatusOr<vulkan::SpirvInterface> interface = vulkan::ReflectSpirvInterface(spirv.words(), "other");
  ASSERT_FALSE(interface.ok());
  EXPECT_NE(interface.status().message().find("no entry point 'other'"), std::string::npos);
}

}  // namespace
}  // namespace kiln
