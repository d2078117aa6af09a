// Reading and writing safetensors files, the format Hugging Face keeps model
// weights in: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the tensors' bytes
// (row-major, little-endian), with an optional "__metadata__" map of strings.
//
// Files are checked as the format's reference implementation checks them:
// the header is a JSON object of at most kMaxSafetensorsHeaderBytes; every
// tensor's range has exactly its shape's bytes; the ranges neither overlap
// nor leave holes and cover the data to its end; names are unique.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/literal.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

inline constexpr uint64_t kMaxSafetensorsHeaderBytes = uint64_t{100} << 20;

struct SafetensorsTensor {
  std::string name;
  Shape shape;
  uint64_t begin = 0;  // byte range in the data section
  uint64_t end = 0;
};

// A parsed header: the tensors in file order (by their byte ranges).
struct SafetensorsIndex {
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // where the data section starts in the file

  const SafetensorsTensor* Find(const std::string& name) const;
};

// Parses `header` (the JSON text) for a data section of `data_bytes` bytes.
// `name_for_errors` starts every message. INVALID_ARGUMENT for what the
// format forbids, naming the tensor and the field.
StatusOr<SafetensorsIndex> ParseSafetensorsHeader(std::string_view header, uint64_t data_bytes,
                                                  const std::string& name_for_errors);

// Every tensor of a whole file held in memory (what the fuzzer drives).
// DATA_LOSS for a file shorter than its header says.
StatusOr<std::vector<std::pair<std::string, Literal>>> ReadSafetensors(std::span<const uint8_t> bytes,
                                                                       const std::string& name_for_errors);

// A safetensors file opened for reading tensors one at a time: Open reads and
// checks the header only; Read reads one tensor's bytes.
class SafetensorsFile {
 public:
  // NOT_FOUND when the file cannot be opened; INVALID_ARGUMENT or DATA_LOSS
  // for a malformed or truncated one; a tensor larger than
  // MaxFileArrayBytes() is RESOURCE_EXHAUSTED when read.
  static StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);

  const SafetensorsIndex& index() const { return index_; }
  const std::string& path() const { return path_; }
  // NOT_FOUND naming the file's tensors when `name` is not one of them.
  StatusOr<Literal> Read(const std::string& name);

 private:
  SafetensorsFile(std::string path, std::ifstream stream, SafetensorsIndex index)
      : path_(std::move(path)), stream_(std::move(stream)), index_(std::move(index)) {}

  std::string path_;
  std::ifstream stream_;
  SafetensorsIndex index_;
};

// Serialises named array literals (unique names, not "__metadata__") and
// string metadata: the header padded with spaces to a multiple of 8 bytes,
// the tensors in the given order. Tuples, tokens and names given twice are
// INVALID_ARGUMENT.
StatusOr<std::vector<uint8_t>> WriteSafetensors(
    const std::vector<std::pair<std::string, const Literal*>>& tensors,
    const std::map<std::string, std::string>& metadata);
Status WriteSafetensorsFile(const std::string& path,
                            const std::vector<std::pair<std::string, const Literal*>>& tensors,
                            const std::map<std::string, std::string>& metadata);

}  // namespace kiln
