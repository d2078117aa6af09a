// Dot, convolution and fft ops.
#include "capi/builder_internal.h"

using kiln::Op;
using kiln::capi::BuildOp;
using kiln::capi::OpContext;
using kiln::capi::ValidPadding;

namespace {

std::vector<int64_t> Spatial(OpContext& c, const int64_t* values, size_t count, const char* name) {
  std::span<const int64_t> list = c.ints(values, count, name);
  return std::vector<int64_t>(list.begin(), list.end());
}

// Converts C conv dimension numbers; on a problem the error is recorded in `c`.
kiln::ConvolutionDimensionNumbers ConvNumbers(OpContext& c, const kiln_conv_dimension_numbers_t* given) {
  kiln::ConvolutionDimensionNumbers result;
  std::optional<kiln_conv_dimension_numbers_t> whole = c.read_struct(given, "dimension_numbers");
  if (!whole) return result;
  const kiln_conv_dimension_numbers_t* dn = &*whole;
  result.input_batch_dimension = dn->input_batch_dimension;
  result.input_feature_dimension = dn->input_feature_dimension;
  result.input_spatial_dimensions =
      Spatial(c, dn->input_spatial_dimensions, dn->num_spatial_dimensions, "input_spatial_dimensions");
  result.kernel_input_feature_dimension = dn->kernel_input_feature_dimension;
  result.kernel_output_feature_dimension = dn->kernel_output_feature_dimension;
  result.kernel_spatial_dimensions =
      Spatial(c, dn->kernel_spatial_dimensions, dn->num_spatial_dimensions, "kernel_spatial_dimensions");
  result.output_batch_dimension = dn->output_batch_dimension;
  result.output_feature_dimension = dn->output_feature_dimension;
  result.output_spatial_dimensions =
      Spatial(c, dn->output_spatial_dimensions, dn->num_spatial_dimensions, "output_spatial_dimensions");
  return result;
}

}  // namespace

extern "C" {

kiln_op_t kiln_op_dot(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    if (!c.ok()) return Op();
    return c.builder().Dot(l, r);
  });
}

kiln_op_t kiln_op_dot_general(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const kiln_dot_dimension_numbers_t* dimension_numbers) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    if (!c.ok()) return Op();
    std::optional<kiln_dot_dimension_numbers_t> whole = c.read_struct(dimension_numbers, "dimension_numbers");
    if (!whole) return Op();
    const kiln_dot_dimension_numbers_t* dn = &*whole;
    kiln::DotDimensionNumbers numbers;
    numbers.lhs_contracting_dimensions = Spatial(
        c, dn->lhs_contracting_dimensions, dn->num_lhs_contracting_dimensions, "lhs_contracting_dimensions");
    numbers.rhs_contracting_dimensions = Spatial(
        c, dn->rhs_contracting_dimensions, dn->num_rhs_contracting_dimensions, "rhs_contracting_dimensions");
    numbers.lhs_batch_dimensions =
        Spatial(c, dn->lhs_batch_dimensions, dn->num_lhs_batch_dimensions, "lhs_batch_dimensions");
    numbers.rhs_batch_dimensions =
        Spatial(c, dn->rhs_batch_dimensions, dn->num_rhs_batch_dimensions, "rhs_batch_dimensions");
    if (!c.ok()) return Op();
    return c.builder().DotGeneral(l, r, numbers);
  });
}

static_assert(KILN_FFT_FFT == static_cast<int>(kiln::FftType::kFft) &&
              KILN_FFT_IFFT == static_cast<int>(kiln::FftType::kIfft) &&
              KILN_FFT_RFFT == static_cast<int>(kiln::FftType::kRfft) &&
              KILN_FFT_IRFFT == static_cast<int>(kiln::FftType::kIrfft));

kiln_op_t kiln_op_fft(kiln_builder_t* builder, kiln_op_t operand, kiln_fft_type_t fft_type,
                      const int64_t* fft_length, size_t num_fft_length) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    std::span<const int64_t> lengths = c.ints(fft_length, num_fft_length, "fft_length");
    if (fft_type < KILN_FFT_FFT || fft_type > KILN_FFT_IRFFT) {
      c.Fail(kiln::InvalidArgument(c.function(), ": fft_type ", fft_type, " is not a KILN_FFT_* value"));
    }
    if (!c.ok()) return Op();
    return c.builder().Fft(x, static_cast<kiln::FftType>(fft_type), lengths);
  });
}

