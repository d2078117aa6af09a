// Shape inference of the linear maps over dimensions: the contractions dot
// (general dimension numbers) and convolution (dimension numbers, windows,
// dilations, group counts), and the discrete Fourier transforms of fft.
#include <set>

#include "core/shape_inference_internal.h"

namespace kiln::shape_inference_internal {
namespace {

Status ExpectSameElementType(const OpRequest& request, const Shape& lhs, const Shape& rhs) {
  if (lhs.element_type() != rhs.element_type()) {
    return OpError(request, "lhs ", lhs.ToString(), " and rhs ", rhs.ToString(),
                   " must have the same element type");
  }
  if (lhs.element_type() == ElementType::kPred) {
    return OpError(request, "operands ", lhs.ToString(), " and ", rhs.ToString(), " must be numeric");
  }
  return OkStatus();
}

StatusOr<Shape> InferDot(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& lhs = request.operands[0];
  const Shape& rhs = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, lhs, "lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, rhs, "rhs"));
  KILN_RETURN_IF_ERROR(ExpectSameElementType(request, lhs, rhs));
  const DotDimensionNumbers& dn = request.attrs.dot;
  if (dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size() ||
      dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) {
    return OpError(request, "lhs and rhs must list as many contracting dimensions (",
                   DimsToString(dn.lhs_contracting_dimensions), " vs ",
                   DimsToString(dn.rhs_contracting_dimensions), ") and batch dimensions (",
                   DimsToString(dn.lhs_batch_dimensions), " vs ", DimsToString(dn.rhs_batch_dimensions), ")");
  }
  std::vector<int64_t> lhs_used = dn.lhs_batch_dimensions;
  lhs_used.insert(lhs_used.end(), dn.lhs_contracting_dimensions.begin(), dn.lhs_contracting_dimensions.end());
  std::vector<int64_t> rhs_used = dn.rhs_batch_dimensions;
  rhs_used.insert(rhs_used.end(), dn.rhs_contracting_dimensions.begin(), dn.rhs_contracting_dimensions.end());
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, lhs_used, lhs.rank(), "lhs batch+contracting dimensions"));
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, rhs_used, rhs.rank(), "rhs batch+contracting dimensions"));
  for (size_t i = 0; i < lhs_used.size(); ++i) {
    if (lhs.dimensions(lhs_used[i]) != rhs.dimensions(rhs_used[i])) {
      return OpError(request, "lhs ", lhs.ToString(), " dimension ", lhs_used[i], " and rhs ", rhs.ToString(),
                     " dimension ", rhs_used[i], " are paired (batch or contracting) but differ in size");
    }
  }
  std::vector<int64_t> dims;
  for (int64_t d : dn.lhs_batch_dimensions) dims.push_back(lhs.dimensions(d));
  const std::set<int64_t> lhs_set(lhs_used.begin(), lhs_used.end());
  const std::set<int64_t> rhs_set(rhs_used.begin(), rhs_used.end());
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!lhs_set.count(d)) dims.push_back(lhs.dimensions(d));
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!rhs_set.count(d)) dims.push_back(rhs.dimensions(d));
  }
  return Shape(lhs.element_type(), dims);
}

