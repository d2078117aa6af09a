#include "core/lowering/user_op_device_frame.h"

#include <bit>
#include <cstring>
#include <utility>

namespace kiln {
namespace {

// The KILN_OP_ATTR_* code of `kind` (kiln.h numbers them from 1 in
// AttrKind's order).
uint64_t AttrKindCode(AttrKind kind) { return static_cast<uint64_t>(kind) + 1; }

uint64_t SignedCell(int64_t value) { return static_cast<uint64_t>(value); }

// A float's two cells: the f64, then the f32 in the low half (so a shader
// without 64-bit floats reads it as one 32-bit word).
void AppendFloat(std::vector<uint64_t>& cells, double value) {
  cells.push_back(std::bit_cast<uint64_t>(value));
  cells.push_back(std::bit_cast<uint32_t>(static_cast<float>(value)));
}

// Where values go: the records are written first, the values they point at
// after all records, so each record knows its values' cell only once the
// values are appended.
class FrameWriter {
 public:
  explicit FrameWriter(size_t records)
      : cells_(kUserOpDeviceFrameHeaderCells + records * kUserOpDeviceFrameRecordCells) {}

  void SetRecord(size_t record, uint64_t a, uint64_t b, uint64_t count, uint64_t values_cell) {
    uint64_t* at = &cells_[kUserOpDeviceFrameHeaderCells + record * kUserOpDeviceFrameRecordCells];
    at[0] = a;
    at[1] = b;
    at[2] = count;
    at[3] = values_cell;
  }

  uint64_t AppendDims(std::span<const int64_t> dims) {
    const uint64_t at = cells_.size();
    for (int64_t d : dims) cells_.push_back(SignedCell(d));
    return dims.empty() ? 0 : at;
  }

  // The values of `value` (an attribute's): its count and first cell.
  std::pair<uint64_t, uint64_t> AppendValues(const AttrValue& value) {
    const uint64_t at = cells_.size();
    switch (value.kind) {
      case AttrKind::kInt:
      case AttrKind::kBool: cells_.push_back(SignedCell(value.i)); return {1, at};
      case AttrKind::kType: cells_.push_back(static_cast<uint64_t>(value.type)); return {1, at};
      case AttrKind::kFloat: AppendFloat(cells_, value.f); return {1, at};
      case AttrKind::kShape: return {value.dims.size(), AppendDims(value.dims)};
      case AttrKind::kTensor: {
        cells_.resize(cells_.size() + kTensorHeaderCells);
        WriteTensorHeader(at, value);
        return {ElementCount(value), at};
      }
      case AttrKind::kList: return AppendList(value);
      case AttrKind::kString: break;
    }
    return {0, 0};
  }

  std::vector<uint64_t> Finish(size_t args, size_t results, size_t attrs) {
    // The tensors' elements come last, so every cell before them is where
    // it was before tensors had device values.
    for (const auto& [header, tensor] : tensors_) {
      const size_t bytes = tensor->data.size();
      const uint64_t at = cells_.size();
      cells_.resize(cells_.size() + (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
      if (bytes > 0) std::memcpy(&cells_[at], tensor->data.data(), bytes);
      cells_[header + 3] = bytes == 0 ? 0 : at;
    }
    cells_[0] = kUserOpDeviceFrameVersion;
    cells_[1] = cells_.size();
    cells_[2] = args;
    cells_[3] = results;
    cells_[4] = attrs;
    return std::move(cells_);
  }

 private:
  static constexpr size_t kTensorHeaderCells = 4;

  static uint64_t ElementCount(const AttrValue& tensor) {
    int64_t count = 1;
    for (int64_t d : tensor.dims) count *= d;
    return SignedCell(count);
  }

  // A tensor's header at cell `at`: element type, rank, the cell of its
  // dims (appended now), and the cell of its elements (set by Finish).
  void WriteTensorHeader(uint64_t at, const AttrValue& tensor) {
    const uint64_t dims = AppendDims(tensor.dims);
    cells_[at] = static_cast<uint64_t>(tensor.type);
    cells_[at + 1] = tensor.dims.size();
    cells_[at + 2] = dims;
    tensors_.emplace_back(at, &tensor);
  }

  std::pair<uint64_t, uint64_t> AppendList(const AttrValue& list) {
    const size_t n = list.items.size();
    switch (list.item_kind) {
      case AttrKind::kInt:
      case AttrKind::kBool:
      case AttrKind::kType:
      case AttrKind::kFloat: {
        const uint64_t at = cells_.size();
        for (const AttrValue& item : list.items) AppendValues(item);
        return {n, n == 0 ? 0 : at};
      }
      case AttrKind::kShape: {
        // A (rank, dims cell) pair per shape, then the dims.
        const uint64_t at = cells_.size();
        cells_.resize(cells_.size() + 2 * n);
        for (size_t k = 0; k < n; ++k) {
          const uint64_t dims = AppendDims(list.items[k].dims);
          cells_[at + 2 * k] = list.items[k].dims.size();
          cells_[at + 2 * k + 1] = dims;
        }
        return {n, n == 0 ? 0 : at};
      }
      case AttrKind::kTensor: {
        // A header per tensor, then their dims.
        const uint64_t at = cells_.size();
        cells_.resize(cells_.size() + kTensorHeaderCells * n);
        for (size_t k = 0; k < n; ++k) WriteTensorHeader(at + kTensorHeaderCells * k, list.items[k]);
        return {n, n == 0 ? 0 : at};
      }
      case AttrKind::kString:
      case AttrKind::kList: break;
    }
    return {0, 0};
  }

  std::vector<uint64_t> cells_;
  // (header cell, tensor) of every tensor value, for Finish.
  std::vector<std::pair<uint64_t, const AttrValue*>> tensors_;
};

}  // namespace

std::vector<uint64_t> BuildUserOpDeviceFrame(std::span<const Shape> args, std::span<const Shape> results,
                                             const AttrList& attrs) {
  const size_t buffers = args.size() + results.size();
  FrameWriter frame(buffers + attrs.size());
  for (size_t b = 0; b < buffers; ++b) {
    const Shape& shape = b < args.size() ? args[b] : results[b - args.size()];
    const uint64_t dims = frame.AppendDims(shape.dimensions());
    frame.SetRecord(b, static_cast<uint64_t>(shape.element_type()), shape.dimensions().size(),
                    SignedCell(shape.element_count()), dims);
  }
  for (size_t a = 0; a < attrs.size(); ++a) {
    const AttrValue& value = attrs[a].second;
    const auto [count, cell] = frame.AppendValues(value);
    const AttrKind item = value.kind == AttrKind::kList ? value.item_kind : value.kind;
    frame.SetRecord(buffers + a, AttrKindCode(value.kind), AttrKindCode(item), count, cell);
  }
  return frame.Finish(args.size(), results.size(), attrs.size());
}

}  // namespace kiln
