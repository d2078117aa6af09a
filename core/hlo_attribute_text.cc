#include "core/hlo_attribute_text.h"

#include <array>
#include <charconv>

namespace kiln {
namespace {

std::optional<int64_t> ParseIntPiece(std::string_view piece) {
  if (!piece.empty() && piece.front() == '+') piece.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(piece.data(), piece.data() + piece.size(), value);
  if (piece.empty() || error != std::errc() || end != piece.data() + piece.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      pieces.push_back(text.substr(start));
      return pieces;
    }
    pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

// "3x3" -> {3, 3}.
StatusOr<std::vector<int64_t>> ParseXList(HloLexer& lexer, size_t offset, std::string_view word,
                                          std::string_view what) {
  std::vector<int64_t> values;
  for (std::string_view piece : Split(word, 'x')) {
    const std::optional<int64_t> value = ParseIntPiece(piece);
    if (!value) {
      return lexer.ErrorAt(
          offset, "expected " + std::string(what) + " as NxM... but got '" + std::string(word) + "'");
    }
    values.push_back(*value);
  }
  return values;
}

template <typename T>
std::string JoinWithX(const std::vector<T>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += "x";
    text += std::to_string(values[i]);
  }
  return text;
}

// One labelled part of dim_labels: `letters` name the two non-spatial
// dimensions (b,f / i,o), digits the spatial ones in order.
Status ParseLabelPart(HloLexer& lexer, size_t offset, std::string_view part, char first_letter,
                      char second_letter, int64_t& first, int64_t& second, std::vector<int64_t>& spatial) {
  first = second = -1;
  spatial.assign(part.size() >= 2 ? part.size() - 2 : 0, -1);
  auto fail = [&](const std::string& why) {
    return lexer.ErrorAt(offset, "invalid dim_labels part '" + std::string(part) + "': " + why);
  };
  for (size_t i = 0; i < part.size(); ++i) {
    const char c = part[i];
    const auto position = static_cast<int64_t>(i);
    if (c == first_letter || c == second_letter) {
      int64_t& slot = c == first_letter ? first : second;
      if (slot >= 0) return fail(std::string("'") + c + "' appears twice");
      slot = position;
    } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < spatial.size()) {
      int64_t& slot = spatial[static_cast<size_t>(c - '0')];
      if (slot >= 0) return fail(std::string("'") + c + "' appears twice");
      slot = position;
    } else {
      return fail(std::string("unexpected '") + c + "'");
    }
  }
  if (first < 0 || second < 0) {
    return fail(std::string("needs one '") + first_letter + "' and one '" + second_letter + "'");
  }
  return OkStatus();
}

std::string PrintLabelPart(char first_letter, int64_t first, char second_letter, int64_t second,
                           const std::vector<int64_t>& spatial) {
  std::string text(spatial.size() + 2, '?');
  auto place = [&](int64_t position, char c) {
    if (position >= 0 && static_cast<size_t>(position) < text.size()) text[static_cast<size_t>(position)] = c;
  };
  place(first, first_letter);
  place(second, second_letter);
  for (size_t i = 0; i < spatial.size() && i < 10; ++i) place(spatial[i], static_cast<char>('0' + i));
  return text;
}

}  // namespace

StatusOr<int64_t> ParseInt64Text(HloLexer& lexer) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  const std::string_view token = lexer.ReadNumberToken();
  const std::optional<int64_t> value = ParseIntPiece(token);
  if (!value) {
    lexer.Rewind(start);
    return lexer.Expected("an integer (64-bit)");
  }
  return *value;
}

StatusOr<bool> ParseBoolText(HloLexer& lexer) {
  if (lexer.TryConsumeKeyword("true")) return true;
  if (lexer.TryConsumeKeyword("false")) return false;
  return lexer.Expected("true or false");
}

StatusOr<std::vector<int64_t>> ParseIntListText(HloLexer& lexer) {
  if (!lexer.TryConsume('{')) return lexer.Expected("'{' starting a list of integers");
  std::vector<int64_t> values;
  if (lexer.TryConsume('}')) return values;
  while (true) {
    KILN_ASSIGN_OR_RETURN(int64_t value, ParseInt64Text(lexer));
    values.push_back(value);
    if (lexer.TryConsume('}')) return values;
    if (!lexer.TryConsume(',')) return lexer.Expected("',' or '}' in the list of integers");
  }
}

std::string PrintIntListText(std::span<const int64_t> values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(values[i]);
  }
  return text + "}";
}

