#include "core/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/resource_limits.h"

namespace kiln {
namespace {

using Json = nlohmann::json;

// The format's dtype names and Kiln's element types, both ways.
struct DtypeName {
  std::string_view name;
  ElementType type;
};
constexpr DtypeName kDtypes[] = {
    {"BOOL", ElementType::kPred}, {"U8", ElementType::kU8},     {"I8", ElementType::kS8},
    {"U16", ElementType::kU16},   {"I16", ElementType::kS16},   {"U32", ElementType::kU32},
    {"I32", ElementType::kS32},   {"U64", ElementType::kU64},   {"I64", ElementType::kS64},
    {"F16", ElementType::kF16},   {"BF16", ElementType::kBF16}, {"F32", ElementType::kF32},
    {"F64", ElementType::kF64},   {"C64", ElementType::kC64},
};

std::optional<ElementType> TypeOfDtype(std::string_view name) {
  for (const DtypeName& entry : kDtypes) {
    if (entry.name == name) return entry.type;
  }
  return std::nullopt;
}

std::optional<std::string_view> DtypeOfType(ElementType type) {
  for (const DtypeName& entry : kDtypes) {
    if (entry.type == type) return entry.name;
  }
  return std::nullopt;
}

uint64_t ReadLittleEndian64(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

// The header length the file's first 8 bytes declare, checked against the
// format's limit and the `available` bytes that follow them.
StatusOr<uint64_t> HeaderBytes(const uint8_t* size_bytes, uint64_t available, const std::string& file) {
  const uint64_t header_bytes = ReadLittleEndian64(size_bytes);
  if (header_bytes > kMaxSafetensorsHeaderBytes) {
    return InvalidArgument(file, ": the safetensors header declares ", header_bytes, " bytes (at most ",
                           kMaxSafetensorsHeaderBytes, ")");
  }
  if (header_bytes > available) {
    return DataLoss(file, ": the header declares ", header_bytes, " bytes but the file has ", available,
                    " after the size");
  }
  return header_bytes;
}

// A non-negative integer that fits in int64 (JSON numbers may be anything).
std::optional<int64_t> Count(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<uint64_t>();
    if (number <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return static_cast<int64_t>(number);
  } else if (value.is_number_integer()) {
    const auto number = value.get<int64_t>();
    if (number >= 0) return number;
  }
  return std::nullopt;
}

StatusOr<SafetensorsTensor> ParseTensor(const std::string& file, const std::string& name, const Json& entry) {
  const std::string where = file + ": tensor '" + name + "'";
  if (!entry.is_object()) return InvalidArgument(where, " is not a JSON object");
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) return InvalidArgument(where, " has no string 'dtype'");
  const std::optional<ElementType> type = TypeOfDtype(dtype->get<std::string>());
  if (!type.has_value()) {
    return InvalidArgument(where, " has dtype '", dtype->get<std::string>(),
                           "', which Kiln does not read (BOOL, U8..U64, I8..I64, F16, BF16, F32, F64, C64)");
  }
  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) return InvalidArgument(where, " has no 'shape' array");
  if (shape->size() > 64) return InvalidArgument(where, " has ", shape->size(), " dimensions (at most 64)");
  std::vector<int64_t> dims;
  int64_t elements = 1;
  for (const Json& dim : *shape) {
    const std::optional<int64_t> size = Count(dim);
    if (!size.has_value())
      return InvalidArgument(where, " has a shape entry that is not a non-negative integer");
    if (*size != 0 && elements > std::numeric_limits<int64_t>::max() / *size)
      return InvalidArgument(where, " has a shape whose element count overflows");
    elements *= *size;
    dims.push_back(*size);
  }
  const int64_t width = ByteWidth(*type);
  if (elements > std::numeric_limits<int64_t>::max() / width)
    return InvalidArgument(where, " has a shape whose byte size overflows");
  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2)
    return InvalidArgument(where, " has no 'data_offsets' pair");
  const std::optional<int64_t> begin = Count((*offsets)[0]);
  const std::optional<int64_t> end = Count((*offsets)[1]);
  if (!begin.has_value() || !end.has_value() || *end < *begin)
    return InvalidArgument(where, " has data_offsets that are not integers begin <= end");
  if (*end - *begin != elements * width) {
    return InvalidArgument(where, " has data_offsets [", *begin, ", ", *end, ") of ", *end - *begin,
                           " bytes but its shape needs ", elements * width);
  }
  SafetensorsTensor tensor;
  tensor.name = name;
  tensor.shape = Shape(*type, dims);
  tensor.begin = static_cast<uint64_t>(*begin);
  tensor.end = static_cast<uint64_t>(*end);
  return tensor;
}

