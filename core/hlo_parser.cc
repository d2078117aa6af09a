// HLO text -> Module in two phases: the text is first read into pending
// computations (names unresolved, so callees may be defined before or after
// their callers), then the computations are built callees first, each
// instruction checked by shape inference, and the module verified.
#include "core/hlo_parser.h"

#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/hlo_attribute_text.h"
#include "core/hlo_lexer.h"
#include "core/hlo_literal_text.h"
#include "core/hlo_shape_text.h"
#include "core/shape_inference.h"
#include "core/verifier.h"

namespace kiln {
namespace {

struct PendingName {
  std::string name;
  size_t offset = 0;
};

struct PendingOperand {
  PendingName name;
  std::optional<Shape> shape;  // written in the long form, checked against the operand
};

struct PendingInstruction {
  PendingName name;
  bool is_root = false;
  Shape shape;
  Opcode opcode = Opcode::kConstant;
  size_t opcode_offset = 0;
  std::vector<PendingOperand> operands;
  std::optional<Literal> literal;
  Attributes attrs;
  // Called computations by attribute name (to_apply, body, ...).
  std::map<std::string, std::vector<PendingName>, std::less<>> callees;
  std::set<std::string, std::less<>> seen_attributes;
};

struct PendingComputation {
  PendingName name;
  bool is_entry = false;
  std::vector<PendingInstruction> instructions;
};

class HloTextParser {
 public:
  explicit HloTextParser(std::string_view text) : lexer_(text) {}

  StatusOr<std::unique_ptr<Module>> Parse() {
    KILN_RETURN_IF_ERROR(ParseHeader());
    while (!lexer_.AtEnd()) {
      KILN_ASSIGN_OR_RETURN(PendingComputation computation, ParseComputation());
      computations_.push_back(std::move(computation));
    }
    if (computations_.empty()) return lexer_.Expected("a computation");
    return Build();
  }

 private:
  // ---- Text -> pending computations ----

  Status ParseHeader() {
    if (!lexer_.TryConsumeKeyword("HloModule")) return lexer_.Expected("'HloModule'");
    const std::string_view name = lexer_.ReadName();
    if (name.empty()) return lexer_.Expected("the module name");
    module_name_ = std::string(name);
    while (lexer_.TryConsume(',')) {
      lexer_.SkipSpace();
      const size_t key_offset = lexer_.offset();
      const std::string_view key = lexer_.ReadName();
      if (key.empty()) return lexer_.Expected("a module attribute name");
      if (!lexer_.TryConsume('='))
        return lexer_.Expected("'=' after module attribute '" + std::string(key) + "'");
      if (key == "entry_computation_layout") {
        entry_layout_offset_ = key_offset;
        KILN_RETURN_IF_ERROR(ParseEntryLayout());
      } else {
        // input_output_alias, buffer_donor, is_scheduled, replica_count,
        // num_partitions, frontend_attributes, allow_spmd_*...: no meaning
        // for a single-device compiler.
        KILN_RETURN_IF_ERROR(lexer_.SkipValue());
      }
    }
    return OkStatus();
  }

  Status ParseEntryLayout() {
    if (!lexer_.TryConsume('{')) return lexer_.Expected("'{' starting entry_computation_layout");
    ProgramShape layout;
    if (!lexer_.TryConsume('(')) return lexer_.Expected("'(' starting the parameter layouts");
    if (!lexer_.TryConsume(')')) {
      while (true) {
        KILN_ASSIGN_OR_RETURN(Shape shape, ParseShapeText(lexer_));
        layout.parameters.push_back(std::move(shape));
        if (lexer_.TryConsume(')')) break;
        if (!lexer_.TryConsume(',')) return lexer_.Expected("',' or ')' in the parameter layouts");
      }
    }
    if (!lexer_.TryConsume("->")) return lexer_.Expected("'->' before the result layout");
    KILN_ASSIGN_OR_RETURN(layout.result, ParseShapeText(lexer_));
    if (!lexer_.TryConsume('}')) return lexer_.Expected("'}' closing entry_computation_layout");
    entry_layout_ = std::move(layout);
    return OkStatus();
  }