StatusOr<Window> ParseWindowText(HloLexer& lexer) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  if (!lexer.TryConsume('{')) return lexer.Expected("'{' starting the window");
  Window window;
  bool sized = false;
  std::vector<std::string_view> seen;
  while (!lexer.TryConsume('}')) {
    lexer.SkipSpace();
    const size_t key_offset = lexer.offset();
    const std::string_view key = lexer.ReadName();
    if (key.empty())
      return lexer.Expected("a window field (size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal)");
    for (std::string_view previous : seen) {
      if (previous == key)
        return lexer.ErrorAt(key_offset, "window field '" + std::string(key) + "' given twice");
    }
    seen.push_back(key);
    if (!lexer.TryConsume('=')) return lexer.Expected("'=' after window field '" + std::string(key) + "'");
    lexer.SkipSpace();
    const size_t value_offset = lexer.offset();
    const std::string_view word = lexer.ReadWord();
    const std::vector<std::string_view> pieces = Split(word, 'x');
    if (!sized) {
      window.dimensions.resize(pieces.size());
      sized = true;
    } else if (pieces.size() != window.dimensions.size()) {
      return lexer.ErrorAt(value_offset, "window field '" + std::string(key) + "' has " +
                                             std::to_string(pieces.size()) + " dimensions, expected " +
                                             std::to_string(window.dimensions.size()));
    }
    if (key == "pad") {
      for (size_t i = 0; i < pieces.size(); ++i) {
        const std::vector<std::string_view> low_high = Split(pieces[i], '_');
        std::optional<int64_t> low, high;
        if (low_high.size() == 2) {
          low = ParseIntPiece(low_high[0]);
          high = ParseIntPiece(low_high[1]);
        }
        if (!low || !high) {
          return lexer.ErrorAt(value_offset, "expected window pad as LOW_HIGHxLOW_HIGH... but got '" +
                                                 std::string(word) + "'");
        }
        window.dimensions[i].padding_low = *low;
        window.dimensions[i].padding_high = *high;
      }
      continue;
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseXList(lexer, value_offset, word, key));
    for (size_t i = 0; i < values.size(); ++i) {
      WindowDimension& dim = window.dimensions[i];
      if (key == "size") {
        dim.size = values[i];
      } else if (key == "stride") {
        dim.stride = values[i];
      } else if (key == "lhs_dilate") {
        dim.base_dilation = values[i];
      } else if (key == "rhs_dilate") {
        dim.window_dilation = values[i];
      } else if (key == "rhs_reversal") {
        if (values[i] != 0 && values[i] != 1) {
          return lexer.ErrorAt(value_offset,
                               "rhs_reversal values must be 0 or 1, got '" + std::string(word) + "'");
        }
        dim.window_reversal = values[i] == 1;
      } else {
        return lexer.ErrorAt(key_offset, "unknown window field '" + std::string(key) + "'");
      }
    }
  }
  bool has_size = false;
  for (std::string_view key : seen) has_size = has_size || key == "size";
  if (sized && !has_size) return lexer.ErrorAt(start, "window needs a 'size' field");
  return window;
}

std::string PrintWindowText(const Window& window) {
  if (window.dimensions.empty()) return "{}";
  std::vector<int64_t> size, stride, base, dilation, reversal;
  std::string pad;
  bool has_stride = false, has_pad = false, has_base = false, has_dilation = false, has_reversal = false;
  for (size_t i = 0; i < window.dimensions.size(); ++i) {
    const WindowDimension& dim = window.dimensions[i];
    size.push_back(dim.size);
    stride.push_back(dim.stride);
    base.push_back(dim.base_dilation);
    dilation.push_back(dim.window_dilation);
    reversal.push_back(dim.window_reversal ? 1 : 0);
    if (i) pad += "x";
    pad += std::to_string(dim.padding_low);
    pad += '_';
    pad += std::to_string(dim.padding_high);
    has_stride = has_stride || dim.stride != 1;
    has_pad = has_pad || dim.padding_low != 0 || dim.padding_high != 0;
    has_base = has_base || dim.base_dilation != 1;
    has_dilation = has_dilation || dim.window_dilation != 1;
    has_reversal = has_reversal || dim.window_reversal;
  }
  std::string text = "{size=";
  text += JoinWithX(size);
  auto field = [&](bool present, const char* key, const std::string& value) {
    if (!present) return;
    text += ' ';
    text += key;
    text += '=';
    text += value;
  };
  field(has_stride, "stride", JoinWithX(stride));
  field(has_pad, "pad", pad);
  field(has_base, "lhs_dilate", JoinWithX(base));
  field(has_dilation, "rhs_dilate", JoinWithX(dilation));
  field(has_reversal, "rhs_reversal", JoinWithX(reversal));
  text += '}';
  return text;
}

