// The value syntaxes of HLO instruction attributes, shared by the parser and
// the printer so both agree on one spelling: `{1,2}`, `window={size=3x3
// pad=1_1x0_1}`, `dim_labels=b01f_01io->b01f`, `padding=0_1_2x3_4_0`,
// `slice={[0:4:2], [1:3]}`, `direction=LT`, `type=TOTALORDER`, rng enums,
// `fft_type=RFFT`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/attributes.h"
#include "core/hlo_lexer.h"
#include "core/opcode.h"
#include "core/status.h"

namespace kiln {

StatusOr<int64_t> ParseInt64Text(HloLexer& lexer);
StatusOr<bool> ParseBoolText(HloLexer& lexer);
StatusOr<std::vector<int64_t>> ParseIntListText(HloLexer& lexer);  // {1,2,3}
std::string PrintIntListText(std::span<const int64_t> values);

StatusOr<Window> ParseWindowText(HloLexer& lexer);  // {size=.. stride=.. ...}
std::string PrintWindowText(const Window& window);

StatusOr<ConvolutionDimensionNumbers> ParseDimLabelsText(HloLexer& lexer);
std::string PrintDimLabelsText(const ConvolutionDimensionNumbers& dnums);

StatusOr<std::vector<PaddingDimension>> ParsePaddingText(HloLexer& lexer);
std::string PrintPaddingText(std::span<const PaddingDimension> padding);

struct SliceBounds {
  std::vector<int64_t> starts, limits, strides;
};
StatusOr<SliceBounds> ParseSliceText(HloLexer& lexer);
std::string PrintSliceText(const SliceBounds& bounds);

std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name);
std::string_view ComparisonDirectionName(ComparisonDirection direction);
std::optional<ComparisonType> ComparisonTypeFromName(std::string_view name);
std::string_view ComparisonTypeName(ComparisonType type);  // "" for kDefault
std::optional<RngDistribution> RngDistributionFromName(std::string_view name);
std::string_view RngDistributionName(RngDistribution distribution);
std::optional<RngAlgorithm> RngAlgorithmFromName(std::string_view name);
std::string_view RngAlgorithmName(RngAlgorithm algorithm);
std::optional<FusionKind> FusionKindFromName(std::string_view name);  // "kLoop", "kInput", "kOutput"
std::optional<OperandPrecision> OperandPrecisionFromName(
    std::string_view name);  // "default", "high", "highest"
std::string_view OperandPrecisionName(OperandPrecision precision);

// operand_precision={default,highest}
StatusOr<std::vector<OperandPrecision>> ParseOperandPrecisionText(HloLexer& lexer);
std::string PrintOperandPrecisionText(std::span<const OperandPrecision> precisions);
std::string_view FusionKindName(FusionKind kind);
// fft_type=FFT, IFFT, RFFT or IRFFT.
std::optional<FftType> FftTypeFromName(std::string_view name);
std::string_view FftTypeName(FftType type);

// C-escaped and double-quoted, as XLA prints strings.
std::string QuoteString(std::string_view value);

// The semantic attribute names an opcode accepts (those Kiln stores);
// anything else must be in IsIgnoredAttribute or is an error.
std::span<const std::string_view> AttributeNamesOf(Opcode opcode);
// Attributes with no meaning for Kiln that XLA or JAX print (metadata,
// sharding...): their values are read and dropped.
bool IsIgnoredAttribute(Opcode opcode, std::string_view name);

}  // namespace kiln
