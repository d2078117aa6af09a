// User-defined ops: the C face of core/op_registry.h. C callbacks become core
// functions; core attributes and buffers become the C call frame.
#include "core/op_registry.h"

#include <cstdlib>
#include <cstring>
#include <deque>

#include "capi/builder_internal.h"

struct kiln_user_op_def_t {
  kiln::OpDef def;
  // The user data, in a holder the callbacks share: it lives while the
  // definition or the op registered from it does.
  std::shared_ptr<std::shared_ptr<void>> user_data = std::make_shared<std::shared_ptr<void>>();
};

namespace kiln::capi {
namespace {

kiln_op_attr_kind_t CKind(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return KILN_OP_ATTR_INT;
    case AttrKind::kFloat: return KILN_OP_ATTR_FLOAT;
    case AttrKind::kBool: return KILN_OP_ATTR_BOOL;
    case AttrKind::kString: return KILN_OP_ATTR_STRING;
    case AttrKind::kType: return KILN_OP_ATTR_TYPE;
    case AttrKind::kShape: return KILN_OP_ATTR_SHAPE;
    case AttrKind::kTensor: return KILN_OP_ATTR_TENSOR;
    case AttrKind::kList: return KILN_OP_ATTR_LIST;
  }
  return 0;
}

// C views of an attribute list; `items` keeps the list items' arrays alive.
class CAttrs {
 public:
  explicit CAttrs(const AttrList& attrs) {
    for (const auto& [name, value] : attrs) top_.push_back(Convert(name.c_str(), value));
  }
  const kiln_op_attr_t* data() const { return top_.empty() ? nullptr : top_.data(); }
  size_t size() const { return top_.size(); }

 private:
  kiln_op_attr_t Convert(const char* name, const AttrValue& value) {
    kiln_op_attr_t attr;
    std::memset(&attr, 0, sizeof attr);
    attr.struct_size = sizeof attr;
    attr.name = name;
    attr.kind = CKind(value.kind);
    switch (value.kind) {
      case AttrKind::kInt:
      case AttrKind::kBool: attr.i = value.i; break;
      case AttrKind::kFloat: attr.f = value.f; break;
      case AttrKind::kString:
        attr.s = value.s.c_str();
        attr.s_size = value.s.size();
        break;
      case AttrKind::kType: attr.type = static_cast<kiln_element_type_t>(value.type); break;
      case AttrKind::kShape:
        attr.dims = value.dims.data();
        attr.rank = value.dims.size();
        break;
      case AttrKind::kTensor:
        attr.type = static_cast<kiln_element_type_t>(value.type);
        attr.dims = value.dims.data();
        attr.rank = value.dims.size();
        attr.data = value.data.data();
        attr.byte_size = value.data.size();
        break;
      case AttrKind::kList: {
        std::vector<kiln_op_attr_t>& items = items_.emplace_back();
        for (const AttrValue& item : value.items) items.push_back(Convert("", item));
        attr.item_kind = CKind(value.item_kind);
        attr.num_items = items.size();
        attr.items = items.empty() ? nullptr : items.data();
        break;
      }
    }
    return attr;
  }