  StatusOr<PendingComputation> ParseComputation() {
    PendingComputation computation;
    computation.is_entry = lexer_.TryConsumeKeyword("ENTRY");
    lexer_.SkipSpace();
    computation.name.offset = lexer_.offset();
    computation.name.name = std::string(lexer_.ReadName());
    if (computation.name.name.empty()) return lexer_.Expected("a computation name");
    if (lexer_.Peek() == '(') KILN_RETURN_IF_ERROR(SkipSignature());
    // XLA may add `, execution_thread="..."` after the signature.
    while (lexer_.TryConsume(',')) {
      if (lexer_.ReadName().empty()) return lexer_.Expected("a computation attribute name");
      if (!lexer_.TryConsume('=')) return lexer_.Expected("'='");
      KILN_RETURN_IF_ERROR(lexer_.SkipValue());
    }
    if (!lexer_.TryConsume('{'))
      return lexer_.Expected("'{' starting computation '" + computation.name.name + "'");
    while (!lexer_.TryConsume('}')) {
      if (lexer_.AtEnd()) return lexer_.Expected("'}' closing computation '" + computation.name.name + "'");
      KILN_RETURN_IF_ERROR(ParseInstruction(computation.instructions.emplace_back()));
    }
    if (computation.instructions.empty()) {
      return lexer_.ErrorAt(computation.name.offset,
                            "computation '" + computation.name.name + "' has no instructions");
    }
    return computation;
  }

  // `(p: f32[2], q: s32[]) -> f32[2]`: the parameter instructions are the
  // source of truth, so the signature is read for syntax only.
  Status SkipSignature() {
    if (!lexer_.TryConsume('(')) return lexer_.Expected("'('");
    if (!lexer_.TryConsume(')')) {
      while (true) {
        if (lexer_.ReadName().empty()) return lexer_.Expected("a parameter name in the signature");
        if (!lexer_.TryConsume(':')) return lexer_.Expected("':' after the parameter name");
        KILN_RETURN_IF_ERROR(ParseShapeText(lexer_).status());
        if (lexer_.TryConsume(')')) break;
        if (!lexer_.TryConsume(',')) return lexer_.Expected("',' or ')' in the signature");
      }
    }
    if (!lexer_.TryConsume("->")) return lexer_.Expected("'->' before the result shape");
    return ParseShapeText(lexer_).status();
  }

  // Parses into `instruction` in place: a pending instruction is large
  // (attributes of every op), and a program may have 100k of them.
  Status ParseInstruction(PendingInstruction& instruction) {
    instruction.is_root = lexer_.TryConsumeKeyword("ROOT");
    lexer_.SkipSpace();
    instruction.name.offset = lexer_.offset();
    instruction.name.name = std::string(lexer_.ReadName());
    if (instruction.name.name.empty()) return lexer_.Expected("an instruction name");
    if (!lexer_.TryConsume('='))
      return lexer_.Expected("'=' after instruction name '" + instruction.name.name + "'");
    KILN_ASSIGN_OR_RETURN(instruction.shape, ParseShapeText(lexer_));
    lexer_.SkipSpace();
    instruction.opcode_offset = lexer_.offset();
    const std::string_view opcode_name = lexer_.ReadName();
    if (opcode_name.empty()) return lexer_.Expected("an opcode");
    const std::optional<Opcode> opcode = OpcodeFromName(opcode_name);
    if (!opcode) {
      // Text cut short in the name is a syntax error like any other.
      if (!lexer_.TryConsume('('))
        return lexer_.Expected("'(' after opcode '" + std::string(opcode_name) + "'");
      // Well-formed text naming an op outside Kiln's set: UNIMPLEMENTED, so a
      // caller can tell it from a syntax error.
      const Status where =
          lexer_.ErrorAt(instruction.opcode_offset, "unsupported op '" + std::string(opcode_name) + "'");
      return Unimplemented(where.message(),
                           ": Kiln's op set does not have it (a host function can stand in as a custom-call "
                           "target registered with kiln_register_custom_call)");
    }
    instruction.opcode = *opcode;
    if (!lexer_.TryConsume('('))
      return lexer_.Expected("'(' after opcode '" + std::string(opcode_name) + "'");
    if (instruction.opcode == Opcode::kConstant) {
      KILN_RETURN_IF_ERROR(ParseConstantBody(instruction));
    } else if (instruction.opcode == Opcode::kParameter) {
      KILN_ASSIGN_OR_RETURN(instruction.attrs.parameter_number, ParseInt64Text(lexer_));
    } else {
      KILN_RETURN_IF_ERROR(ParseOperands(instruction));
    }
    if (!lexer_.TryConsume(')'))
      return lexer_.Expected("')' closing the operands of '" + instruction.name.name + "'");
    while (lexer_.TryConsume(',')) KILN_RETURN_IF_ERROR(ParseAttribute(instruction));
    return OkStatus();
  }