StatusOr<ConvolutionDimensionNumbers> ParseDimLabelsText(HloLexer& lexer) {
  lexer.SkipSpace();
  const size_t offset = lexer.offset();
  const std::string_view word = lexer.ReadWord();
  const size_t underscore = word.find('_');
  const size_t arrow = word.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos || arrow < underscore) {
    return lexer.ErrorAt(offset,
                         "expected dim_labels like b01f_01io->b01f but got '" + std::string(word) + "'");
  }
  const std::string_view input = word.substr(0, underscore);
  const std::string_view kernel = word.substr(underscore + 1, arrow - underscore - 1);
  const std::string_view output = word.substr(arrow + 2);
  ConvolutionDimensionNumbers dnums;
  KILN_RETURN_IF_ERROR(ParseLabelPart(lexer, offset, input, 'b', 'f', dnums.input_batch_dimension,
                                      dnums.input_feature_dimension, dnums.input_spatial_dimensions));
  KILN_RETURN_IF_ERROR(ParseLabelPart(lexer, offset, kernel, 'i', 'o', dnums.kernel_input_feature_dimension,
                                      dnums.kernel_output_feature_dimension,
                                      dnums.kernel_spatial_dimensions));
  KILN_RETURN_IF_ERROR(ParseLabelPart(lexer, offset, output, 'b', 'f', dnums.output_batch_dimension,
                                      dnums.output_feature_dimension, dnums.output_spatial_dimensions));
  if (input.size() != kernel.size() || input.size() != output.size()) {
    return lexer.ErrorAt(offset, "dim_labels '" + std::string(word) +
                                     "' must give input, kernel and output the same number of dimensions");
  }
  return dnums;
}

std::string PrintDimLabelsText(const ConvolutionDimensionNumbers& d) {
  return PrintLabelPart('b', d.input_batch_dimension, 'f', d.input_feature_dimension,
                        d.input_spatial_dimensions) +
         "_" +
         PrintLabelPart('i', d.kernel_input_feature_dimension, 'o', d.kernel_output_feature_dimension,
                        d.kernel_spatial_dimensions) +
         "->" +
         PrintLabelPart('b', d.output_batch_dimension, 'f', d.output_feature_dimension,
                        d.output_spatial_dimensions);
}

StatusOr<std::vector<PaddingDimension>> ParsePaddingText(HloLexer& lexer) {
  lexer.SkipSpace();
  const size_t offset = lexer.offset();
  const std::string_view word = lexer.ReadWord();
  std::vector<PaddingDimension> padding;
  if (word.empty()) return padding;  // a rank-0 pad prints as `padding=`
  for (std::string_view piece : Split(word, 'x')) {
    const std::vector<std::string_view> parts = Split(piece, '_');
    std::vector<int64_t> values;
    for (std::string_view part : parts) {
      const std::optional<int64_t> value = ParseIntPiece(part);
      if (!value) break;
      values.push_back(*value);
    }
    if (values.size() != parts.size() || (values.size() != 2 && values.size() != 3)) {
      return lexer.ErrorAt(offset,
                           "expected padding as LOW_HIGH[_INTERIOR]x... but got '" + std::string(word) + "'");
    }
    padding.push_back({values[0], values[1], values.size() == 3 ? values[2] : 0});
  }
  return padding;
}

std::string PrintPaddingText(std::span<const PaddingDimension> padding) {
  bool has_interior = false;
  for (const PaddingDimension& dim : padding) has_interior = has_interior || dim.interior != 0;
  std::string text;
  for (size_t i = 0; i < padding.size(); ++i) {
    if (i) text += "x";
    text += std::to_string(padding[i].low);
    text += '_';
    text += std::to_string(padding[i].high);
    if (has_interior) {
      text += '_';
      text += std::to_string(padding[i].interior);
    }
  }
  return text;
}

