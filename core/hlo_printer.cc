// IR -> XLA HLO text. Names print without '%' (the short form JAX emits);
// attributes print in XLA's spelling and order, defaults omitted where XLA
// omits them. Every spelling here is one the parser reads back.
#include "core/hlo_printer.h"

#include "core/hlo_attribute_text.h"
#include "core/hlo_literal_text.h"
#include "core/hlo_shape_text.h"
#include "core/pointer_map.h"

namespace kiln {
namespace {

// Appends ", key=value" attributes to a line being printed.
class AttributeList {
 public:
  explicit AttributeList(std::string& text) : text_(text) {}
  void Add(std::string_view key, const std::string& value) {
    text_ += ", ";
    text_ += key;
    text_ += "=";
    text_ += value;
  }
  void AddList(std::string_view key, std::span<const int64_t> values) { Add(key, PrintIntListText(values)); }
  void AddListIfAny(std::string_view key, std::span<const int64_t> values) {
    if (!values.empty()) AddList(key, values);
  }
  void AddTrue(std::string_view key, bool value) {
    if (value) Add(key, "true");
  }

 private:
  std::string& text_;
};

std::string CalleeName(const Instruction& instruction, size_t i) {
  return i < instruction.called.size() && instruction.called[i] ? instruction.called[i]->name() : "?";
}

void AddOpAttributes(const Instruction& instruction, AttributeList& out) {
  const Attributes& a = instruction.attrs;
  auto to_apply = [&] { out.Add("to_apply", CalleeName(instruction, 0)); };
  switch (instruction.opcode) {
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize: out.AddList("dimensions", a.dimensions); break;
    case Opcode::kReduce:
      out.AddList("dimensions", a.dimensions);
      to_apply();
      break;
    case Opcode::kMap:
      out.AddListIfAny("dimensions", a.dimensions);
      to_apply();
      break;
    case Opcode::kSort:
      out.AddList("dimensions", a.dimensions);
      out.AddTrue("is_stable", a.is_stable);
      to_apply();
      break;
    case Opcode::kTopK:
      out.Add("k", std::to_string(a.top_k));
      out.Add("largest", a.largest ? "true" : "false");
      break;
    case Opcode::kFft:
      out.Add("fft_type", std::string(FftTypeName(a.fft_type)));
      out.AddList("fft_length", a.fft_length);
      break;
    case Opcode::kCall: to_apply(); break;
    case Opcode::kFusion:
      out.Add("kind", std::string(FusionKindName(a.fusion_kind)));
      out.Add("calls", CalleeName(instruction, 0));
      break;
    case Opcode::kWhile:
      out.Add("condition", CalleeName(instruction, 0));
      out.Add("body", CalleeName(instruction, 1));
      break;
    case Opcode::kConditional: {
      const bool predicated = !instruction.operands.empty() && instruction.operands[0] &&
                              instruction.operands[0]->shape.element_type() == ElementType::kPred;
      if (predicated && instruction.called.size() == 2) {
        out.Add("true_computation", CalleeName(instruction, 0));
        out.Add("false_computation", CalleeName(instruction, 1));
      } else {
        std::string branches = "{";
        for (size_t i = 0; i < instruction.called.size(); ++i)
          branches += (i ? ", " : "") + CalleeName(instruction, i);
        out.Add("branch_computations", branches + "}");
      }
      break;
    }
    case Opcode::kReduceWindow:
      out.Add("window", PrintWindowText(a.window));
      to_apply();
      break;
    case Opcode::kSelectAndScatter:
      out.Add("window", PrintWindowText(a.window));
      out.Add("select", CalleeName(instruction, 0));
      out.Add("scatter", CalleeName(instruction, 1));
      break;
    case Opcode::kConvolution:
      if (!a.window->dimensions.empty()) out.Add("window", PrintWindowText(a.window));
      out.Add("dim_labels", PrintDimLabelsText(a.conv));
      if (a.feature_group_count != 1) out.Add("feature_group_count", std::to_string(a.feature_group_count));
      if (a.batch_group_count != 1) out.Add("batch_group_count", std::to_string(a.batch_group_count));
      if (!a.operand_precision.empty())
        out.Add("operand_precision", PrintOperandPrecisionText(a.operand_precision));
      break;
    case Opcode::kDot:
      out.AddListIfAny("lhs_batch_dims", a.dot->lhs_batch_dimensions);
      out.AddList("lhs_contracting_dims", a.dot->lhs_contracting_dimensions);
      out.AddListIfAny("rhs_batch_dims", a.dot->rhs_batch_dimensions);
      out.AddList("rhs_contracting_dims", a.dot->rhs_contracting_dimensions);
      if (!a.operand_precision.empty())
        out.Add("operand_precision", PrintOperandPrecisionText(a.operand_precision));
      break;
    case Opcode::kSlice:
      out.Add("slice", PrintSliceText({a.slice_starts, a.slice_limits, a.slice_strides}));
      break;
    case Opcode::kDynamicSlice: out.AddList("dynamic_slice_sizes", a.dynamic_slice_sizes); break;
    case Opcode::kPad: out.Add("padding", PrintPaddingText(a.padding)); break;
    case Opcode::kCompare:
      out.Add("direction", std::string(ComparisonDirectionName(a.comparison_direction)));
      if (a.comparison_type != ComparisonType::kDefault) {
        out.Add("type", std::string(ComparisonTypeName(a.comparison_type)));
      }
      break;
    case Opcode::kIota: out.Add("iota_dimension", std::to_string(a.iota_dimension)); break;
    case Opcode::kGetTupleElement: out.Add("index", std::to_string(a.tuple_index)); break;
    case Opcode::kGather:
      out.AddList("offset_dims", a.gather->offset_dims);
      out.AddList("collapsed_slice_dims", a.gather->collapsed_slice_dims);
      out.AddList("start_index_map", a.gather->start_index_map);
      out.AddListIfAny("operand_batching_dims", a.gather->operand_batching_dims);
      out.AddListIfAny("start_indices_batching_dims", a.gather->start_indices_batching_dims);
      out.Add("index_vector_dim", std::to_string(a.gather->index_vector_dim));
      out.AddList("slice_sizes", a.gather_slice_sizes);
      out.AddTrue("indices_are_sorted", a.indices_are_sorted);
      break;
    case Opcode::kScatter:
      out.AddList("update_window_dims", a.scatter->update_window_dims);
      out.AddList("inserted_window_dims", a.scatter->inserted_window_dims);
      out.AddList("scatter_dims_to_operand_dims", a.scatter->scatter_dims_to_operand_dims);
      out.AddListIfAny("input_batching_dims", a.scatter->input_batching_dims);
      out.AddListIfAny("scatter_indices_batching_dims", a.scatter->scatter_indices_batching_dims);
      out.Add("index_vector_dim", std::to_string(a.scatter->index_vector_dim));
      out.AddTrue("indices_are_sorted", a.indices_are_sorted);
      out.AddTrue("unique_indices", a.unique_indices);
      to_apply();
      break;
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
      out.Add("epsilon", FormatFloatExactly(a.epsilon));
      out.Add("feature_index", std::to_string(a.feature_index));
      break;
    case Opcode::kReducePrecision:
      out.Add("exponent_bits", std::to_string(a.exponent_bits));
      out.Add("mantissa_bits", std::to_string(a.mantissa_bits));
      break;
    case Opcode::kRng: out.Add("distribution", std::string(RngDistributionName(a.rng_distribution))); break;
    case Opcode::kRngBitGenerator:
      out.Add("algorithm", std::string(RngAlgorithmName(a.rng_algorithm)));
      break;
    case Opcode::kCustomCall:
      out.Add("custom_call_target", QuoteString(a.custom_call_target));
      out.AddTrue("custom_call_has_side_effect", a.custom_call_has_side_effect);
      if (!a.backend_config.empty()) out.Add("backend_config", QuoteString(a.backend_config));
      break;
    case Opcode::kInfeed:
      if (!a.infeed_config.empty()) out.Add("infeed_config", QuoteString(a.infeed_config));
      break;
    case Opcode::kOutfeed:
      if (!a.infeed_config.empty()) out.Add("outfeed_config", QuoteString(a.infeed_config));
      break;
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      if (a.channel_id != 0) out.Add("channel_id", std::to_string(a.channel_id));
      break;
    case Opcode::kAllReduce:
      if (a.channel_id != 0) out.Add("channel_id", std::to_string(a.channel_id));
      to_apply();
      break;
    default: break;
  }
}

// The names instructions print under: their own, or with
// PrintOptions::positional_names their positions in their computation.
class PrintedNames {
 public:
  PrintedNames() = default;
  explicit PrintedNames(const Computation& computation) : positions_(computation.instructions().size()) {
    const auto& instructions = computation.instructions();
    for (size_t i = 0; i < instructions.size(); ++i) positions_.Insert(instructions[i].get(), i);
  }
  void Append(const Instruction& instruction, std::string& text) const {
    const size_t* position = positions_.Find(&instruction);
    if (position == nullptr) {
      text += instruction.name;
      return;
    }
    text += 'v';
    text += std::to_string(*position);
  }