  Status ParseConstantBody(PendingInstruction& instruction) {
    // The old long form writes the shape again inside: constant(f32[2] {1, 2}).
    if (lexer_.Peek() != '(' && ShapeStartsHere(lexer_)) {
      lexer_.SkipSpace();
      const size_t offset = lexer_.offset();
      KILN_ASSIGN_OR_RETURN(Shape written, ParseShapeText(lexer_));
      if (!written.Compatible(instruction.shape)) {
        return lexer_.ErrorAt(offset, "constant value shape " + written.ToString() +
                                          " differs from the declared shape " + instruction.shape.ToString());
      }
    }
    KILN_ASSIGN_OR_RETURN(Literal literal, ParseLiteralText(lexer_, instruction.shape));
    instruction.literal = std::move(literal);
    return OkStatus();
  }

  Status ParseOperands(PendingInstruction& instruction) {
    if (lexer_.Peek() == ')') return OkStatus();
    while (true) {
      PendingOperand operand;
      if (ShapeStartsHere(lexer_)) {
        KILN_ASSIGN_OR_RETURN(Shape shape, ParseShapeText(lexer_));
        operand.shape = std::move(shape);
      }
      lexer_.SkipSpace();
      operand.name.offset = lexer_.offset();
      operand.name.name = std::string(lexer_.ReadName());
      if (operand.name.name.empty()) return lexer_.Expected("an operand name");
      instruction.operands.push_back(std::move(operand));
      if (!lexer_.TryConsume(',')) return OkStatus();
    }
  }

  StatusOr<PendingName> ParseComputationName() {
    PendingName name;
    lexer_.SkipSpace();
    name.offset = lexer_.offset();
    name.name = std::string(lexer_.ReadName());
    if (name.name.empty()) return lexer_.Expected("a computation name");
    return name;
  }

  Status ParseAttribute(PendingInstruction& instruction) {
    lexer_.SkipSpace();
    const size_t offset = lexer_.offset();
    const std::string key(lexer_.ReadName());
    if (key.empty()) return lexer_.Expected("an attribute name");
    if (!lexer_.TryConsume('=')) return lexer_.Expected("'=' after attribute '" + key + "'");
    if (!instruction.seen_attributes.insert(key).second) {
      return lexer_.ErrorAt(offset, "attribute '" + key + "' given twice");
    }
    bool known = false;
    for (std::string_view name : AttributeNamesOf(instruction.opcode)) known = known || name == key;
    if (!known) {
      if (IsIgnoredAttribute(instruction.opcode, key)) return lexer_.SkipValue();
      return lexer_.ErrorAt(offset, "unknown attribute '" + key + "' for " +
                                        std::string(OpcodeName(instruction.opcode)) + " '" +
                                        instruction.name.name + "'");
    }
    return ParseKnownAttribute(key, instruction);
  }