  std::vector<kiln_op_attr_t> top_;
  std::deque<std::vector<kiln_op_attr_t>> items_;
};

// A status a callback returned, taken over: OK for NULL.
Status TakeStatus(kiln_status_t* status, const char* what) {
  if (status == nullptr) return OkStatus();
  Status out(status->code, status->message.empty() ? std::string(what) + " failed" : status->message);
  if (out.code() == StatusCode::kOk)
    out = Status(StatusCode::kUnknown, std::string(what) + " returned status OK");
  kiln_status_destroy(status);
  return out;
}

// The frame a shape function gets, with what kiln_user_op_frame_set_result_dims needs.
struct ShapeFrame {
  kiln_op_call_frame_t frame;  // first: the C pointer is this struct's
  uint64_t magic;
  std::vector<kiln_op_buffer_t>* results;
  std::deque<std::vector<int64_t>>* dims;
};
constexpr uint64_t kShapeFrameMagic = 0x6b696c6e73686170ULL;

std::vector<kiln_op_buffer_t> CBuffers(std::span<const KernelBuffer> buffers) {
  std::vector<kiln_op_buffer_t> out;
  for (const KernelBuffer& b : buffers) {
    kiln_op_buffer_t c;
    std::memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.type = static_cast<kiln_element_type_t>(b.type);
    c.dims = b.dims.data();
    c.rank = b.dims.size();
    c.data = b.data;
    c.byte_size = b.byte_size;
    out.push_back(c);
  }
  return out;
}

// The gradient computation of one call from a C gradient function: a fresh
// C builder holding the parameters (operands, outputs, cotangents) the
// function builds from; its result is the tuple of the cotangents it filled.
kiln::StatusOr<OpGradientComputation> BuildCGradient(kiln_op_grad_fn fn, void* user_data,
                                                     const OpGradientContext& context) {
  auto builder = std::make_unique<kiln_builder_t>(std::string(context.op_name) + "_grad");
  int64_t number = 0;
  auto parameters = [&](std::span<const Shape> shapes, const char* name) {
    std::vector<kiln_op_t> handles;
    for (size_t i = 0; i < shapes.size(); ++i) {
      builder->ops.push_back(builder->builder.Parameter(number++, shapes[i], name + std::to_string(i)));
      handles.push_back(OpHandle(builder->tag, builder->ops.size() - 1));
    }
    return handles;
  };
  const std::vector<kiln_op_t> operands = parameters(context.operands, "operand");
  const std::vector<kiln_op_t> outputs = parameters(context.outputs, "output");
  const std::vector<kiln_op_t> output_grads = parameters(context.outputs, "output_grad");
  if (builder->HasError()) return builder->FirstError();
  std::vector<kiln_op_t> operand_grads(operands.size(), KILN_OP_INVALID);
  CAttrs attrs(*context.attrs);
  KILN_RETURN_IF_ERROR(
      TakeStatus(fn(builder.get(), operands.data(), operands.size(), outputs.data(), output_grads.data(),
                    outputs.size(), attrs.data(), attrs.size(), operand_grads.data(), user_data),
                 "the gradient function"));
  if (builder->HasError()) {
    const Status& error = builder->FirstError();
    return Status(error.code(), "its builder failed: " + error.message());
  }
  OpGradientComputation gradient;
  std::vector<Op> cotangents;
  for (size_t i = 0; i < operand_grads.size(); ++i) {
    gradient.has_gradient.push_back(operand_grads[i] != KILN_OP_INVALID);
    if (operand_grads[i] == KILN_OP_INVALID) continue;
    KILN_ASSIGN_OR_RETURN(
        Op cotangent,
        builder->Resolve("kiln_op_grad_fn", "operand_grads[" + std::to_string(i) + "]", operand_grads[i]));
    cotangents.push_back(cotangent);
  }
  KILN_ASSIGN_OR_RETURN(gradient.module, builder->builder.Build(builder->builder.Tuple(cotangents)));
  return gradient;
}

}  // namespace
}  // namespace kiln::capi

using kiln::Status;
using kiln::capi::Guard;

extern "C" {

kiln_status_t* kiln_status_create(kiln_status_code_t code, const char* message) {
  if (code == KILN_STATUS_OK) return nullptr;
  try {
    auto status = std::make_unique<kiln_status_t>();
    status->code = (code > 0 && code <= KILN_STATUS_DATA_LOSS) ? static_cast<kiln::StatusCode>(code)
                                                               : kiln::StatusCode::kUnknown;
    status->message = message != nullptr ? message : "";
    return status.release();
  } catch (...) {
    return kiln::capi::OutOfMemoryStatus();
  }
}

kiln_status_t* kiln_user_op_def_create(const char* name, kiln_user_op_def_t** out_def) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(name);
    KILN_CAPI_CHECK_NOT_NULL(out_def);
    auto def = std::make_unique<kiln_user_op_def_t>();
    def->def.name = name;
    if (def->def.name.empty()) return kiln::InvalidArgument(kiln_capi_function, ": the op name is empty");
    *out_def = def.release();
    return kiln::OkStatus();
  });
}

void kiln_user_op_def_destroy(kiln_user_op_def_t* def) { delete def; }

kiln_status_t* kiln_user_op_def_add_attr(kiln_user_op_def_t* def, const char* spec) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    KILN_CAPI_CHECK_NOT_NULL(spec);
    return def->def.AddAttr(spec);
  });
}

kiln_status_t* kiln_user_op_def_add_input(kiln_user_op_def_t* def, const char* spec) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    KILN_CAPI_CHECK_NOT_NULL(spec);
    return def->def.AddInput(spec).WithContext(def->def.name);
  });
}

kiln_status_t* kiln_user_op_def_add_output(kiln_user_op_def_t* def, const char* spec) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    KILN_CAPI_CHECK_NOT_NULL(spec);
    return def->def.AddOutput(spec).WithContext(def->def.name);
  });
}