StatusOr<Shape> InferConvolution(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 2));
  const Shape& lhs = request.operands[0];
  const Shape& rhs = request.operands[1];
  KILN_RETURN_IF_ERROR(ExpectArray(request, lhs, "input"));
  KILN_RETURN_IF_ERROR(ExpectArray(request, rhs, "kernel"));
  KILN_RETURN_IF_ERROR(ExpectSameElementType(request, lhs, rhs));
  const ConvolutionDimensionNumbers& dn = request.attrs.conv;
  const size_t spatial = dn.input_spatial_dimensions.size();
  const auto rank = static_cast<int64_t>(spatial + 2);
  if (lhs.rank() != rank || rhs.rank() != rank || dn.kernel_spatial_dimensions.size() != spatial ||
      dn.output_spatial_dimensions.size() != spatial) {
    return OpError(request, "input ", lhs.ToString(), " and kernel ", rhs.ToString(), " must have rank ",
                   rank, " for ", spatial, " spatial dimensions, and the dimension numbers must list ",
                   spatial, " spatial dimensions for input, kernel and output");
  }
  if (request.attrs.window->dimensions.size() != spatial) {
    return OpError(request, "window has ", request.attrs.window->dimensions.size(),
                   " dimensions; expected one per spatial dimension (", spatial, ")");
  }
  std::vector<int64_t> input_dims = {dn.input_batch_dimension, dn.input_feature_dimension};
  input_dims.insert(input_dims.end(), dn.input_spatial_dimensions.begin(), dn.input_spatial_dimensions.end());
  std::vector<int64_t> kernel_dims = {dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension};
  kernel_dims.insert(kernel_dims.end(), dn.kernel_spatial_dimensions.begin(),
                     dn.kernel_spatial_dimensions.end());
  std::vector<int64_t> output_dims = {dn.output_batch_dimension, dn.output_feature_dimension};
  output_dims.insert(output_dims.end(), dn.output_spatial_dimensions.begin(),
                     dn.output_spatial_dimensions.end());
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, input_dims, rank, "input dimension numbers"));
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, kernel_dims, rank, "kernel dimension numbers"));
  KILN_RETURN_IF_ERROR(CheckDimensionList(request, output_dims, rank, "output dimension numbers"));

  const int64_t fgc = request.attrs.feature_group_count;
  const int64_t bgc = request.attrs.batch_group_count;
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1)) {
    return OpError(request, "feature_group_count=", fgc, " batch_group_count=", bgc,
                   "; expected both >= 1 and at most one of them > 1");
  }
  const int64_t batch = lhs.dimensions(dn.input_batch_dimension);
  const int64_t in_features = lhs.dimensions(dn.input_feature_dimension);
  const int64_t kernel_in = rhs.dimensions(dn.kernel_input_feature_dimension);
  const int64_t kernel_out = rhs.dimensions(dn.kernel_output_feature_dimension);
  if (in_features % fgc != 0 || in_features / fgc != kernel_in) {
    return OpError(request, "input ", lhs.ToString(), " has ", in_features,
                   " features; with feature_group_count ", fgc, " the kernel ", rhs.ToString(), " must have ",
                   in_features / fgc, " input features but has ", kernel_in);
  }
  if (kernel_out % fgc != 0 || kernel_out % bgc != 0) {
    return OpError(request, "kernel output features ", kernel_out,
                   " must be divisible by feature_group_count ", fgc, " and batch_group_count ", bgc);
  }
  if (batch % bgc != 0) {
    return OpError(request, "input batch ", batch, " must be divisible by batch_group_count ", bgc);
  }
  std::vector<int64_t> base;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kernel_size = rhs.dimensions(dn.kernel_spatial_dimensions[i]);
    if (request.attrs.window->dimensions[i].size != kernel_size) {
      return OpError(request, "window size ", request.attrs.window->dimensions[i].size,
                     " of spatial dimension ", i, " must equal the kernel's size ", kernel_size, " (kernel ",
                     rhs.ToString(), ")");
    }
    base.push_back(lhs.dimensions(dn.input_spatial_dimensions[i]));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> spatial_out,
                        InferWindowOutputDims(request, base, request.attrs.window));
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  dims[static_cast<size_t>(dn.output_batch_dimension)] = batch / bgc;
  dims[static_cast<size_t>(dn.output_feature_dimension)] = kernel_out;
  for (size_t i = 0; i < spatial; ++i)
    dims[static_cast<size_t>(dn.output_spatial_dimensions[i])] = spatial_out[i];
  return Shape(lhs.element_type(), dims);
}

}  // namespace