  Status ParseKnownAttribute(const std::string& key, PendingInstruction& instruction) {
    Attributes& attrs = instruction.attrs;
    auto int_list = [&](std::vector<int64_t>& field) -> Status {
      KILN_ASSIGN_OR_RETURN(field, ParseIntListText(lexer_));
      return OkStatus();
    };
    auto integer = [&](int64_t& field) -> Status {
      KILN_ASSIGN_OR_RETURN(field, ParseInt64Text(lexer_));
      return OkStatus();
    };
    auto boolean = [&](bool& field) -> Status {
      KILN_ASSIGN_OR_RETURN(field, ParseBoolText(lexer_));
      return OkStatus();
    };
    auto string = [&](std::string& field) -> Status {
      if (lexer_.Peek() == '{') {
        // backend_config={...} (JSON-like) is kept as its raw text.
        KILN_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadBalancedBraces());
        field = std::string(raw);
        return OkStatus();
      }
      KILN_ASSIGN_OR_RETURN(field, lexer_.ReadString());
      return OkStatus();
    };
    if (key == "to_apply" || key == "calls" || key == "condition" || key == "body" ||
        key == "true_computation" || key == "false_computation" || key == "select" || key == "scatter") {
      KILN_ASSIGN_OR_RETURN(PendingName name, ParseComputationName());
      auto& slot = instruction.callees[key == "calls" ? "to_apply" : key];
      if (!slot.empty()) return ErrorAt(name.offset, "give only one of to_apply and calls");
      slot.push_back(std::move(name));
      return OkStatus();
    }
    if (key == "branch_computations") {
      if (!lexer_.TryConsume('{')) return lexer_.Expected("'{' starting the branch computations");
      auto& branches = instruction.callees[key];
      while (true) {
        KILN_ASSIGN_OR_RETURN(PendingName name, ParseComputationName());
        branches.push_back(std::move(name));
        if (lexer_.TryConsume('}')) return OkStatus();
        if (!lexer_.TryConsume(',')) return lexer_.Expected("',' or '}' in branch_computations");
      }
    }
    if (key == "dimensions") return int_list(attrs.dimensions);
    if (key == "dynamic_slice_sizes") return int_list(attrs.dynamic_slice_sizes);
    if (key == "window") {
      KILN_ASSIGN_OR_RETURN(attrs.window, ParseWindowText(lexer_));
      return OkStatus();
    }
    if (key == "dim_labels") {
      KILN_ASSIGN_OR_RETURN(attrs.conv, ParseDimLabelsText(lexer_));
      return OkStatus();
    }
    if (key == "feature_group_count") return integer(attrs.feature_group_count);
    if (key == "batch_group_count") return integer(attrs.batch_group_count);
    if (key == "operand_precision") {
      lexer_.SkipSpace();
      const size_t offset = lexer_.offset();
      KILN_ASSIGN_OR_RETURN(attrs.operand_precision, ParseOperandPrecisionText(lexer_));
      if (attrs.operand_precision.size() != 2) {
        return lexer_.ErrorAt(offset, "operand_precision of '" + instruction.name.name +
                                          "' needs one entry per operand (2), got " +
                                          std::to_string(attrs.operand_precision.size()));
      }
      return OkStatus();
    }
    if (key == "lhs_batch_dims") return int_list(attrs.dot->lhs_batch_dimensions);
    if (key == "rhs_batch_dims") return int_list(attrs.dot->rhs_batch_dimensions);
    if (key == "lhs_contracting_dims") return int_list(attrs.dot->lhs_contracting_dimensions);
    if (key == "rhs_contracting_dims") return int_list(attrs.dot->rhs_contracting_dimensions);
    if (key == "slice") {
      KILN_ASSIGN_OR_RETURN(SliceBounds bounds, ParseSliceText(lexer_));
      attrs.slice_starts = std::move(bounds.starts);
      attrs.slice_limits = std::move(bounds.limits);
      attrs.slice_strides = std::move(bounds.strides);
      return OkStatus();
    }
    if (key == "padding") {
      KILN_ASSIGN_OR_RETURN(attrs.padding, ParsePaddingText(lexer_));
      return OkStatus();
    }
    if (key == "kind") {
      lexer_.SkipSpace();
      const size_t offset = lexer_.offset();
      const std::string_view word = lexer_.ReadName();
      const auto kind = FusionKindFromName(word);
      if (!kind) {
        return lexer_.ErrorAt(
            offset, "unknown fusion kind '" + std::string(word) + "'; expected kLoop, kInput or kOutput");
      }
      attrs.fusion_kind = *kind;
      return OkStatus();
    }
    if (key == "direction" || key == "type" || key == "distribution" || key == "algorithm") {
      lexer_.SkipSpace();
      const size_t offset = lexer_.offset();
      const std::string_view word = lexer_.ReadName();
      if (key == "direction") {
        const auto direction = ComparisonDirectionFromName(word);
        if (!direction)
          return lexer_.ErrorAt(offset, "unknown comparison direction '" + std::string(word) + "'");
        attrs.comparison_direction = *direction;
      } else if (key == "type") {
        const auto type = ComparisonTypeFromName(word);
        if (!type) return lexer_.ErrorAt(offset, "unknown comparison type '" + std::string(word) + "'");
        attrs.comparison_type = *type;
      } else if (key == "distribution") {
        const auto distribution = RngDistributionFromName(word);
        if (!distribution)
          return lexer_.ErrorAt(offset, "unknown rng distribution '" + std::string(word) + "'");
        attrs.rng_distribution = *distribution;
      } else {
        const auto algorithm = RngAlgorithmFromName(word);
        if (!algorithm) return lexer_.ErrorAt(offset, "unknown rng algorithm '" + std::string(word) + "'");
        attrs.rng_algorithm = *algorithm;
      }
      return OkStatus();
    }
    if (key == "fft_type") {
      lexer_.SkipSpace();
      const size_t offset = lexer_.offset();
      const std::string_view word = lexer_.ReadName();
      const auto type = FftTypeFromName(word);
      if (!type) {
        return lexer_.ErrorAt(
            offset, "unknown fft_type '" + std::string(word) + "'; expected FFT, IFFT, RFFT or IRFFT");
      }
      attrs.fft_type = *type;
      return OkStatus();
    }
    if (key == "fft_length") return int_list(attrs.fft_length);
    if (key == "iota_dimension") return integer(attrs.iota_dimension);
    if (key == "index") return integer(attrs.tuple_index);
    if (key == "offset_dims") return int_list(attrs.gather->offset_dims);
    if (key == "collapsed_slice_dims") return int_list(attrs.gather->collapsed_slice_dims);
    if (key == "start_index_map") return int_list(attrs.gather->start_index_map);
    if (key == "operand_batching_dims") return int_list(attrs.gather->operand_batching_dims);
    if (key == "start_indices_batching_dims") return int_list(attrs.gather->start_indices_batching_dims);
    if (key == "slice_sizes") return int_list(attrs.gather_slice_sizes);
    if (key == "index_vector_dim") {
      // Gather and scatter keep it in their own dimension numbers.
      KILN_RETURN_IF_ERROR(integer(attrs.gather->index_vector_dim));
      attrs.scatter->index_vector_dim = attrs.gather->index_vector_dim;
      return OkStatus();
    }
    if (key == "update_window_dims") return int_list(attrs.scatter->update_window_dims);
    if (key == "inserted_window_dims") return int_list(attrs.scatter->inserted_window_dims);
    if (key == "scatter_dims_to_operand_dims") return int_list(attrs.scatter->scatter_dims_to_operand_dims);
    if (key == "input_batching_dims") return int_list(attrs.scatter->input_batching_dims);
    if (key == "scatter_indices_batching_dims") return int_list(attrs.scatter->scatter_indices_batching_dims);
    if (key == "indices_are_sorted") return boolean(attrs.indices_are_sorted);
    if (key == "unique_indices") return boolean(attrs.unique_indices);
    if (key == "is_stable") return boolean(attrs.is_stable);
    if (key == "k") return integer(attrs.top_k);
    if (key == "largest") return boolean(attrs.largest);
    if (key == "epsilon") {
      KILN_ASSIGN_OR_RETURN(Literal value, ParseLiteralText(lexer_, Shape(ElementType::kF32, {})));
      attrs.epsilon = value.data<float>()[0];
      return OkStatus();
    }
    if (key == "feature_index") return integer(attrs.feature_index);
    if (key == "exponent_bits") return integer(attrs.exponent_bits);
    if (key == "mantissa_bits") return integer(attrs.mantissa_bits);
    if (key == "custom_call_target") return string(attrs.custom_call_target);
    if (key == "custom_call_has_side_effect") return boolean(attrs.custom_call_has_side_effect);
    if (key == "backend_config") return string(attrs.backend_config);
    if (key == "infeed_config" || key == "outfeed_config") return string(attrs.infeed_config);
    if (key == "channel_id") return integer(attrs.channel_id);
    return Internal("attribute '", key, "' is listed for ", OpcodeName(instruction.opcode),
                    " but has no parser");
  }