StatusOr<SliceBounds> ParseSliceText(HloLexer& lexer) {
  if (!lexer.TryConsume('{')) return lexer.Expected("'{' starting the slice bounds");
  SliceBounds bounds;
  if (lexer.TryConsume('}')) return bounds;
  while (true) {
    if (!lexer.TryConsume('[')) return lexer.Expected("'[' starting a slice bound [start:limit:stride]");
    KILN_ASSIGN_OR_RETURN(int64_t start, ParseInt64Text(lexer));
    if (!lexer.TryConsume(':')) return lexer.Expected("':' in the slice bound");
    KILN_ASSIGN_OR_RETURN(int64_t limit, ParseInt64Text(lexer));
    int64_t stride = 1;
    if (lexer.TryConsume(':')) {
      KILN_ASSIGN_OR_RETURN(stride, ParseInt64Text(lexer));
    }
    if (!lexer.TryConsume(']')) return lexer.Expected("']' closing the slice bound");
    bounds.starts.push_back(start);
    bounds.limits.push_back(limit);
    bounds.strides.push_back(stride);
    if (lexer.TryConsume('}')) return bounds;
    if (!lexer.TryConsume(',')) return lexer.Expected("',' or '}' in the slice bounds");
  }
}

std::string PrintSliceText(const SliceBounds& bounds) {
  std::string text = "{";
  for (size_t i = 0; i < bounds.starts.size(); ++i) {
    if (i) text += ", ";
    text += '[';
    text += std::to_string(bounds.starts[i]);
    text += ':';
    text += std::to_string(i < bounds.limits.size() ? bounds.limits[i] : 0);
    const int64_t stride = i < bounds.strides.size() ? bounds.strides[i] : 1;
    if (stride != 1) {
      text += ':';
      text += std::to_string(stride);
    }
    text += ']';
  }
  return text + "}";
}

namespace {
constexpr std::array<std::pair<ComparisonDirection, std::string_view>, 6> kDirections = {{
    {ComparisonDirection::kEq, "EQ"},
    {ComparisonDirection::kNe, "NE"},
    {ComparisonDirection::kGe, "GE"},
    {ComparisonDirection::kGt, "GT"},
    {ComparisonDirection::kLe, "LE"},
    {ComparisonDirection::kLt, "LT"},
}};
constexpr std::array<std::pair<ComparisonType, std::string_view>, 4> kComparisonTypes = {{
    {ComparisonType::kFloat, "FLOAT"},
    {ComparisonType::kTotalOrder, "TOTALORDER"},
    {ComparisonType::kSigned, "SIGNED"},
    {ComparisonType::kUnsigned, "UNSIGNED"},
}};
constexpr std::array<std::pair<RngDistribution, std::string_view>, 2> kDistributions = {{
    {RngDistribution::kUniform, "rng_uniform"},
    {RngDistribution::kNormal, "rng_normal"},
}};
constexpr std::array<std::pair<RngAlgorithm, std::string_view>, 3> kAlgorithms = {{
    {RngAlgorithm::kDefault, "rng_default"},
    {RngAlgorithm::kThreeFry, "rng_three_fry"},
    {RngAlgorithm::kPhilox, "rng_philox"},
}};

constexpr std::array<std::pair<FusionKind, std::string_view>, 3> kFusionKinds = {{
    {FusionKind::kLoop, "kLoop"},
    {FusionKind::kInput, "kInput"},
    {FusionKind::kOutput, "kOutput"},
}};

constexpr std::array<std::pair<OperandPrecision, std::string_view>, 3> kOperandPrecisions = {{
    {OperandPrecision::kDefault, "default"},
    {OperandPrecision::kHigh, "high"},
    {OperandPrecision::kHighest, "highest"},
}};

constexpr std::array<std::pair<FftType, std::string_view>, 4> kFftTypes = {{
    {FftType::kFft, "FFT"},
    {FftType::kIfft, "IFFT"},
    {FftType::kRfft, "RFFT"},
    {FftType::kIrfft, "IRFFT"},
}};

template <typename Enum, size_t N>
std::optional<Enum> FindByName(const std::array<std::pair<Enum, std::string_view>, N>& table,
                               std::string_view name) {
  for (const auto& [value, spelling] : table) {
    if (spelling == name) return value;
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
std::string_view FindName(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [candidate, spelling] : table) {
    if (candidate == value) return spelling;
  }
  return "";
}
}  // namespace

std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name) {
  return FindByName(kDirections, name);
}
std::string_view ComparisonDirectionName(ComparisonDirection direction) {
  return FindName(kDirections, direction);
}
std::optional<ComparisonType> ComparisonTypeFromName(std::string_view name) {
  return FindByName(kComparisonTypes, name);
}
std::string_view ComparisonTypeName(ComparisonType type) { return FindName(kComparisonTypes, type); }
std::optional<RngDistribution> RngDistributionFromName(std::string_view name) {
  return FindByName(kDistributions, name);
}
std::string_view RngDistributionName(RngDistribution distribution) {
  return FindName(kDistributions, distribution);
}
std::optional<RngAlgorithm> RngAlgorithmFromName(std::string_view name) {
  return FindByName(kAlgorithms, name);
}
std::string_view RngAlgorithmName(RngAlgorithm algorithm) { return FindName(kAlgorithms, algorithm); }
std::optional<FusionKind> FusionKindFromName(std::string_view name) { return FindByName(kFusionKinds, name); }
std::string_view FusionKindName(FusionKind kind) { return FindName(kFusionKinds, kind); }

