// What a backend's kernel generator can emit, one row per opcode: the fusion
// pass asks it of every candidate instruction and a device backend's
// UnsupportedOps of every instruction, so it is answered from the row (and
// the element types it accepts) without building a kernel for the
// instruction. Only an op whose answer depends on its attributes (a dot's
// dimension numbers, a reduce's computation, a constant's size) asks the
// backend's per-instruction check. Each backend declares its table in one
// place (backends/llvm/emittable.cc, backends/cuda/ptx_emittable.cc,
// backends/vulkan/glsl_emittable.cc), with the most buffers one of its
// kernels may bind (a Vulkan device's storage-buffer bindings, CUDA's
// kernel-parameter space), which the fusion pass never exceeds.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>

#include "core/ir.h"
#include "core/status.h"

namespace kiln::compiler {

// A set of array element types (tuple and token are never members).
class ElementTypeSet {
 public:
  constexpr ElementTypeSet() = default;
  constexpr ElementTypeSet(std::initializer_list<ElementType> types) {
    for (ElementType type : types) bits_ |= Bit(type);
  }
  // Every array element type, pred to c128.
  static ElementTypeSet All();
  bool Contains(ElementType type) const { return (bits_ & Bit(type)) != 0; }
  void Insert(ElementType type) { bits_ |= Bit(type); }
  ElementTypeSet Without(ElementTypeSet other) const { return FromBits(bits_ & ~other.bits_); }
  ElementTypeSet Intersect(ElementTypeSet other) const { return FromBits(bits_ & other.bits_); }
  bool operator==(const ElementTypeSet&) const = default;

 private:
  static constexpr uint32_t Bit(ElementType type) { return uint32_t{1} << static_cast<int>(type); }
  static ElementTypeSet FromBits(uint32_t bits) {
    ElementTypeSet set;
    set.bits_ = bits;
    return set;
  }
  uint32_t bits_ = 0;
};

enum class Emittability : uint8_t {
  kNever,    // no kernel of the backend computes it
  kAlways,   // every instance whose element types are in the row's set
  kChecked,  // depends on the instance: the table's per-instruction check decides
};

struct EmittableRow {
  Opcode opcode = Opcode::kOpcodeCount;
  Emittability emittability = Emittability::kNever;
  // Every array of the instruction, its operands and its result leaves,
  // must be of one of these types.
  ElementTypeSet types = ElementTypeSet::All();
  // Whether its result may be a tuple of arrays (a variadic reduce, a
  // kernel's tuple root); otherwise it must be one array.
  bool tuple_result = false;
};

// The per-instruction check of a kChecked row: OK or UNIMPLEMENTED saying
// why. It sees the instruction as a kernel of its own (its operands are
// the kernel's arguments) and must not build that kernel.
using InstructionEmittableCheck = std::function<Status(const Instruction& instruction)>;

class EmittableTable {
 public:
  // `backend` is named in refusals ("vulkan: cannot emit ..."); an opcode
  // without a row is kNever; `max_elements` bounds each array's element
  // count (what the backend's indexing reaches). A kChecked row needs
  // `check`.
  EmittableTable(std::string backend, std::initializer_list<EmittableRow> rows,
                 InstructionEmittableCheck check = {},
                 int64_t max_elements = std::numeric_limits<int64_t>::max());

  // OK when the backend can run `instruction` alone as a kernel (its
  // operands as the kernel's arguments); else UNIMPLEMENTED naming the op,
  // its shape and why.
  Status Check(const Instruction& instruction) const;

  const EmittableRow& row(Opcode opcode) const { return rows_[static_cast<size_t>(opcode)]; }
  // Replaces (or adds) rows: a backend that shares another's emitters
  // (cuda over the LLVM ones) declares only what differs.
  void Override(std::initializer_list<EmittableRow> rows);
  void Set(const EmittableRow& row) { rows_[static_cast<size_t>(row.opcode)] = row; }
  // Keeps each row's types within `supported` (a device's element types).
  void Restrict(ElementTypeSet supported);
  const InstructionEmittableCheck& check() const { return check_; }
  void set_check(InstructionEmittableCheck check) { check_ = std::move(check); }
  const std::string& backend() const { return backend_; }

  // The most argument and result buffers one kernel may bind: an
  // instruction alone needs one per operand and one per result array
  // (Check refuses more); a fused kernel one per parameter and result array
  // (FusionOptions::max_kernel_buffers). What a backend's kernels bind
  // besides (a sort's scratch) is left out of it: the backend's per-
  // instruction check counts that. Unbounded unless set.
  int64_t max_kernel_buffers() const { return max_kernel_buffers_; }
  void set_max_kernel_buffers(int64_t buffers) { max_kernel_buffers_ = buffers; }

  // Whether a gather may share a kernel with its producers and consumers
  // (FusionOptions::fuse_gathers): the backend's kernels compute it
  // elementally wherever it lies in them. Off unless set.
  bool fuses_gathers() const { return fuses_gathers_; }
  void set_fuses_gathers(bool fuses) { fuses_gathers_ = fuses; }

 private:
  std::string backend_;
  std::array<EmittableRow, static_cast<size_t>(Opcode::kOpcodeCount)> rows_;
  InstructionEmittableCheck check_;
  int64_t max_elements_;
  int64_t max_kernel_buffers_ = std::numeric_limits<int64_t>::max();
  bool fuses_gathers_ = false;
};

}  // namespace kiln::compiler