  // ---- Pending computations -> Module ----

  Status ErrorAt(size_t offset, const std::string& message) const { return lexer_.ErrorAt(offset, message); }

  // Callees in Instruction::called order for the instruction's opcode.
  StatusOr<std::vector<const PendingName*>> CalleesInOrder(const PendingInstruction& instruction) const {
    std::vector<const PendingName*> order;
    auto take = [&](std::string_view key, bool required) -> Status {
      const auto found = instruction.callees.find(key);
      if (found == instruction.callees.end()) {
        if (!required) return OkStatus();
        return ErrorAt(instruction.opcode_offset, std::string(OpcodeName(instruction.opcode)) + " '" +
                                                      instruction.name.name + "' needs attribute '" +
                                                      std::string(key) + "'");
      }
      for (const PendingName& name : found->second) order.push_back(&name);
      return OkStatus();
    };
    switch (instruction.opcode) {
      case Opcode::kWhile:
        KILN_RETURN_IF_ERROR(take("condition", true));
        KILN_RETURN_IF_ERROR(take("body", true));
        break;
      case Opcode::kSelectAndScatter:
        KILN_RETURN_IF_ERROR(take("select", true));
        KILN_RETURN_IF_ERROR(take("scatter", true));
        break;
      case Opcode::kConditional:
        if (instruction.callees.count("branch_computations")) {
          if (instruction.callees.count("true_computation") ||
              instruction.callees.count("false_computation")) {
            return ErrorAt(instruction.opcode_offset,
                           "conditional '" + instruction.name.name +
                               "' gives both branch_computations and true/false_computation");
          }
          KILN_RETURN_IF_ERROR(take("branch_computations", true));
        } else {
          KILN_RETURN_IF_ERROR(take("true_computation", true));
          KILN_RETURN_IF_ERROR(take("false_computation", true));
        }
        break;
      case Opcode::kMap:
      case Opcode::kReduce:
      case Opcode::kReduceWindow:
      case Opcode::kScatter:
      case Opcode::kAllReduce:
      case Opcode::kCall:
      case Opcode::kFusion:
      case Opcode::kSort: KILN_RETURN_IF_ERROR(take("to_apply", true)); break;
      default: break;
    }
    return order;
  }

