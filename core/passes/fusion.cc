#include "core/passes/fusion.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ir_edit.h"
#include "core/pointer_map.h"
#include "core/post_order.h"
#include "core/work_count.h"

namespace kiln {

bool IsLoopFusible(const Instruction& instruction) {
  if (!instruction.shape.IsArray()) return false;
  for (const Instruction* operand : instruction.operands) {
    if (!operand->shape.IsArray()) return false;
  }
  return IsLoopFusible(instruction.opcode);
}

bool IsFusibleByDefault(const Instruction& instruction) {
  if (instruction.opcode == Opcode::kReduce) {
    for (const Instruction* operand : instruction.operands) {
      if (!operand->shape.IsArray()) return false;
    }
    return true;
  }
  return IsLoopFusible(instruction);
}

bool IsRowReduction(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kReduce || !instruction.shape.IsArray()) return false;
  const Instruction& input = *instruction.operand(0);
  if (!input.shape.IsArray() || input.shape.rank() < 2) return false;
  const std::vector<int64_t>& reduced = instruction.attrs.dimensions;
  return reduced.size() == 1 && reduced[0] == input.shape.rank() - 1;
}

bool IsRowBroadcast(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kBroadcast || !instruction.shape.IsArray()) return false;
  const Shape& from = instruction.operand(0)->shape;
  const std::vector<int64_t>& map = instruction.attrs.dimensions;
  if (from.rank() < 1 || instruction.shape.rank() != from.rank() + 1) return false;
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (map[static_cast<size_t>(d)] != d ||
        instruction.shape.dimensions()[static_cast<size_t>(d)] != from.dimensions()[static_cast<size_t>(d)])
      return false;
  }
  return true;
}

namespace {

// Whether `shape` is a row of rows `rows`: rank one more, same leading dims.
bool WalksRows(const Shape& shape, const std::vector<int64_t>& rows) {
  if (!shape.IsArray() || shape.rank() != static_cast<int64_t>(rows.size()) + 1) return false;
  return std::equal(rows.begin(), rows.end(), shape.dimensions().begin());
}

// Operands before users, and each operand's whole cone before the next
// operand's: the post-order of a depth-first walk from the root, then of
// walks from the instructions it does not reach, in instruction order.
// Groups grow in the reverse of this order, so a group follows one branch
// of a tree down to its leaves before it takes the next, and the values it
// reads (the branches it has not taken yet) stay about as many as the tree
// is deep. In the instructions' own order a tree's levels come one after
// another, so a group took a tree a level at a time, its inputs doubled per
// level until max_fusion_inputs stopped it six levels down, and the levels
// below became thousands of kernels of a few instructions each (the `wide`
// program of benchmarks/compile_time: 4161 kernels at 100k instructions).
std::vector<Instruction*> DepthFirstFusionOrder(const Computation& computation) {
  const auto& instructions = computation.instructions();
  std::vector<Instruction*> order;
  order.reserve(instructions.size());
  PointerSet visited(instructions.size());
  if (computation.root() != nullptr) AppendPostOrder(computation.root(), visited, order);
  for (const auto& instruction : instructions) AppendPostOrder(instruction.get(), visited, order);
  CountInstructionsWalked(instructions.size());
  return order;
}

struct Group {
  Instruction* root = nullptr;
  PointerSet members;
  // What the members read that is not a member: the fused computation's
  // parameters, unless they join too.
  std::unordered_set<const Instruction*> inputs;
  size_t counted_inputs = 0;  // those that count against max_fusion_inputs
  size_t outputs = 1;         // the root's result arrays (a variadic reduce has several)
  // For each member (but those whose copies cost no code: constants, iota,
  // broadcasts of scalars), the indices the kernel evaluates it at per
  // output element, as classes (IndexClasses).
  PointerMap<std::vector<uint64_t>> index_classes;
};

// Index classes: the root's index, a scalar's (always the empty index), and
// one derived per index-changing user, operand slot and class of that user.
constexpr uint64_t kRootIndexClass = 1;
constexpr uint64_t kScalarIndexClass = 2;

uint64_t DerivedIndexClass(const Instruction* user, size_t slot, uint64_t user_class) {
  // splitmix64's finaliser over the three parts: a collision would only
  // undercount one value's emissions.
  uint64_t x =
      reinterpret_cast<uintptr_t>(user) ^ (uint64_t{slot} << 48) ^ (user_class * 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A gather of arrays: loop-fusible when FusionOptions::fuse_gathers.
bool IsGatherOfArrays(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kGather || !instruction.shape.IsArray()) return false;
  return std::all_of(instruction.operands.begin(), instruction.operands.end(),
                     [](const Instruction* operand) { return operand->shape.IsArray(); });
}

// Copies of these cost an index computation at most, never a value's code.
bool EmitsNoCode(const Instruction& instruction) {
  if (instruction.opcode == Opcode::kBroadcast) return instruction.operand(0)->shape.rank() == 0;
  return instruction.opcode == Opcode::kConstant || instruction.opcode == Opcode::kIota;
}

class ComputationFuser {
 public:
  // A producer is recomputed in the groups of at most this many users.
  static constexpr size_t kMaxRecomputingUsers = 4;

  ComputationFuser(Module& module, Computation& computation, const FusionOptions& options)
      : module_(module),
        computation_(computation),
        options_(options),
        users_(ComputeUsers(computation)),
        order_(DepthFirstFusionOrder(computation)) {
    position_.Reserve(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) position_.Insert(order_[i], i);
  }

  bool Run() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      Instruction* instruction = *it;
      if (!CanBeRoot(*instruction) || IsCovered(instruction)) continue;
      GrowGroup(instruction);
    }
    if (groups_.empty()) return false;
    // Producers' groups first, so a consumer group sees their fusions as inputs.
    for (auto it = groups_.rbegin(); it != groups_.rend(); ++it) Materialize(*it);
    replacer_.Apply();
    computation_.SortTopologically();
    computation_.RemoveDeadInstructions();
    return true;
  }