kiln_status_t* kiln_user_op_def_set_doc(kiln_user_op_def_t* def, const char* doc) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    def->def.doc = doc != nullptr ? doc : "";
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_user_op_def_set_shape_fn(kiln_user_op_def_t* def, kiln_op_shape_fn fn) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    if (fn == nullptr) {
      def->def.shape_function = nullptr;
      return kiln::OkStatus();
    }
    def->def.shape_function = [fn, owner_name = def->def.name, data = def->user_data](
                                  const kiln::OpShapeContext& context,
                                  std::vector<kiln::Shape>& outputs) -> Status {
      std::vector<kiln::KernelBuffer> args;
      for (const kiln::Shape& s : context.operands)
        args.push_back({s.element_type(), s.dimensions(), nullptr, 0});
      std::vector<kiln_op_buffer_t> c_args = kiln::capi::CBuffers(args);
      std::deque<std::vector<int64_t>> dims;
      std::vector<kiln_op_buffer_t> c_results;
      for (const kiln::Shape& s : outputs) {
        dims.push_back(s.dimensions());
        kiln_op_buffer_t b;
        std::memset(&b, 0, sizeof b);
        b.struct_size = sizeof b;
        b.type = static_cast<kiln_element_type_t>(s.element_type());
        b.dims = dims.back().data();
        b.rank = dims.back().size();
        c_results.push_back(b);
      }
      kiln::capi::CAttrs attrs(*context.attrs);
      kiln::capi::ShapeFrame shape_frame;
      std::memset(&shape_frame.frame, 0, sizeof shape_frame.frame);
      kiln_op_call_frame_t& frame = shape_frame.frame;
      frame.struct_size = sizeof frame;
      frame.op_name = owner_name.c_str();
      frame.backend = "";
      frame.user_data = data->get();
      frame.num_args = c_args.size();
      frame.args = c_args.data();
      frame.num_results = c_results.size();
      frame.results = c_results.data();
      frame.num_attrs = attrs.size();
      frame.attrs = attrs.data();
      shape_frame.magic = kiln::capi::kShapeFrameMagic;
      shape_frame.results = &c_results;
      shape_frame.dims = &dims;
      KILN_RETURN_IF_ERROR(kiln::capi::TakeStatus(fn(&frame), "the shape function"));
      for (size_t i = 0; i < outputs.size(); ++i) {
        outputs[i] =
            kiln::Shape(outputs[i].element_type(),
                        std::vector<int64_t>(c_results[i].dims, c_results[i].dims + c_results[i].rank));
      }
      return kiln::OkStatus();
    };
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_user_op_def_set_grad_fn(kiln_user_op_def_t* def, kiln_op_grad_fn fn) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    if (fn == nullptr) {
      def->def.gradient = nullptr;
      return kiln::OkStatus();
    }
    def->def.gradient =
        [fn, data = def->user_data](
            const kiln::OpGradientContext& context) -> kiln::StatusOr<kiln::OpGradientComputation> {
      return kiln::capi::BuildCGradient(fn, data->get(), context);
    };
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_user_op_def_set_user_data(kiln_user_op_def_t* def, void* user_data,
                                              kiln_host_release_fn release) {
  const char* kiln_capi_function = __func__;
  kiln::capi::ReleaseOnce release_on_failure([&] {
    if (release != nullptr) release(user_data);
  });
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    release_on_failure.Take();
    *def->user_data = std::shared_ptr<void>(user_data, [release](void* p) {
      if (release != nullptr) release(p);
    });
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_user_op_register(const kiln_user_op_def_t* def) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(def);
    kiln::OpDef copy = def->def;
    copy.keep_alive.push_back(def->user_data);
    return kiln::RegisterOp(std::move(copy));
  });
}