  // Orders computations so every callee precedes its callers; reports
  // unknown callees and call cycles. Iterative: long call chains are fine.
  StatusOr<std::vector<size_t>> CalleesFirstOrder() const {
    enum class Mark { kNone, kVisiting, kDone };
    std::vector<Mark> marks(computations_.size(), Mark::kNone);
    std::vector<size_t> order;
    for (size_t root = 0; root < computations_.size(); ++root) {
      if (marks[root] != Mark::kNone) continue;
      // Each frame: computation index and the list of its callee indices still to visit.
      struct Frame {
        size_t index;
        std::vector<size_t> callees;
        size_t next = 0;
      };
      std::vector<Frame> stack;
      auto push = [&](size_t index) -> Status {
        Frame frame{index, {}, 0};
        for (const PendingInstruction& instruction : computations_[index].instructions) {
          for (const auto& [key, names] : instruction.callees) {
            for (const PendingName& name : names) {
              const auto found = index_by_name_.find(name.name);
              if (found == index_by_name_.end()) {
                return ErrorAt(name.offset, "unknown computation '" + name.name + "'");
              }
              frame.callees.push_back(found->second);
            }
          }
        }
        marks[index] = Mark::kVisiting;
        stack.push_back(std::move(frame));
        return OkStatus();
      };
      KILN_RETURN_IF_ERROR(push(root));
      while (!stack.empty()) {
        Frame& frame = stack.back();
        if (frame.next == frame.callees.size()) {
          marks[frame.index] = Mark::kDone;
          order.push_back(frame.index);
          stack.pop_back();
          continue;
        }
        const size_t callee = frame.callees[frame.next++];
        if (marks[callee] == Mark::kVisiting) {
          const PendingName& name = computations_[frame.index].name;
          return ErrorAt(name.offset, "computation '" + name.name + "' calls '" +
                                          computations_[callee].name.name +
                                          "' which calls it back (recursion is not allowed)");
        }
        if (marks[callee] == Mark::kNone) KILN_RETURN_IF_ERROR(push(callee));
      }
    }
    return order;
  }

