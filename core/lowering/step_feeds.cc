#include "core/lowering/step_feeds.h"

#include <mutex>
#include <utility>

namespace kiln {
namespace {

// A literal of `shape` from its arrays in order (consumed from `next`).
StatusOr<Literal> AssembleFeedValue(const Shape& shape, std::vector<Literal>& arrays, size_t& next,
                                    const std::string& backend) {
  if (shape.IsArray()) {
    if (next >= arrays.size()) return Internal(backend, ": outfeed ran out of arrays");
    return std::move(arrays[next++]);
  }
  if (!shape.IsTuple()) return Literal(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    KILN_ASSIGN_OR_RETURN(Literal part, AssembleFeedValue(element, arrays, next, backend));
    elements.push_back(std::move(part));
  }
  return Literal::Tuple(std::move(elements));
}

}  // namespace

StatusOr<std::vector<Literal>> TakeInfeedArrays(interpreter::HostQueues& queues, const Shape& shape,
                                                size_t arrays, const std::string& backend) {
  if (shape.IsTuple() && shape.tuple_shapes().empty()) return std::vector<Literal>{};
  Literal data;
  {
    std::lock_guard<std::mutex> lock(queues.mutex);
    if (queues.infeed.empty()) {
      return FailedPrecondition(
          backend, ": infeed of ", shape.ToString(),
          " found the infeed queue empty; queue an array with kiln_client_transfer_to_infeed first");
    }
    if (!queues.infeed.front().shape().Compatible(shape)) {
      return InvalidArgument(backend, ": infeed expects ", shape.ToString(), " but the queue holds ",
                             queues.infeed.front().shape().ToString());
    }
    data = std::move(queues.infeed.front());
    queues.infeed.pop_front();
  }
  std::vector<Literal> leaves;
  if (data.shape().IsArray()) {
    leaves.push_back(std::move(data));
  } else {
    for (Literal& leaf : data.Leaves()) {
      if (leaf.shape().IsArray()) leaves.push_back(std::move(leaf));
    }
  }
  if (leaves.size() != arrays)
    return Internal(backend, ": infeed has ", leaves.size(), " arrays for ", arrays);
  return leaves;
}

std::vector<Shape> FeedArrayShapes(const Shape& shape) {
  std::vector<Shape> arrays;
  for (Shape& leaf : shape.Leaves()) {
    if (leaf.IsArray()) arrays.push_back(std::move(leaf));
  }
  return arrays;
}

Status PutOutfeedValue(interpreter::HostQueues& queues, const Shape& shape, std::vector<Literal> arrays,
                       const std::string& backend) {
  size_t next = 0;
  KILN_ASSIGN_OR_RETURN(Literal value, AssembleFeedValue(shape, arrays, next, backend));
  std::lock_guard<std::mutex> lock(queues.mutex);
  queues.outfeed.push_back(std::move(value));
  return OkStatus();
}

}  // namespace kiln