kiln_status_t* kiln_user_op_register_kernel(const char* op, const char* backend, kiln_element_type_t type,
                                            kiln_op_kernel_fn fn, void* user_data,
                                            kiln_host_release_fn release) {
  const char* kiln_capi_function = __func__;
  kiln::capi::ReleaseOnce release_on_failure([&] {
    if (release != nullptr) release(user_data);
  });
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(op);
    KILN_CAPI_CHECK_NOT_NULL(backend);
    KILN_CAPI_CHECK_NOT_NULL(fn);
    if (type < KILN_TYPE_INVALID || type > KILN_TYPE_C128) {
      return kiln::InvalidArgument(kiln_capi_function, ": element type ", type,
                                   " is not an array KILN_TYPE_*");
    }
    std::string op_name = op;
    kiln::OpKernelFunction kernel = [fn, user_data, op_name](const kiln::KernelFrame& frame) -> Status {
      std::vector<kiln_op_buffer_t> args = kiln::capi::CBuffers(frame.args);
      std::vector<kiln_op_buffer_t> results = kiln::capi::CBuffers(frame.results);
      kiln::capi::CAttrs attrs(*frame.attrs);
      std::string backend_name(frame.backend);
      kiln_op_call_frame_t c;
      std::memset(&c, 0, sizeof c);
      c.struct_size = sizeof c;
      c.op_name = op_name.c_str();
      c.backend = backend_name.c_str();
      c.user_data = user_data;
      c.num_args = args.size();
      c.args = args.data();
      c.num_results = results.size();
      c.results = results.data();
      c.num_attrs = attrs.size();
      c.attrs = attrs.data();
      return kiln::capi::TakeStatus(fn(&c), "the kernel");
    };
    KILN_RETURN_IF_ERROR(kiln::RegisterOpKernel(op, backend, static_cast<kiln::ElementType>(type),
                                                std::move(kernel), nullptr));
    release_on_failure.Take();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_user_op_register_device_kernel(const char* op, const char* backend,
                                                   kiln_element_type_t type, const void* code,
                                                   size_t code_size, const char* entry) {
  return kiln_user_op_register_device_kernel_with_launch(op, backend, type, code, code_size, entry, 0, 0);
}

kiln_status_t* kiln_user_op_register_device_kernel_with_launch(const char* op, const char* backend,
                                                               kiln_element_type_t type, const void* code,
                                                               size_t code_size, const char* entry,
                                                               uint32_t block_size, uint32_t grid_size) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(op);
    KILN_CAPI_CHECK_NOT_NULL(backend);
    KILN_CAPI_CHECK_NOT_NULL(code);
    KILN_CAPI_CHECK_NOT_NULL(entry);
    if (type < KILN_TYPE_INVALID || type > KILN_TYPE_C128) {
      return kiln::InvalidArgument(kiln_capi_function, ": element type ", type,
                                   " is not an array KILN_TYPE_*");
    }
    kiln::OpDeviceKernel kernel;
    kernel.backend = backend;
    kernel.type = static_cast<kiln::ElementType>(type);
    const auto* bytes = static_cast<const uint8_t*>(code);
    kernel.code.assign(bytes, bytes + code_size);
    kernel.entry = entry;
    kernel.block_size = block_size;
    kernel.grid_size = grid_size;
    return kiln::RegisterOpDeviceKernel(op, std::move(kernel));
  });
}

kiln_op_t kiln_op_call_registered(kiln_builder_t* builder, const char* name, const kiln_op_t* operands,
                                  size_t num_operands, const char* attrs) {
  return kiln::capi::BuildOp(builder, __func__, [&](kiln::capi::OpContext& c) {
    if (name == nullptr) c.Fail(kiln::capi::NullArgument(c.function(), "name"));
    std::vector<kiln::Op> xs = c.ops(operands, num_operands, "operands");
    if (!c.ok()) return kiln::Op();
    kiln::StatusOr<kiln::AttrList> parsed = kiln::ParseAttrDict(attrs != nullptr ? attrs : "");
    if (!parsed.ok()) {
      c.Fail(
          kiln::InvalidArgument(c.function(), ": op '", name, "': attributes: ", parsed.status().message()));
      return kiln::Op();
    }
    kiln::StatusOr<kiln::Op> op = kiln::BuildRegisteredOpCall(c.builder(), name, xs, *parsed);
    if (!op.ok()) {
      c.Fail(op.status());
      return kiln::Op();
    }
    return *op;
  });
}

kiln_status_t* kiln_user_op_frame_set_result_dims(kiln_op_call_frame_t* frame, size_t index,
                                                  const int64_t* dims, size_t rank) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(frame);
    if (rank > 0) KILN_CAPI_CHECK_NOT_NULL(dims);
    auto* shape_frame = reinterpret_cast<kiln::capi::ShapeFrame*>(frame);
    if (frame->struct_size != sizeof(kiln_op_call_frame_t) ||
        shape_frame->magic != kiln::capi::kShapeFrameMagic) {
      return kiln::InvalidArgument(kiln_capi_function, ": the frame is not a shape function's");
    }
    if (index >= shape_frame->results->size()) {
      return kiln::OutOfRange(kiln_capi_function, ": result ", index, " of ", shape_frame->results->size());
    }
    for (size_t i = 0; i < rank; ++i) {
      if (dims[i] < 0) return kiln::InvalidArgument(kiln_capi_function, ": dims[", i, "] is negative");
    }
    std::vector<int64_t>& storage = shape_frame->dims->emplace_back(dims, dims + rank);
    kiln_op_buffer_t& result = (*shape_frame->results)[index];
    result.dims = storage.data();
    result.rank = storage.size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_user_op_registry_describe(char** out_text) {
  const char* kiln_capi_function = __func__;
  return Guard(__func__, [&]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(out_text);
    std::string text = kiln::DescribeRegisteredOps();
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (copy == nullptr) return kiln::ResourceExhausted(kiln_capi_function, ": out of memory");
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *out_text = copy;
    return kiln::OkStatus();
  });
}

}  // extern "C"
