#include "backends/vulkan/spirv_interface.h"

#include <cstring>
#include <map>
#include <set>
#include <string>

namespace kiln::vulkan {
namespace {

// From the SPIR-V specification (unified headers): opcodes, storage
// classes and decorations this reads.
constexpr uint32_t kMagic = 0x07230203;
constexpr size_t kSpirvHeaderWords = 5;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpTypeInt = 21;
constexpr uint32_t kOpTypeFloat = 22;
constexpr uint32_t kOpTypeArray = 28;
constexpr uint32_t kOpTypeRuntimeArray = 29;
constexpr uint32_t kOpTypeStruct = 30;
constexpr uint32_t kOpTypePointer = 32;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kStorageClassUniformConstant = 0;
constexpr uint32_t kStorageClassUniform = 2;
constexpr uint32_t kStorageClassPushConstant = 9;
constexpr uint32_t kStorageClassStorageBuffer = 12;
constexpr uint32_t kDecorationBufferBlock = 3;  // a storage buffer before SPIR-V 1.3
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kVersion14 = 0x00010400;

// Words a literal string at `at` takes (its NUL and padding included).
size_t StringWords(std::span<const uint32_t> words, size_t at, size_t end, std::string* out) {
  const char* text = reinterpret_cast<const char*>(&words[at]);
  const size_t limit = (end - at) * 4;
  const size_t length = strnlen(text, limit);
  *out = std::string(text, length);
  return length / 4 + 1;
}

}  // namespace

StatusOr<SpirvInterface> ReflectSpirvInterface(std::span<const uint32_t> words, std::string_view entry) {
  if (words.size() < kSpirvHeaderWords || words[0] != kMagic)
    return InvalidArgument("the code is not a SPIR-V module (no magic number)");
  const bool lists_every_global = words[1] >= kVersion14;
  std::set<uint32_t> interface;
  bool found_entry = false;
  struct Variable {
    uint32_t pointer_type = 0;
    uint32_t storage_class = 0;
  };
  std::map<uint32_t, Variable> variables;
  std::map<uint32_t, uint32_t> bindings, sets, pointees;
  std::set<uint32_t> buffer_blocks;
  std::map<uint32_t, SpirvScalar> scalars;           // OpTypeInt / OpTypeFloat ids
  std::map<uint32_t, uint32_t> array_elements;       // (runtime) array id -> element type id
  std::map<uint32_t, uint32_t> last_struct_members;  // struct id -> its last member's type id
  for (size_t at = kSpirvHeaderWords; at < words.size();) {
    const uint32_t count = words[at] >> 16;
    const uint32_t opcode = words[at] & 0xffff;
    if (count == 0 || at + count > words.size())
      return InvalidArgument("the SPIR-V instruction at word ", at, " runs past the module");
    const size_t end = at + count;
    if (opcode == kOpEntryPoint && count >= 4) {
      std::string name;
      const size_t name_words = StringWords(words, at + 3, end, &name);
      if (name == entry) {
        found_entry = true;
        for (size_t k = at + 3 + name_words; k < end; ++k) interface.insert(words[k]);
      }
    } else if (opcode == kOpTypeInt && count >= 4) {
      scalars[words[at + 1]] = {SpirvScalar::Kind::kInt, words[at + 2], words[at + 3] != 0};
    } else if (opcode == kOpTypeFloat && count >= 3) {
      scalars[words[at + 1]] = {SpirvScalar::Kind::kFloat, words[at + 2], true};
    } else if ((opcode == kOpTypeRuntimeArray || opcode == kOpTypeArray) && count >= 3) {
      array_elements[words[at + 1]] = words[at + 2];
    } else if (opcode == kOpTypeStruct && count >= 3) {
      last_struct_members[words[at + 1]] = words[end - 1];
    } else if (opcode == kOpTypePointer && count >= 4) {
      pointees[words[at + 1]] = words[at + 3];
    } else if (opcode == kOpVariable && count >= 4) {
      variables[words[at + 2]] = {words[at + 1], words[at + 3]};
    } else if (opcode == kOpDecorate && count >= 3 && words[at + 2] == kDecorationBufferBlock) {
      buffer_blocks.insert(words[at + 1]);
    } else if (opcode == kOpDecorate && count >= 4) {
      if (words[at + 2] == kDecorationBinding) bindings[words[at + 1]] = words[at + 3];
      if (words[at + 2] == kDecorationDescriptorSet) sets[words[at + 1]] = words[at + 3];
    }
    at = end;
  }
  if (!found_entry) return InvalidArgument("the SPIR-V module has no entry point '", entry, "'");
  SpirvInterface result;
  for (const auto& [id, variable] : variables) {
    if (lists_every_global && !interface.contains(id)) continue;
    const uint32_t storage = variable.storage_class;
    if (storage == kStorageClassPushConstant) {
      result.push_constants = true;
    } else if (storage == kStorageClassStorageBuffer || storage == kStorageClassUniform ||
               storage == kStorageClassUniformConstant) {
      if (!bindings.contains(id)) continue;
      const bool buffer_block = storage == kStorageClassUniform && pointees.contains(variable.pointer_type) &&
                                buffer_blocks.contains(pointees[variable.pointer_type]);
      const bool storage_buffer = storage == kStorageClassStorageBuffer || buffer_block;
      // A storage buffer block whose last member is an array of scalars.
      SpirvScalar element;
      if (storage_buffer && pointees.contains(variable.pointer_type)) {
        const auto member = last_struct_members.find(pointees[variable.pointer_type]);
        const auto array =
            member == last_struct_members.end() ? array_elements.end() : array_elements.find(member->second);
        if (array != array_elements.end() && scalars.contains(array->second))
          element = scalars[array->second];
      }
      result.bindings.push_back({sets.contains(id) ? sets[id] : 0, bindings[id], storage_buffer, element});
    }
  }
  return result;
}

}  // namespace kiln::vulkan