std::optional<FftType> FftTypeFromName(std::string_view name) { return FindByName(kFftTypes, name); }
std::string_view FftTypeName(FftType type) { return FindName(kFftTypes, type); }

std::optional<OperandPrecision> OperandPrecisionFromName(std::string_view name) {
  return FindByName(kOperandPrecisions, name);
}
std::string_view OperandPrecisionName(OperandPrecision precision) {
  return FindName(kOperandPrecisions, precision);
}

StatusOr<std::vector<OperandPrecision>> ParseOperandPrecisionText(HloLexer& lexer) {
  if (!lexer.TryConsume('{')) return lexer.Expected("'{' starting operand_precision");
  std::vector<OperandPrecision> precisions;
  if (lexer.TryConsume('}')) return precisions;
  while (true) {
    lexer.SkipSpace();
    const size_t offset = lexer.offset();
    const std::string_view word = lexer.ReadName();
    const std::optional<OperandPrecision> precision = OperandPrecisionFromName(word);
    if (!precision) {
      return lexer.ErrorAt(
          offset, "unknown operand precision '" + std::string(word) + "'; expected default, high or highest");
    }
    precisions.push_back(*precision);
    if (lexer.TryConsume('}')) return precisions;
    if (!lexer.TryConsume(',')) return lexer.Expected("',' or '}' in operand_precision");
  }
}

std::string PrintOperandPrecisionText(std::span<const OperandPrecision> precisions) {
  std::string text = "{";
  for (size_t i = 0; i < precisions.size(); ++i) {
    if (i > 0) text += ",";
    text += OperandPrecisionName(precisions[i]);
  }
  return text + "}";
}

std::string QuoteString(std::string_view value) {
  static const char kHex[] = "0123456789abcdef";
  std::string text = "\"";
  for (char c : value) {
    switch (c) {
      case '"': text += "\\\""; break;
      case '\\': text += "\\\\"; break;
      case '\n': text += "\\n"; break;
      case '\t': text += "\\t"; break;
      case '\r': text += "\\r"; break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
          text += "\\x";
          text += kHex[byte >> 4];
          text += kHex[byte & 15];
        } else {
          text.push_back(c);
        }
      }
    }
  }
  return text + "\"";
}