static_assert(KILN_PRECISION_DEFAULT == static_cast<int>(kiln::OperandPrecision::kDefault) &&
              KILN_PRECISION_HIGH == static_cast<int>(kiln::OperandPrecision::kHigh) &&
              KILN_PRECISION_HIGHEST == static_cast<int>(kiln::OperandPrecision::kHighest));

kiln_op_t kiln_op_set_precision(kiln_builder_t* builder, kiln_op_t op, kiln_precision_t lhs_precision,
                                kiln_precision_t rhs_precision) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op target = c.op(op, "op");
    auto precision = [&](kiln_precision_t value, const char* name) {
      if (value < KILN_PRECISION_DEFAULT || value > KILN_PRECISION_HIGHEST) {
        c.Fail(kiln::InvalidArgument(c.function(), ": ", name, " is ", value,
                                     "; expected KILN_PRECISION_DEFAULT, _HIGH or _HIGHEST (0..2)"));
      }
      return static_cast<kiln::OperandPrecision>(value);
    };
    const kiln::OperandPrecision lhs = precision(lhs_precision, "lhs_precision");
    const kiln::OperandPrecision rhs = precision(rhs_precision, "rhs_precision");
    if (!c.ok()) return Op();
    return c.builder().SetOperandPrecision(target, lhs, rhs);
  });
}

kiln_op_t kiln_op_conv(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs, const int64_t* window_strides,
                       size_t num_spatial, kiln_padding_t padding) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    std::vector<int64_t> strides = c.ints_or(window_strides, num_spatial, 1);
    if (!c.ok() || !ValidPadding(c, padding)) return Op();
    return c.builder().Conv(l, r, strides, static_cast<kiln::Padding>(padding));
  });
}

kiln_op_t kiln_op_conv_with_general_padding(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                            const int64_t* window_strides, const int64_t* padding_low,
                                            const int64_t* padding_high, size_t num_spatial) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    std::vector<int64_t> strides = c.ints_or(window_strides, num_spatial, 1);
    std::vector<std::pair<int64_t, int64_t>> pads = c.padding(padding_low, padding_high, num_spatial);
    if (!c.ok()) return Op();
    return c.builder().ConvWithGeneralPadding(l, r, strides, pads);
  });
}

kiln_op_t kiln_op_conv_with_general_dimensions(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                               const int64_t* window_strides, size_t num_spatial,
                                               kiln_padding_t padding,
                                               const kiln_conv_dimension_numbers_t* dimension_numbers) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    std::vector<int64_t> strides = c.ints_or(window_strides, num_spatial, 1);
    kiln::ConvolutionDimensionNumbers numbers = ConvNumbers(c, dimension_numbers);
    if (!c.ok() || !ValidPadding(c, padding)) return Op();
    return c.builder().ConvWithGeneralDimensions(l, r, strides, static_cast<kiln::Padding>(padding), numbers);
  });
}

kiln_op_t kiln_op_conv_general(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* window_strides, const int64_t* padding_low,
                               const int64_t* padding_high, size_t num_spatial,
                               const kiln_conv_dimension_numbers_t* dimension_numbers) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    std::vector<int64_t> strides = c.ints_or(window_strides, num_spatial, 1);
    std::vector<std::pair<int64_t, int64_t>> pads = c.padding(padding_low, padding_high, num_spatial);
    kiln::ConvolutionDimensionNumbers numbers = ConvNumbers(c, dimension_numbers);
    if (!c.ok()) return Op();
    return c.builder().ConvGeneral(l, r, strides, pads, numbers);
  });
}

kiln_op_t kiln_op_conv_general_dilated(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                       const int64_t* window_strides, const int64_t* padding_low,
                                       const int64_t* padding_high, const int64_t* lhs_dilation,
                                       const int64_t* rhs_dilation, size_t num_spatial,
                                       const kiln_conv_dimension_numbers_t* dimension_numbers,
                                       int64_t feature_group_count, int64_t batch_group_count) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    std::vector<int64_t> strides = c.ints_or(window_strides, num_spatial, 1);
    std::vector<std::pair<int64_t, int64_t>> pads = c.padding(padding_low, padding_high, num_spatial);
    std::vector<int64_t> lhs_dil = c.ints_or(lhs_dilation, num_spatial, 1);
    std::vector<int64_t> rhs_dil = c.ints_or(rhs_dilation, num_spatial, 1);
    kiln::ConvolutionDimensionNumbers numbers = ConvNumbers(c, dimension_numbers);
    if (!c.ok()) return Op();
    return c.builder().ConvGeneralDilated(l, r, strides, pads, lhs_dil, rhs_dil, numbers, feature_group_count,
                                          batch_group_count);
  });
}

}  // extern "C"