 private:
  PointerMap<size_t> positions_;  // empty: every instruction prints its own name
};

// Appends instead of returning strings: a 200k-instruction module prints
// twice per compile (the program cache's key and the kernels' keys), and
// the temporaries of each line cost more than its text.
void AppendOperands(std::string& text, const Instruction& instruction, const PrintOptions& options,
                    const PrintedNames& names) {
  if (instruction.opcode == Opcode::kConstant) {
    if (instruction.literal) text += PrintLiteralText(*instruction.literal);
    return;
  }
  if (instruction.opcode == Opcode::kParameter) {
    text += std::to_string(instruction.attrs.parameter_number);
    return;
  }
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    if (i) text += ", ";
    const Instruction* operand = instruction.operands[i];
    if (!operand) {
      text += '?';
      continue;
    }
    if (options.print_operand_shapes) {
      AppendShapeText(text, operand->shape, options.print_layouts);
      text += ' ';
    }
    names.Append(*operand, text);
  }
}

void AppendInstructionLine(std::string& text, const Instruction& instruction, const PrintOptions& options,
                           bool is_root, const PrintedNames& names) {
  if (is_root) text += "ROOT ";
  names.Append(instruction, text);
  text += " = ";
  AppendShapeText(text, instruction.shape, options.print_layouts);
  text += ' ';
  text += OpcodeName(instruction.opcode);
  text += '(';
  AppendOperands(text, instruction, options, names);
  text += ')';
  AttributeList attributes(text);
  AddOpAttributes(instruction, attributes);
}

std::string PrintSignature(const Computation& computation, const PrintOptions& options,
                           const PrintedNames& names) {
  std::string text = "(";
  const auto& parameters = computation.parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i) text += ", ";
    if (!parameters[i]) {
      text += "?: ?";
      continue;
    }
    names.Append(*parameters[i], text);
    text += ": ";
    AppendShapeText(text, parameters[i]->shape, options.print_layouts);
  }
  text += ") -> ";
  text += computation.root() ? PrintShapeText(computation.root()->shape, options.print_layouts) : "?";
  return text;
}