// The tensor's bytes as a literal (BOOL bytes other than 0 read as true).
StatusOr<Literal> ToLiteral(const SafetensorsTensor& tensor, std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(Literal literal, Literal::FromBytes(tensor.shape, bytes));
  if (tensor.shape.element_type() == ElementType::kPred) {
    for (uint8_t& byte : literal.raw()) byte = byte != 0 ? 1 : 0;
  }
  return literal;
}

}  // namespace

const SafetensorsTensor* SafetensorsIndex::Find(const std::string& name) const {
  for (const SafetensorsTensor& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

StatusOr<SafetensorsIndex> ParseSafetensorsHeader(std::string_view header, uint64_t data_bytes,
                                                  const std::string& name_for_errors) {
  const std::string& file = name_for_errors;
  // The reference reader wants an object from the first byte.
  if (header.empty() || header.front() != '{')
    return InvalidArgument(file, ": the safetensors header does not start with '{'");
  // A name given twice at the top level is refused (a JSON object would
  // silently keep one of them).
  std::string repeated;
  std::set<std::string> names;
  const Json::parser_callback_t note_names = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth == 1 && event == Json::parse_event_t::key && repeated.empty() &&
        !names.insert(parsed.get<std::string>()).second) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  Json json = Json::parse(header.begin(), header.end(), note_names, /*allow_exceptions=*/false);
  if (json.is_discarded()) return InvalidArgument(file, ": the safetensors header is not valid JSON");
  if (!repeated.empty()) return InvalidArgument(file, ": the header names '", repeated, "' twice");
  if (!json.is_object()) return InvalidArgument(file, ": the safetensors header is not a JSON object");
  SafetensorsIndex index;
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return InvalidArgument(file, ": __metadata__ is not a JSON object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) return InvalidArgument(file, ": __metadata__ '", key, "' is not a string");
        index.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    KILN_ASSIGN_OR_RETURN(SafetensorsTensor tensor, ParseTensor(file, name, entry));
    index.tensors.push_back(std::move(tensor));
  }
  // The ranges must tile the data exactly.
  std::sort(index.tensors.begin(), index.tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  uint64_t covered = 0;
  for (const SafetensorsTensor& tensor : index.tensors) {
    if (tensor.begin != covered) {
      return InvalidArgument(
          file, ": tensor '", tensor.name, "' starts at byte ", tensor.begin, " of the data but ",
          tensor.begin < covered ? "the previous tensor ends at " : "the data before it ends at ", covered,
          " (ranges must neither overlap nor leave holes)");
    }
    covered = tensor.end;
  }
  if (covered != data_bytes) {
    return InvalidArgument(file, ": the tensors cover ", covered, " bytes of data but the file holds ",
                           data_bytes);
  }
  return index;
}

StatusOr<std::vector<std::pair<std::string, Literal>>> ReadSafetensors(std::span<const uint8_t> bytes,
                                                                       const std::string& name_for_errors) {
  if (bytes.size() < 8)
    return DataLoss(name_for_errors, ": a safetensors file starts with 8 bytes of header size");
  KILN_ASSIGN_OR_RETURN(const uint64_t header_bytes,
                        HeaderBytes(bytes.data(), bytes.size() - 8, name_for_errors));
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + 8), header_bytes);
  const std::span<const uint8_t> data = bytes.subspan(8 + header_bytes);
  KILN_ASSIGN_OR_RETURN(SafetensorsIndex index, ParseSafetensorsHeader(header, data.size(), name_for_errors));
  std::vector<std::pair<std::string, Literal>> tensors;
  for (const SafetensorsTensor& tensor : index.tensors) {
    KILN_ASSIGN_OR_RETURN(Literal literal,
                          ToLiteral(tensor, data.subspan(tensor.begin, tensor.end - tensor.begin)));
    tensors.emplace_back(tensor.name, std::move(literal));
  }
  return tensors;
}

StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  std::error_code error;
  const bool regular = std::filesystem::is_regular_file(path, error);
  std::ifstream stream(path, std::ios::binary);
  if (!stream) return NotFound(path, ": cannot open the safetensors file");
  if (!regular) return InvalidArgument(path, ": a safetensors file must be a regular file");
  const uint64_t file_bytes = std::filesystem::file_size(path, error);
  if (error) return NotFound(path, ": cannot read the file's size: ", error.message());
  uint8_t size_bytes[8] = {};
  if (file_bytes < 8 || !stream.read(reinterpret_cast<char*>(size_bytes), 8))
    return DataLoss(path, ": a safetensors file starts with 8 bytes of header size");
  KILN_ASSIGN_OR_RETURN(const uint64_t header_bytes, HeaderBytes(size_bytes, file_bytes - 8, path));
  std::string header(header_bytes, '\0');
  if (!stream.read(header.data(), static_cast<std::streamsize>(header_bytes)))
    return DataLoss(path, ": the header could not be read");
  KILN_ASSIGN_OR_RETURN(SafetensorsIndex index,
                        ParseSafetensorsHeader(header, file_bytes - 8 - header_bytes, path));
  index.data_offset = 8 + header_bytes;
  return std::unique_ptr<SafetensorsFile>(new SafetensorsFile(path, std::move(stream), std::move(index)));
}

StatusOr<Literal> SafetensorsFile::Read(const std::string& name) {
  const SafetensorsTensor* tensor = index_.Find(name);
  if (tensor == nullptr) {
    std::string names;
    for (const SafetensorsTensor& candidate : index_.tensors) {
      if (names.size() > 400) {
        names += ", ...";
        break;
      }
      names += (names.empty() ? "" : ", ") + candidate.name;
    }
    return NotFound(path_, ": no tensor named '", name, "' (the file has: ", names.empty() ? "none" : names,
                    ")");
  }
  const uint64_t bytes = tensor->end - tensor->begin;
  if (bytes > static_cast<uint64_t>(MaxFileArrayBytes())) {
    return ResourceExhausted(path_, ": tensor '", name, "' has ", bytes, " bytes, more than the ",
                             MaxFileArrayBytes(), " a file array may have");
  }
  std::vector<uint8_t> data(bytes);
  stream_.clear();
  stream_.seekg(static_cast<std::streamoff>(index_.data_offset + tensor->begin));
  if (!stream_.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes)))
    return DataLoss(path_, ": tensor '", name, "' could not be read (the file changed or is truncated)");
  return ToLiteral(*tensor, data);
}

StatusOr<std::vector<uint8_t>> WriteSafetensors(
    const std::vector<std::pair<std::string, const Literal*>>& tensors,
    const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, literal] : tensors) {
    if (name == "__metadata__") return InvalidArgument("safetensors: a tensor cannot be named __metadata__");
    if (header.contains(name))
      return InvalidArgument("safetensors: the tensor name '", name, "' is given twice");
    const Shape& shape = literal->shape();
    if (!shape.IsArray())
      return InvalidArgument("safetensors: tensor '", name, "' is ", shape.ToString(), ", not an array");
    const std::optional<std::string_view> dtype = DtypeOfType(shape.element_type());
    if (!dtype.has_value()) {
      return InvalidArgument("safetensors: tensor '", name, "' is ", shape.ToString(),
                             "; the format has no dtype for ", ElementTypeName(shape.element_type()));
    }
    const uint64_t bytes = literal->raw().size();
    header[name] = {{"dtype", std::string(*dtype)},
                    {"shape", shape.dimensions()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const Json::type_error&) {
    // The one error dump reports: a string that is not UTF-8.
    return InvalidArgument(
        "safetensors: a tensor name or metadata string is not valid UTF-8 (JSON needs it)");
  }
  // Padding keeps the data 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8 + text.size());
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(text.size() >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  out.reserve(out.size() + offset);
  for (const auto& entry : tensors) {
    const std::span<const uint8_t> raw = entry.second->raw();
    out.insert(out.end(), raw.begin(), raw.end());
  }
  return out;
}

Status WriteSafetensorsFile(const std::string& path,
                            const std::vector<std::pair<std::string, const Literal*>>& tensors,
                            const std::map<std::string, std::string>& metadata) {
  KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, WriteSafetensors(tensors, metadata));
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  if (!stream) return NotFound(path, ": cannot create the file");
  stream.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!stream.flush()) return DataLoss(path, ": writing the file failed");
  return OkStatus();
}

}  // namespace kiln