 private:
  // Asked once per instruction: the backend's rule may be costly (the CPU
  // backend's builds a one-instruction computation and checks its code).
  bool Accepted(const Instruction& instruction) const {
    if (const bool* known = accepted_.Find(&instruction)) return *known;
    const bool accepted = (IsFusibleByDefault(instruction) || IsFusibleGather(instruction)) &&
                          (!options_.can_fuse || options_.can_fuse(instruction));
    accepted_.Insert(&instruction, accepted);
    return accepted;
  }

  bool IsFusibleGather(const Instruction& instruction) const {
    return options_.fuse_gathers && IsGatherOfArrays(instruction);
  }

  bool IsSmallConstant(const Instruction& instruction) const {
    return instruction.opcode == Opcode::kConstant &&
           instruction.shape.element_count() <= options_.max_fused_constant_elements;
  }

  bool CanBeRoot(const Instruction& instruction) const {
    return instruction.opcode != Opcode::kConstant && Accepted(instruction) && RootBuffersFit(instruction);
  }

  static size_t ResultArrays(const Instruction& instruction) {
    return instruction.shape.IsTuple() ? instruction.shape.tuple_shapes().size() : 1;
  }

  // Whether a kernel of `root` alone binds at most max_kernel_buffers
  // arrays: one per distinct operand and one per result.
  bool RootBuffersFit(const Instruction& root) const {
    const std::vector<Instruction*>& operands = root.operands;
    size_t buffers = ResultArrays(root);
    for (auto it = operands.begin(); it != operands.end(); ++it) {
      if (std::find(operands.begin(), it, *it) == it) ++buffers;
    }
    return static_cast<int64_t>(buffers) <= options_.max_kernel_buffers;
  }

  // Whether no one needs `instruction` as a value: every user is fused, and
  // every group holding a user (which reads it) holds a copy of it too.
  bool IsCovered(const Instruction* instruction) const {
    if (instruction == computation_.root()) return false;
    const std::vector<Instruction*>& users = users_.at(instruction);
    if (users.empty()) return false;
    const std::vector<size_t>* mine = groups_of_.Find(instruction);
    if (mine == nullptr) return false;
    for (const Instruction* user : users) {
      const std::vector<size_t>* theirs = groups_of_.Find(user);
      if (theirs == nullptr) return false;
      for (size_t group : *theirs) {
        if (!std::binary_search(mine->begin(), mine->end(), group)) return false;
      }
    }
    return true;
  }

  static bool IsCheapToDuplicate(const Instruction& instruction) {
    switch (instruction.opcode) {
      case Opcode::kBroadcast:
      case Opcode::kIota:
      case Opcode::kConstant:
      case Opcode::kConvert: return true;
      default: return false;
    }
  }