void AppendComputationBody(std::string& text, const Computation& computation, const PrintOptions& options,
                           bool is_entry) {
  const PrintedNames names = options.positional_names ? PrintedNames(computation) : PrintedNames();
  if (is_entry) text += "ENTRY ";
  text += computation.name();
  // The long form (with operand shapes) also carries the signature, as XLA's
  // default printer does; the short form is JAX's.
  if (options.print_operand_shapes) {
    text += ' ';
    text += PrintSignature(computation, options, names);
  }
  text += " {\n";
  for (const auto& instruction : computation.instructions()) {
    text += "  ";
    AppendInstructionLine(text, *instruction, options, instruction.get() == computation.root(), names);
    text += '\n';
  }
  text += "}\n";
}

bool SameSignature(const ProgramShape& a, const ProgramShape& b) {
  if (a.parameters.size() != b.parameters.size() || !a.result.Compatible(b.result)) return false;
  for (size_t i = 0; i < a.parameters.size(); ++i) {
    if (!a.parameters[i].Compatible(b.parameters[i])) return false;
  }
  return true;
}

std::string PrintEntryLayout(const Module& module) {
  ProgramShape layout;
  if (module.entry()) layout = module.entry()->program_shape();
  // The recorded layout wins only while it still matches the entry (a pass
  // may have changed the signature since it was recorded).
  if (module.entry_layout() && (!module.entry() || SameSignature(*module.entry_layout(), layout))) {
    layout = *module.entry_layout();
  }
  std::string text = "{(";
  for (size_t i = 0; i < layout.parameters.size(); ++i) {
    if (i) text += ", ";
    text += PrintShapeText(layout.parameters[i], true);
  }
  text += ")->";
  text += PrintShapeText(layout.result, true);
  text += '}';
  return text;
}

}  // namespace

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string text = "HloModule " + module.name();
  if (module.entry() || module.entry_layout()) {
    text += ", entry_computation_layout=";
    text += PrintEntryLayout(module);
  }
  text += "\n";
  for (const Computation* computation : module.ComputationsPostOrder()) {
    text += '\n';
    AppendComputationBody(text, *computation, options, computation == module.entry());
  }
  return text;
}

std::string PrintComputation(const Computation& computation, const PrintOptions& options) {
  std::string text;
  AppendComputationBody(text, computation, options, false);
  return text;
}

std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options) {
  std::string text;
  AppendInstructionLine(text, instruction, options, false, PrintedNames());
  return text;
}

}  // namespace kiln