  StatusOr<std::unique_ptr<Computation>> BuildComputation(PendingComputation& pending) {
    auto computation = std::make_unique<Computation>(pending.name.name);
    std::unordered_map<std::string_view, Instruction*> by_name;  // views of the instructions' own names
    // Parameter numbers must be distinct and dense, checked before
    // AddInstruction sizes its parameter table by them.
    size_t parameter_count = 0;
    for (const PendingInstruction& instruction : pending.instructions) {
      if (instruction.opcode == Opcode::kParameter) ++parameter_count;
    }
    std::vector<bool> parameter_seen(parameter_count, false);
    Instruction* root = nullptr;
    size_t root_offset = 0;
    for (PendingInstruction& pending_instruction : pending.instructions) {
      KILN_ASSIGN_OR_RETURN(Instruction * instruction,
                            BuildInstruction(pending_instruction, *computation, by_name, parameter_seen));
      if (pending_instruction.is_root) {
        if (root) {
          return ErrorAt(pending_instruction.name.offset,
                         "computation '" + pending.name.name + "' has a second ROOT '" + instruction->name +
                             "' (the first is at " + DescribeOffset(root_offset) + ")");
        }
        root = instruction;
        root_offset = pending_instruction.name.offset;
      }
    }
    computation->set_root(root ? root : computation->instructions().back().get());
    return computation;
  }

  std::string DescribeOffset(size_t offset) const {
    const TextPosition position = lexer_.PositionOf(offset);
    return "line " + std::to_string(position.line) + ", column " + std::to_string(position.column);
  }

  // Moves the attributes and the value out of `pending`.
  StatusOr<Instruction*> BuildInstruction(PendingInstruction& pending, Computation& computation,
                                          std::unordered_map<std::string_view, Instruction*>& by_name,
                                          std::vector<bool>& parameter_seen) {
    const std::string& name = pending.name.name;
    if (by_name.count(name)) {
      return ErrorAt(pending.name.offset, "instruction name '" + name + "' is defined twice");
    }
    auto instruction = std::make_unique<Instruction>();
    instruction->opcode = pending.opcode;
    instruction->name = name;
    instruction->attrs = std::move(pending.attrs);
    instruction->literal = std::move(pending.literal);
    if (pending.opcode == Opcode::kParameter) {
      const int64_t number = instruction->attrs.parameter_number;
      if (number < 0 || static_cast<size_t>(number) >= parameter_seen.size() ||
          parameter_seen[static_cast<size_t>(number)]) {
        return ErrorAt(pending.opcode_offset, "parameter number " + std::to_string(number) + " of '" + name +
                                                  "' must be unique and below the number of parameters (" +
                                                  std::to_string(parameter_seen.size()) + ")");
      }
      parameter_seen[static_cast<size_t>(number)] = true;
    }
    std::vector<Shape> operand_shapes;
    for (const PendingOperand& operand : pending.operands) {
      const auto found = by_name.find(operand.name.name);
      if (found == by_name.end()) {
        return ErrorAt(operand.name.offset,
                       "unknown operand '" + operand.name.name + "' of '" + name +
                           "' (operands must be defined earlier in the same computation)");
      }
      if (operand.shape && !operand.shape->Compatible(found->second->shape)) {
        return ErrorAt(operand.name.offset, "operand '" + operand.name.name + "' is written as " +
                                                operand.shape->ToString() + " but has shape " +
                                                found->second->shape.ToString());
      }
      instruction->operands.push_back(found->second);
      operand_shapes.push_back(found->second->shape);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<const PendingName*> callees, CalleesInOrder(pending));
    std::vector<ProgramShape> signatures;
    for (const PendingName* callee : callees) {
      Computation* called = module_->FindComputation(callee->name);
      if (!called) return ErrorAt(callee->offset, "unknown computation '" + callee->name + "'");
      instruction->called.push_back(called);
      signatures.push_back(called->program_shape());
    }
    StatusOr<Shape> inferred =
        InferShape(pending.opcode, operand_shapes, instruction->attrs, signatures, &pending.shape);
    if (!inferred.ok()) {
      return Status(
          inferred.status().code(),
          ErrorAt(pending.opcode_offset, "'" + name + "': " + inferred.status().message()).message());
    }
    if (!inferred->Compatible(pending.shape)) {
      return ErrorAt(pending.opcode_offset, "'" + name + "' is declared as " + pending.shape.ToString() +
                                                " but " + std::string(OpcodeName(pending.opcode)) +
                                                " of its operands gives " + inferred->ToString());
    }
    instruction->shape = pending.shape;  // keeps the written layout
    Instruction* added = computation.AddInstruction(std::move(instruction));
    by_name[added->name] = added;
    return added;
  }