  // A row reduction joins a group whose root walks the same rows (or is
  // itself a row value), when it is read only through row values
  // (elementwise ops on the reduction's shape) and row broadcasts, and every
  // member keeps the row index: elementwise ops over the rows or on row
  // values, row and scalar broadcasts, and other row reductions of the same
  // rows. The kernel then computes it once per row. Members off that path
  // (say a broadcast of a per-column scale) are unconstrained. With several
  // users it is recomputed in each of their groups rather than written to
  // memory.
  bool CanAbsorbRowReduction(const Instruction* producer, const Group& group) const {
    if (!Accepted(*producer) || producer == computation_.root()) return false;
    if (static_cast<int64_t>(group.members.size()) >= options_.max_fusion_size) return false;
    const std::vector<Instruction*>& users = users_.at(producer);
    if (users.size() > kMaxRecomputingUsers) return false;
    const std::vector<int64_t>& rows = producer->shape.dimensions();
    auto is_row_value = [&](const Instruction& member) {
      if (!member.shape.IsArray() || member.shape.dimensions() != rows) return false;
      if (member.opcode == Opcode::kBroadcast) return member.operand(0)->shape.rank() == 0;
      return IsElementwise(member.opcode) || IsRowReduction(member);
    };
    auto keeps_rows = [&](const Instruction& member) {
      if (member.opcode == Opcode::kConstant || is_row_value(member)) return true;
      if (!WalksRows(member.shape, rows)) return false;
      if (member.opcode == Opcode::kBroadcast)
        return IsRowBroadcast(member) || member.operand(0)->shape.rank() == 0;
      return IsElementwise(member.opcode);
    };
    // The members on the way from the reduction to the root all joined
    // before it (producers join after their users).
    std::vector<const Instruction*> pending = {producer};
    PointerSet on_path;
    while (!pending.empty()) {
      const Instruction* node = pending.back();
      pending.pop_back();
      for (const Instruction* user : users_.at(node)) {
        if (!group.members.Contains(user) || !on_path.Insert(user)) continue;
        if (!keeps_rows(*user)) return false;
        pending.push_back(user);
      }
    }
    for (const Instruction* user : users) {
      // A row broadcast's leading dimensions are the reduction's own.
      if (!IsRowBroadcast(*user) && !(is_row_value(*user) && IsElementwise(user->opcode))) return false;
    }
    return true;
  }

  bool CanAbsorb(const Instruction* producer, const Group& group) const {
    // Some group reads it from memory, so it is computed once anyway: no
    // other group recomputes it. Without this, a group that stops at its
    // size bound leaves values that every group below copies in part, and
    // the kernels at each such boundary grow in number along a ladder of
    // values (quadratic in the program's length).
    if (materialized_.Contains(producer) && !IsCheapToDuplicate(*producer)) return false;
    if (IsRowReduction(*producer))
      return options_.fuse_row_reductions && CanAbsorbRowReduction(producer, group);
    if (producer->opcode == Opcode::kParameter || !(IsLoopFusible(*producer) || IsFusibleGather(*producer)) ||
        !Accepted(*producer))
      return false;
    if (producer->opcode == Opcode::kConstant && !IsSmallConstant(*producer)) return false;
    if (static_cast<int64_t>(group.members.size()) >= options_.max_fusion_size) return false;
    if (producer == computation_.root()) return IsCheapToDuplicate(*producer);
    const std::vector<Instruction*>& users = users_.at(producer);
    // Bounded by the group's size, not by the producer's users (a value
    // with 100k users is considered by many groups).
    bool all_users_in_group = users.size() <= group.members.size();
    for (size_t i = 0; all_users_in_group && i < users.size(); ++i)
      all_users_in_group = group.members.Contains(users[i]);
    if (all_users_in_group || IsCheapToDuplicate(*producer)) return true;
    // Recompute an elementwise producer in each of its few users' fusions
    // instead of writing it to memory, when every user is itself fused.
    if (!IsElementwise(producer->opcode) || users.size() > kMaxRecomputingUsers) return false;
    for (const Instruction* user : users) {
      if (!group.members.Contains(user) && !CanBeRoot(*user)) return false;
    }
    return true;
  }

  // Whether every group that reads `instruction` copies it in (size
  // permitting), reading its operands instead: small constants, iota,
  // broadcasts and converts. Such inputs are not counted against
  // max_fusion_inputs, or a group that just took the last input it may read
  // could not take a value that reads broadcast(constant).
  bool JoinsWhenRead(const Instruction& instruction) const {
    if (instruction.opcode == Opcode::kConstant) return IsSmallConstant(instruction) && Accepted(instruction);
    return IsCheapToDuplicate(instruction) && IsLoopFusible(instruction) && Accepted(instruction);
  }

