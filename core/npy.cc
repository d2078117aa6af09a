#include "core/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/npy_header.h"
#include "core/resource_limits.h"

namespace kiln {
namespace {

constexpr uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMagicSize = sizeof(kMagic);
// NumPy pads the header so the data starts on this boundary.
constexpr size_t kHeaderAlignment = 64;

// How the elements of a file are stored.
struct NpyDtype {
  ElementType type = ElementType::kInvalid;
  bool big_endian = false;
  // Bytes swapped as one unit when the byte order differs from the host's:
  // a complex number swaps each of its two components.
  int swap_unit = 1;
};

StatusOr<NpyDtype> ParseDescr(const std::string& descr, std::optional<ElementType> expected) {
  std::string_view rest = descr;
  char order = '=';
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '|' || rest[0] == '=')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  struct Known {
    std::string_view code;
    ElementType type;
  };
  static constexpr Known kKnown[] = {
      {"b1", ElementType::kPred}, {"?", ElementType::kPred}, {"i1", ElementType::kS8},
      {"i2", ElementType::kS16},  {"i4", ElementType::kS32}, {"i8", ElementType::kS64},
      {"u1", ElementType::kU8},   {"u2", ElementType::kU16}, {"u4", ElementType::kU32},
      {"u8", ElementType::kU64},  {"f2", ElementType::kF16}, {"f4", ElementType::kF32},
      {"f8", ElementType::kF64},  {"c8", ElementType::kC64}, {"c16", ElementType::kC128},
  };
  NpyDtype dtype;
  for (const Known& known : kKnown) {
    if (rest == known.code) dtype.type = known.type;
  }
  if (rest == "V2") {
    if (expected != ElementType::kBF16) {
      return InvalidArgument("dtype '", descr,
                             "' (two raw bytes) is only accepted where a bf16 array is expected");
    }
    dtype.type = ElementType::kBF16;
  }
  if (dtype.type == ElementType::kInvalid) {
    return InvalidArgument(
        "unsupported dtype '", descr,
        "' (supported: b1, i1, i2, i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16, and V2 as bf16)");
  }
  const int width = ByteWidth(dtype.type);
  dtype.swap_unit = IsComplex(dtype.type) ? width / 2 : width;
  if (order == '|' && width > 1 && dtype.type != ElementType::kBF16) {
    return InvalidArgument("dtype '", descr, "' has no byte order but its elements are ", width,
                           " bytes wide");
  }
  dtype.big_endian = order == '>' || (order == '=' && std::endian::native == std::endian::big);
  return dtype;
}

void SwapBytesInPlace(std::span<uint8_t> data, int unit) {
  if (unit <= 1) return;
  const size_t step = static_cast<size_t>(unit);
  for (size_t offset = 0; offset + step <= data.size(); offset += step) {
    std::reverse(data.begin() + static_cast<std::ptrdiff_t>(offset),
                 data.begin() + static_cast<std::ptrdiff_t>(offset + step));
  }
}

// Copies column-major (Fortran) elements into row-major order.
void FortranToRowMajor(std::span<const uint8_t> source, const std::vector<int64_t>& dims, size_t width,
                       std::span<uint8_t> target) {
  struct Axis {
    int64_t size;
    int64_t column_stride;  // elements between neighbours along this axis in the source
    int64_t index = 0;
  };
  std::vector<Axis> axes;
  axes.reserve(dims.size());
  int64_t stride = 1;
  for (int64_t dim : dims) {
    axes.push_back(Axis{dim, stride});
    stride *= dim;
  }
  int64_t source_element = 0;
  for (size_t out = 0; out < target.size(); out += width) {
    std::memcpy(target.data() + out, source.data() + static_cast<size_t>(source_element) * width, width);
    // Advance the row-major odometer, keeping the column-major offset in step.
    for (auto axis = axes.rbegin(); axis != axes.rend(); ++axis) {
      if (++axis->index < axis->size) {
        source_element += axis->column_stride;
        break;
      }
      source_element -= axis->column_stride * (axis->size - 1);
      axis->index = 0;
    }
  }
}

// Bytes of an array of `dims` with elements `width` bytes wide, or nullopt
// when width times the product of the non-zero dimensions overflows int64.
// Refusing those even when another dimension is zero keeps every partial
// product that later code may form in range.
std::optional<int64_t> CheckedByteSize(const std::vector<int64_t>& dims, int64_t width) {
  int64_t size = width;
  bool has_zero = false;
  for (int64_t dim : dims) {
    if (dim == 0) {
      has_zero = true;
    } else if (__builtin_mul_overflow(size, dim, &size)) {
      return std::nullopt;
    }
  }
  return has_zero ? 0 : size;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  return text + (dims.size() == 1 ? ",)" : ")");
}

uint32_t ReadLittleEndian(std::span<const uint8_t> bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

// What the preamble and header of a file say.
struct NpyLayout {
  NpyHeader header;
  NpyDtype dtype;
  size_t data_offset = 0;  // where the array data starts
  int64_t data_size = 0;   // bytes of array data
};

// Bytes before the header: the magic, the version and the header length,
// which is 2 bytes in format 1.0 and 4 later. Needs the first kMagicSize + 2
// bytes; 0 for an unsupported version.
size_t PreambleSize(std::span<const uint8_t> bytes) {
  const int major = bytes[kMagicSize];
  return kMagicSize + 2 + (major == 1 ? 2 : 4);
}

// Parses everything up to the array data. `bytes` may stop anywhere after the
// header (the data is not looked at).
// Checks the magic and the format version (the first kMagicSize + 2 bytes).
Status CheckStart(std::span<const uint8_t> bytes) {
  if (bytes.size() < kMagicSize || !std::equal(kMagic, kMagic + kMagicSize, bytes.begin())) {
    return InvalidArgument("not a .npy file (it does not start with \\x93NUMPY)");
  }
  if (bytes.size() < kMagicSize + 2) return DataLoss("file ends inside the format version");
  const int major = bytes[kMagicSize];
  const int minor = bytes[kMagicSize + 1];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return InvalidArgument("unsupported .npy format version ", major, ".", minor,
                           " (supported: 1.0, 2.0, 3.0)");
  }
  return OkStatus();
}

StatusOr<NpyLayout> ParseLayout(std::span<const uint8_t> bytes, std::optional<ElementType> expected) {
  KILN_RETURN_IF_ERROR(CheckStart(bytes));
  const size_t header_start = PreambleSize(bytes);
  if (bytes.size() < header_start) return DataLoss("file ends inside the header length");
  const uint64_t header_length =
      ReadLittleEndian(bytes.subspan(kMagicSize + 2, header_start - kMagicSize - 2));
  if (header_length > bytes.size() - header_start) {
    return DataLoss("header length ", header_length, " runs past the end of the file (",
                    bytes.size() - header_start, " bytes after the preamble)");
  }
  const auto header_bytes = bytes.subspan(header_start, static_cast<size_t>(header_length));
  const std::string_view header_text(reinterpret_cast<const char*>(header_bytes.data()), header_bytes.size());
  NpyLayout layout;
  KILN_ASSIGN_OR_RETURN(layout.header, ParseNpyHeader(header_text));
  KILN_ASSIGN_OR_RETURN(layout.dtype, ParseDescr(layout.header.descr, expected));
  const std::optional<int64_t> byte_size =
      CheckedByteSize(layout.header.shape, static_cast<int64_t>(ByteWidth(layout.dtype.type)));
  if (!byte_size) {
    return InvalidArgument("shape ", DimsText(layout.header.shape), " has more bytes than fit in 64 bits");
  }
  layout.data_offset = header_start + static_cast<size_t>(header_length);
  layout.data_size = *byte_size;
  return layout;
}

// The error for `available` data bytes where the header asks for another
// number; OK when they agree.
Status CheckDataSize(const NpyLayout& layout, uint64_t available) {
  const auto wanted = static_cast<uint64_t>(layout.data_size);
  if (wanted > available) {
    return DataLoss("array data is truncated: expected ", layout.data_size, " bytes for ",
                    ElementTypeName(layout.dtype.type), " shape ", DimsText(layout.header.shape), ", found ",
                    available);
  }
  if (wanted < available)
    return InvalidArgument("found ", available - wanted, " unexpected bytes after the array data");
  return OkStatus();
}

// The array from exactly `layout.data_size` bytes of data.
Literal DecodeData(const NpyLayout& layout, std::span<const uint8_t> data) {
  const NpyDtype& dtype = layout.dtype;
  const std::vector<int64_t>& dims = layout.header.shape;
  Literal literal(Shape(dtype.type, dims));
  std::span<uint8_t> out = literal.raw();
  if (layout.header.fortran_order && dims.size() > 1) {
    FortranToRowMajor(data, dims, static_cast<size_t>(ByteWidth(dtype.type)), out);
  } else if (!out.empty()) {
    std::memcpy(out.data(), data.data(), out.size());
  }
  if (dtype.big_endian != (std::endian::native == std::endian::big)) SwapBytesInPlace(out, dtype.swap_unit);
  // Any non-zero byte is true; store 0/1 so reading the bytes as bool is defined.
  if (dtype.type == ElementType::kPred) {
    for (uint8_t& byte : out) byte = byte != 0 ? 1 : 0;
  }
  return literal;
}

StatusOr<Literal> ParseNpy(std::span<const uint8_t> bytes, std::optional<ElementType> expected) {
  KILN_ASSIGN_OR_RETURN(NpyLayout layout, ParseLayout(bytes, expected));
  const auto data = bytes.subspan(layout.data_offset);
  KILN_RETURN_IF_ERROR(CheckDataSize(layout, data.size()));
  return DecodeData(layout, data);
}

// Appends up to `count` bytes of `file` to `bytes`, growing `bytes` only as
// data arrives (a pipe that claims much and sends little costs little);
// returns how many were read.
size_t ReadUpTo(std::FILE* file, size_t count, std::vector<uint8_t>& bytes) {
  constexpr size_t kChunk = size_t{1} << 20;
  size_t total = 0;
  while (total < count) {
    const size_t want = std::min(kChunk, count - total);
    const size_t old_size = bytes.size();
    bytes.resize(old_size + want);
    const size_t got = std::fread(bytes.data() + old_size, 1, want, file);
    bytes.resize(old_size + got);
    total += got;
    if (got < want) break;
  }
  return total;
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// Reads the file step by step so that nothing larger than the header says
// (and the limits allow) is ever read: the preamble, the header, then
// exactly the data. A regular file's size is checked against the header
// before any data is read.
StatusOr<Literal> ReadNpyStream(std::FILE* file, std::optional<uint64_t> file_size,
                                std::optional<ElementType> expected, const NpyShapeCheck& check) {
  std::vector<uint8_t> bytes;
  ReadUpTo(file, kMagicSize + 2, bytes);
  KILN_RETURN_IF_ERROR(CheckStart(bytes));
  ReadUpTo(file, PreambleSize(bytes) - bytes.size(), bytes);
  if (bytes.size() == PreambleSize(bytes)) {
    const uint64_t header_length = ReadLittleEndian(std::span<const uint8_t>(bytes).subspan(kMagicSize + 2));
    if (header_length > kMaxNpyHeaderBytes) {
      return InvalidArgument("header of ", header_length, " bytes is longer than the ", kMaxNpyHeaderBytes,
                             " bytes this reader accepts");
    }
    ReadUpTo(file, static_cast<size_t>(header_length), bytes);
  }
  if (std::ferror(file)) return DataLoss("error while reading the file");
  KILN_ASSIGN_OR_RETURN(NpyLayout layout, ParseLayout(bytes, expected));
  // The caller's check first: it knows what the array should be.
  const Shape declared(layout.dtype.type, layout.header.shape);
  if (check) KILN_RETURN_IF_ERROR(check(declared));
  const int64_t limit = MaxFileArrayBytes();
  if (layout.data_size > limit) {
    return ResourceExhausted(
        "the header declares ", declared.ToString(), ", ", layout.data_size, " bytes of data, more than the ",
        limit, " bytes one array read from a file may have on this machine (half its physical memory)");
  }
  if (file_size)
    KILN_RETURN_IF_ERROR(
        CheckDataSize(layout, *file_size - std::min<uint64_t>(*file_size, layout.data_offset)));
  // Reserving touches no memory; only the chunks read in are filled. One
  // byte past the data tells whether the file goes on.
  bytes.clear();
  bytes.shrink_to_fit();
  bytes.reserve(static_cast<size_t>(layout.data_size) + 1);
  const size_t read = ReadUpTo(file, static_cast<size_t>(layout.data_size) + 1, bytes);
  if (std::ferror(file)) return DataLoss("error while reading the file");
  if (read > static_cast<size_t>(layout.data_size)) {
    return InvalidArgument("found unexpected bytes after the ", layout.data_size, " bytes of array data");
  }
  KILN_RETURN_IF_ERROR(CheckDataSize(layout, read));
  return DecodeData(layout, bytes);
}

std::string DescrFor(ElementType type) {
  const char order = std::endian::native == std::endian::big ? '>' : '<';
  switch (type) {
    case ElementType::kPred: return "|b1";
    case ElementType::kS8: return "|i1";
    case ElementType::kU8: return "|u1";
    case ElementType::kBF16: return std::string(1, order) + "V2";
    case ElementType::kC64: return std::string(1, order) + "c8";
    case ElementType::kC128: return std::string(1, order) + "c16";
    default: break;
  }
  const char kind = IsFloating(type) ? 'f' : IsSignedIntegral(type) ? 'i' : 'u';
  return std::string(1, order) + kind + std::to_string(ByteWidth(type));
}

}  // namespace

StatusOr<Literal> ReadNpy(std::span<const uint8_t> bytes, const std::string& name_for_errors,
                          std::optional<ElementType> expected) {
  StatusOr<Literal> literal = ParseNpy(bytes, expected);
  if (!literal.ok()) return literal.status().WithContext(name_for_errors);
  return literal;
}

StatusOr<Literal> ReadNpy(std::span<const uint8_t> bytes, const std::string& name_for_errors) {
  return ReadNpy(bytes, name_for_errors, std::nullopt);
}

StatusOr<Literal> ReadNpyFile(const std::string& path, std::optional<ElementType> expected,
                              const NpyShapeCheck& check) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status))
    return InvalidArgument(path, ": is a directory, not a .npy file");
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) return NotFound(path, ": cannot open file: ", std::strerror(errno));
  // Devices and pipes have no size to check up front; they are read as a stream.
  std::optional<uint64_t> file_size;
  if (std::filesystem::is_regular_file(status)) {
    const uintmax_t size = std::filesystem::file_size(path, error);
    if (!error) file_size = size;
  }
  StatusOr<Literal> literal = ReadNpyStream(file.get(), file_size, expected, check);
  if (!literal.ok()) return literal.status().WithContext(path);
  return literal;
}