  StatusOr<std::unique_ptr<Module>> Build() {
    for (size_t i = 0; i < computations_.size(); ++i) {
      const PendingName& name = computations_[i].name;
      if (!index_by_name_.emplace(name.name, i).second) {
        return ErrorAt(name.offset, "computation name '" + name.name + "' is defined twice");
      }
    }
    size_t entry = computations_.size() - 1;
    bool entry_marked = false;
    for (size_t i = 0; i < computations_.size(); ++i) {
      if (!computations_[i].is_entry) continue;
      if (entry_marked) return ErrorAt(computations_[i].name.offset, "a second ENTRY computation");
      entry = i;
      entry_marked = true;
    }
    KILN_ASSIGN_OR_RETURN(std::vector<size_t> order, CalleesFirstOrder());
    module_ = std::make_unique<Module>(module_name_);
    for (size_t index : order) {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<Computation> computation, BuildComputation(computations_[index]));
      Computation* added = module_->AddComputation(std::move(computation));
      if (index == entry) module_->set_entry(added);
    }
    if (entry_layout_) KILN_RETURN_IF_ERROR(CheckEntryLayout());
    module_->set_entry_layout(entry_layout_);
    Status verified = VerifyModule(*module_);
    if (!verified.ok()) return verified.WithContext("HLO module '" + module_name_ + "' failed verification");
    return std::move(module_);
  }

  Status CheckEntryLayout() const {
    const ProgramShape signature = module_->entry()->program_shape();
    bool matches = signature.parameters.size() == entry_layout_->parameters.size() &&
                   signature.result.Compatible(entry_layout_->result);
    for (size_t i = 0; matches && i < signature.parameters.size(); ++i) {
      matches = signature.parameters[i].Compatible(entry_layout_->parameters[i]);
    }
    if (matches) return OkStatus();
    return ErrorAt(entry_layout_offset_, "entry_computation_layout " + entry_layout_->ToString() +
                                             " does not match the entry computation's signature " +
                                             signature.ToString());
  }

  HloLexer lexer_;
  std::string module_name_;
  std::optional<ProgramShape> entry_layout_;
  size_t entry_layout_offset_ = 0;
  std::vector<PendingComputation> computations_;
  std::unordered_map<std::string, size_t> index_by_name_;
  std::unique_ptr<Module> module_;
};

}  // namespace

StatusOr<std::unique_ptr<Module>> ParseHloModule(std::string_view text) {
  HloTextParser parser(text);
  return parser.Parse();
}

}  // namespace kiln