  // Whether `group` reads at most max_fusion_inputs values once `producer`
  // joins it (it may read fewer later, if some of them join too), and binds
  // at most max_kernel_buffers arrays, counting every value it reads: those
  // that may join later might not (the group may be full by then), and
  // this bound must hold whatever happens.
  bool InputsFit(const Instruction* producer, const Group& group) const {
    size_t inputs = group.counted_inputs;
    size_t buffers = group.inputs.size() + group.outputs;
    if (group.inputs.count(producer)) {
      --buffers;
      if (!JoinsWhenRead(*producer)) --inputs;
    }
    const std::vector<Instruction*>& operands = producer->operands;
    for (auto it = operands.begin(); it != operands.end(); ++it) {
      if (group.members.Contains(*it) || group.inputs.count(*it) ||
          std::find(operands.begin(), it, *it) != it)
        continue;
      ++buffers;
      if (!JoinsWhenRead(**it)) ++inputs;
    }
    return static_cast<int64_t>(inputs) <= options_.max_fusion_inputs &&
           static_cast<int64_t>(buffers) <= options_.max_kernel_buffers;
  }

  // The classes of the indices at which `group`'s kernel would evaluate
  // `producer`, from its users in the group (all joined before it). The
  // elemental emitter caches a value per index, so an elementwise user
  // shares its own classes with its operands, while any other user (pad,
  // slice, concatenate, reshape, transpose, broadcast, reduce, ...) computes
  // a new index per operand slot for each index it is evaluated at. A rank-0
  // value is read at the empty index only.
  std::vector<uint64_t> IndexClasses(const Instruction* producer, const Group& group) const {
    if (producer->shape.IsArray() && producer->shape.rank() == 0) return {kScalarIndexClass};
    std::vector<uint64_t> classes;
    const std::vector<uint64_t> root_classes = {kRootIndexClass};
    for (const Instruction* user : users_.at(producer)) {
      if (!group.members.Contains(user)) continue;
      const std::vector<uint64_t>* found = group.index_classes.Find(user);
      const std::vector<uint64_t>& user_classes = found != nullptr ? *found : root_classes;
      if (IsElementwise(user->opcode)) {
        classes.insert(classes.end(), user_classes.begin(), user_classes.end());
        continue;
      }
      for (size_t slot = 0; slot < user->operands.size(); ++slot) {
        if (user->operands[slot] != producer) continue;
        for (uint64_t user_class : user_classes) classes.push_back(DerivedIndexClass(user, slot, user_class));
      }
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    return classes;
  }

  // Whether `group`'s kernel would evaluate `producer` at no more than
  // max_emissions_per_value indices per element; records its classes if so.
  bool EmissionsFit(const Instruction* producer, Group& group) const {
    if (EmitsNoCode(*producer)) return true;
    std::vector<uint64_t> classes = IndexClasses(producer, group);
    if (static_cast<int64_t>(classes.size()) > options_.max_emissions_per_value) return false;
    group.index_classes.Insert(producer, std::move(classes));
    return true;
  }

  void AddInput(Instruction* input, Group& group) const {
    if (group.members.Contains(input) || !group.inputs.insert(input).second) return;
    if (!JoinsWhenRead(*input)) ++group.counted_inputs;
  }

  void GrowGroup(Instruction* root) {
    const size_t id = groups_.size();
    groups_.push_back(Group{root, {}, {}, 0, ResultArrays(*root), {}});
    Group& group = groups_.back();
    group.members.Insert(root);
    group.index_classes.Insert(root, {kRootIndexClass});
    for (Instruction* operand : root->operands) AddInput(operand, group);
    JoinGroup(root, id);
    // Candidates latest first: when a producer is considered, every member
    // that uses it has already joined.
    // Each candidate carries its position, so the heap compares numbers
    // instead of looking both positions up per comparison.
    std::priority_queue<std::pair<size_t, Instruction*>> candidates;
    auto push = [&](Instruction* candidate) { candidates.emplace(*position_.Find(candidate), candidate); };
    for (Instruction* operand : root->operands) push(operand);
    // A producer pushed by several members comes out that many times in a
    // row; no member that uses it can join after it is first considered, so
    // the first answer stands (a value with many users in one group would
    // otherwise be judged once per use).
    const Instruction* previous = nullptr;
    while (!candidates.empty()) {
      Instruction* producer = candidates.top().second;
      candidates.pop();
      if (producer == previous) continue;
      previous = producer;
      CountInstructionsWalked(1);
      if (group.members.Contains(producer)) continue;
      if (!CanAbsorb(producer, group) || !InputsFit(producer, group) || !EmissionsFit(producer, group)) {
        materialized_.Insert(producer);  // a member reads it: it is some group's root or an input
        continue;
      }
      group.members.Insert(producer);
      if (group.inputs.erase(producer) > 0 && !JoinsWhenRead(*producer)) --group.counted_inputs;
      JoinGroup(producer, id);
      for (Instruction* operand : producer->operands) {
        AddInput(operand, group);
        push(operand);
      }
    }
  }

  // Group ids grow as groups are made, and an instruction joins a group
  // once, so each list stays sorted.
  void JoinGroup(const Instruction* instruction, size_t id) {
    groups_of_.Insert(instruction, {}).first->push_back(id);
  }

  void Materialize(const Group& group) {
    auto fused = std::make_unique<Computation>("fused_" + group.root->name);
    PointerMap<Instruction*> clones(group.members.size());
    std::vector<Instruction*> inputs;
    PointerMap<Instruction*> parameters;
    auto parameter_for = [&](Instruction* input) {
      if (Instruction* const* found = parameters.Find(input)) return *found;
      Attributes attrs;
      attrs.parameter_number = static_cast<int64_t>(inputs.size());
      Instruction* parameter =
          fused->AddInstruction(MakeInstruction(Opcode::kParameter, input->shape, {}, attrs));
      parameter->name = "param_" + std::to_string(inputs.size());
      inputs.push_back(input);
      parameters.Insert(input, parameter);
      return parameter;
    };
    // Iterative post-order over the members reachable from the root. A
    // member's operand that is the root of a group made before reads that
    // group's fusion (Resolve), so it is an input, not a member.
    std::vector<std::pair<Instruction*, size_t>> stack = {{group.root, 0}};
    PointerSet visited(group.members.size());
    visited.Insert(group.root);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands.size()) {
        Instruction* operand = replacer_.Resolve(node->operands[next++]);
        if (group.members.Contains(operand) && visited.Insert(operand)) stack.emplace_back(operand, 0);
        continue;
      }
      std::vector<Instruction*> operands;
      for (Instruction* original : node->operands) {
        Instruction* operand = replacer_.Resolve(original);
        operands.push_back(group.members.Contains(operand) ? *clones.Find(operand) : parameter_for(operand));
      }
      clones.Insert(node, CloneInstructionInto(*node, *fused, std::move(operands), node->name));
      CountInstructionsWalked(1);
      stack.pop_back();
    }
    fused->set_root(*clones.Find(group.root));
    Computation* called = module_.AddComputation(std::move(fused));
    Attributes attrs;
    attrs.fusion_kind = group.root->opcode == Opcode::kReduce ? FusionKind::kInput : FusionKind::kLoop;
    auto fusion = MakeInstruction(Opcode::kFusion, group.root->shape, std::move(inputs), attrs);
    fusion->called = {called};
    fusion->name = names_.Make(group.root->name + ".fusion");
    Instruction* added = computation_.AddInstruction(std::move(fusion));
    replacer_.Replace(group.root, added);
  }

  Module& module_;
  Computation& computation_;
  const FusionOptions& options_;
  UserMap users_;
  std::vector<Instruction*> order_;
  PointerMap<size_t> position_;
  std::vector<Group> groups_;
  PointerMap<std::vector<size_t>> groups_of_;  // the ids of the groups holding each instruction, ascending
  // Producers a group refused: their values are materialised.
  PointerSet materialized_;
  mutable PointerMap<bool> accepted_;
  NameUniquer names_{computation_};
  UseReplacer replacer_{computation_};
};