std::span<const std::string_view> AttributeNamesOf(Opcode opcode) {
  static constexpr std::string_view kDimensions[] = {"dimensions"};
  static constexpr std::string_view kDimensionsToApply[] = {"dimensions", "to_apply"};
  static constexpr std::string_view kSort[] = {"dimensions", "is_stable", "to_apply"};
  static constexpr std::string_view kTopK[] = {"k", "largest"};
  static constexpr std::string_view kFft[] = {"fft_type", "fft_length"};
  static constexpr std::string_view kCall[] = {"to_apply", "calls"};
  static constexpr std::string_view kFusion[] = {"kind", "calls"};
  static constexpr std::string_view kWhile[] = {"condition", "body"};
  static constexpr std::string_view kConditional[] = {"true_computation", "false_computation",
                                                      "branch_computations"};
  static constexpr std::string_view kReduceWindow[] = {"window", "to_apply"};
  static constexpr std::string_view kSelectAndScatter[] = {"window", "select", "scatter"};
  static constexpr std::string_view kConvolution[] = {"window", "dim_labels", "feature_group_count",
                                                      "batch_group_count", "operand_precision"};
  static constexpr std::string_view kDot[] = {"lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
                                              "rhs_contracting_dims", "operand_precision"};
  static constexpr std::string_view kSlice[] = {"slice"};
  static constexpr std::string_view kDynamicSlice[] = {"dynamic_slice_sizes"};
  static constexpr std::string_view kPad[] = {"padding"};
  static constexpr std::string_view kCompare[] = {"direction", "type"};
  static constexpr std::string_view kIota[] = {"iota_dimension"};
  static constexpr std::string_view kGetTupleElement[] = {"index"};
  static constexpr std::string_view kGather[] = {
      "offset_dims",           "collapsed_slice_dims",        "start_index_map",
      "operand_batching_dims", "start_indices_batching_dims", "index_vector_dim",
      "slice_sizes",           "indices_are_sorted"};
  static constexpr std::string_view kScatter[] = {"update_window_dims",
                                                  "inserted_window_dims",
                                                  "scatter_dims_to_operand_dims",
                                                  "input_batching_dims",
                                                  "scatter_indices_batching_dims",
                                                  "index_vector_dim",
                                                  "indices_are_sorted",
                                                  "unique_indices",
                                                  "to_apply"};
  static constexpr std::string_view kBatchNorm[] = {"epsilon", "feature_index"};
  static constexpr std::string_view kReducePrecision[] = {"exponent_bits", "mantissa_bits"};
  static constexpr std::string_view kRng[] = {"distribution"};
  static constexpr std::string_view kRngBitGenerator[] = {"algorithm"};
  static constexpr std::string_view kCustomCall[] = {"custom_call_target", "custom_call_has_side_effect",
                                                     "backend_config"};
  static constexpr std::string_view kInfeed[] = {"infeed_config"};
  static constexpr std::string_view kOutfeed[] = {"outfeed_config"};
  static constexpr std::string_view kChannel[] = {"channel_id"};
  static constexpr std::string_view kAllReduce[] = {"channel_id", "to_apply"};
  switch (opcode) {
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize: return kDimensions;
    case Opcode::kReduce:
    case Opcode::kMap: return kDimensionsToApply;
    case Opcode::kSort: return kSort;
    case Opcode::kTopK: return kTopK;
    case Opcode::kFft: return kFft;
    case Opcode::kCall: return kCall;
    case Opcode::kFusion: return kFusion;
    case Opcode::kWhile: return kWhile;
    case Opcode::kConditional: return kConditional;
    case Opcode::kReduceWindow: return kReduceWindow;
    case Opcode::kSelectAndScatter: return kSelectAndScatter;
    case Opcode::kConvolution: return kConvolution;
    case Opcode::kDot: return kDot;
    case Opcode::kSlice: return kSlice;
    case Opcode::kDynamicSlice: return kDynamicSlice;
    case Opcode::kPad: return kPad;
    case Opcode::kCompare: return kCompare;
    case Opcode::kIota: return kIota;
    case Opcode::kGetTupleElement: return kGetTupleElement;
    case Opcode::kGather: return kGather;
    case Opcode::kScatter: return kScatter;
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining: return kBatchNorm;
    case Opcode::kReducePrecision: return kReducePrecision;
    case Opcode::kRng: return kRng;
    case Opcode::kRngBitGenerator: return kRngBitGenerator;
    case Opcode::kCustomCall: return kCustomCall;
    case Opcode::kInfeed: return kInfeed;
    case Opcode::kOutfeed: return kOutfeed;
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone: return kChannel;
    case Opcode::kAllReduce: return kAllReduce;
    default: return {};
  }
}

bool IsIgnoredAttribute(Opcode opcode, std::string_view name) {
  static constexpr std::string_view kAnywhere[] = {"metadata",
                                                   "sharding",
                                                   "frontend_attributes",
                                                   "backend_config",
                                                   "origin",
                                                   "statistics",
                                                   "control-predecessors",
                                                   "operand_precision",
                                                   "precision_config",
                                                   "result_accuracy",
                                                   "schedule",
                                                   "raw_backend_config",
                                                   "parameter_replication"};
  for (std::string_view ignored : kAnywhere) {
    if (name == ignored) return true;
  }
  switch (opcode) {
    case Opcode::kDot:
    case Opcode::kConvolution: return name == "algorithm";
    case Opcode::kCustomCall:
      return name == "api_version" || name == "operand_layout_constraints" ||
             name == "output_to_operand_aliasing" || name == "custom_call_schedule" ||
             name == "called_computations" || name == "literal";
    case Opcode::kOutfeed: return name == "outfeed_shape";
    case Opcode::kFusion: return name == "output_to_operand_aliasing";
    // lax.composite: the called computation is the decomposition, which is
    // what XLA runs too (the composite's name and attributes ride in
    // frontend_attributes).
    case Opcode::kCall: return name == "is_composite";
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone: return name == "is_host_transfer";
    case Opcode::kAllReduce:
      return name == "replica_groups" || name == "use_global_device_ids" || name == "constrain_layout";
    default: return false;
  }
}

}  // namespace kiln