StatusOr<Shape> InferContraction(const OpRequest& request) {
  KILN_ASSIGN_OR_RETURN(Shape inferred,
                        request.opcode == Opcode::kDot ? InferDot(request) : InferConvolution(request));
  // preferred_element_type: the result may be declared wider (s8 x s8 -> s32,
  // bf16 x bf16 -> f32) or narrower than the operands; only the dims are implied.
  const Shape* declared = request.declared;
  if (declared != nullptr && declared->IsArray() && declared->element_type() != inferred.element_type() &&
      declared->element_type() != ElementType::kPred &&
      IsComplex(declared->element_type()) == IsComplex(inferred.element_type())) {
    inferred.set_element_type(declared->element_type());
  }
  return inferred;
}

StatusOr<Shape> InferFft(const OpRequest& request) {
  KILN_RETURN_IF_ERROR(ExpectOperandCount(request, 1));
  const Shape& operand = request.operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(request, operand, "operand"));
  const FftType type = request.attrs.fft_type;
  const std::vector<int64_t>& lengths = request.attrs.fft_length;
  const std::string lengths_text = DimsToString(lengths);
  const std::string_view type_name = type == FftType::kFft    ? "FFT"
                                     : type == FftType::kIfft ? "IFFT"
                                     : type == FftType::kRfft ? "RFFT"
                                                              : "IRFFT";
  const auto fft_rank = static_cast<int64_t>(lengths.size());
  if (fft_rank < 1 || fft_rank > 3) {
    return OpError(request, "fft_length=", lengths_text, " lists ", fft_rank,
                   " lengths; an fft transforms 1 to 3 trailing dimensions");
  }
  for (int64_t length : lengths) {
    if (length < 0) return OpError(request, "fft_length=", lengths_text, " has a negative length");
  }
  const ElementType element = operand.element_type();
  const bool real_input = type == FftType::kRfft;
  if (real_input ? element != ElementType::kF32 && element != ElementType::kF64 : !IsComplex(element)) {
    return OpError(request, type_name, " needs ", real_input ? "an f32 or f64" : "a complex (c64 or c128)",
                   " operand but got ", operand.ToString());
  }
  if (operand.rank() < fft_rank) {
    return OpError(request, "fft_length=", lengths_text, " transforms ", fft_rank,
                   " trailing dimensions but the operand ", operand.ToString(), " has rank ", operand.rank());
  }
  const int64_t first = operand.rank() - fft_rank;
  // IRFFT's last operand dimension is a half spectrum; the others match.
  const int64_t matched = type == FftType::kIrfft ? fft_rank - 1 : fft_rank;
  for (int64_t i = 0; i < matched; ++i) {
    if (operand.dimensions(first + i) != lengths[static_cast<size_t>(i)]) {
      return OpError(request, type_name, " operand ", operand.ToString(), " dimension ", first + i, " is ",
                     operand.dimensions(first + i), " but fft_length=", lengths_text, " needs ",
                     lengths[static_cast<size_t>(i)], " (the trailing dimensions must match fft_length)");
    }
  }
  const int64_t last = operand.rank() - 1;
  const int64_t last_length = lengths.back();
  Shape result = operand;
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft: return result;
    case FftType::kRfft:
      result.set_element_type(element == ElementType::kF32 ? ElementType::kC64 : ElementType::kC128);
      // XLA keeps a zero-sized dimension zero-sized.
      if (last_length != 0) result.mutable_dimensions()[static_cast<size_t>(last)] = last_length / 2 + 1;
      return result;
    case FftType::kIrfft: {
      const int64_t half = last_length / 2 + 1;
      if (operand.dimensions(last) != half && !(operand.dimensions(last) == 0 && last_length == 0)) {
        return OpError(request, "IRFFT operand ", operand.ToString(), " dimension ", last, " is ",
                       operand.dimensions(last), " but fft_length=", lengths_text, " needs ", last_length,
                       "/2+1 = ", half, " (the half spectrum of ", last_length, " real values)");
      }
      result.set_element_type(ComplexComponentType(element));
      result.mutable_dimensions()[static_cast<size_t>(last)] = last_length;
      return result;
    }
  }
  return OpError(request, "unknown fft_type ", static_cast<int>(type));
}

}  // namespace kiln::shape_inference_internal