// The entry and every computation reached from it only through while,
// conditional and call: the ones that run as a sequence of kernels.
std::vector<Computation*> ControlComputations(const Module& module) {
  std::set<const Computation*> scalar_callees;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      const Opcode op = instruction->opcode;
      if (op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall) continue;
      for (const Computation* callee : instruction->called) scalar_callees.insert(callee);
    }
  }
  std::vector<Computation*> result;
  std::set<const Computation*> visited;
  std::vector<Computation*> stack;
  if (module.entry()) stack.push_back(module.entry());
  while (!stack.empty()) {
    Computation* computation = stack.back();
    stack.pop_back();
    if (scalar_callees.count(computation) || !visited.insert(computation).second) continue;
    result.push_back(computation);
    for (const auto& instruction : computation->instructions()) {
      const Opcode op = instruction->opcode;
      if (op != Opcode::kWhile && op != Opcode::kConditional && op != Opcode::kCall) continue;
      for (Computation* callee : instruction->called) stack.push_back(callee);
    }
  }
  return result;
}

}  // namespace

StatusOr<bool> InstructionFusion::Run(Module& module) {
  bool changed = false;
  for (Computation* computation : ControlComputations(module)) {
    ComputationFuser fuser(module, *computation, options_);
    changed = fuser.Run() || changed;
  }
  return changed;
}

}  // namespace kiln