std::vector<uint8_t> WriteNpy(const Literal& literal) {
  if (!literal.shape().IsArray()) return {};
  NpyHeader header;
  header.descr = DescrFor(literal.shape().element_type());
  header.shape = literal.shape().dimensions();
  std::string text = FormatNpyHeader(header);
  // Version 1.0 stores the header length in 16 bits; longer headers need 2.0.
  size_t preamble = kMagicSize + 2 + 2;
  auto padded_length = [&] {
    const size_t unpadded = preamble + text.size() + 1;  // +1 for the final newline
    return (unpadded + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment - preamble;
  };
  int major = 1;
  if (padded_length() > 0xffff) {
    major = 2;
    preamble = kMagicSize + 2 + 4;
  }
  const size_t header_length = padded_length();
  text.resize(header_length - 1, ' ');
  text.push_back('\n');

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(static_cast<uint8_t>(major));
  bytes.push_back(0);
  for (size_t i = 0; i < preamble - kMagicSize - 2; ++i)
    bytes.push_back(static_cast<uint8_t>(header_length >> (8 * i)));
  bytes.insert(bytes.end(), text.begin(), text.end());
  const auto data = literal.raw();
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

Status WriteNpyFile(const Literal& literal, const std::string& path) {
  if (!literal.shape().IsArray()) {
    return InvalidArgument(path, ": cannot write ", literal.shape().ToString(), " as .npy (only arrays)");
  }
  const std::vector<uint8_t> bytes = WriteNpy(literal);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return NotFound(path, ": cannot create file: ", std::strerror(errno));
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return DataLoss(path, ": error while writing the file");
  return OkStatus();
}

}  // namespace kiln
