// Derivatives: kiln_computation_vjp and kiln_computation_value_and_grad over
// the core's reverse mode (core/autodiff/vjp.h), kiln_computation_jvp over
// its forward mode (core/autodiff/jvp.h).
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include "capi/internal.h"
#include "core/autodiff/jvp.h"
#include "core/autodiff/vjp.h"

using kiln::Status;
using kiln::capi::Guard;

namespace {

// The core names its errors after the command line ("kiln grad: ...",
// "kiln jvp: ..."); a C caller reads the name of the function it called
// instead.
Status Renamed(const Status& status, const char* function) {
  std::string_view message = status.message();
  for (std::string_view prefix : {"kiln grad: ", "kiln jvp: "}) {
    if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
  }
  return Status(status.code(), std::string(function) + ": " + std::string(message));
}

// Checks `wrt` against the arguments rules the core does not (empty, repeats)
// and builds the gradient module; `scalar_loss` also asks for a result that
// is one floating-point scalar.
Status BuildGradient(const char* function, const kiln_computation_t* computation, const int64_t* wrt,
                     size_t num_wrt, bool scalar_loss, kiln_computation_t** out_computation) {
  if (computation == nullptr) return kiln::capi::NullArgument(function, "computation");
  if (out_computation == nullptr) return kiln::capi::NullArgument(function, "out_computation");
  KILN_ASSIGN_OR_RETURN(std::span<const int64_t> numbers, kiln::capi::IntList(function, "wrt", wrt, num_wrt));
  if (numbers.empty()) {
    return kiln::InvalidArgument(function, ": wrt is empty; name the parameter numbers to differentiate");
  }
  std::unordered_set<int64_t> seen;
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (!seen.insert(numbers[i]).second) {
      return kiln::InvalidArgument(function, ": wrt[", i, "] repeats parameter ", numbers[i],
                                   "; name each parameter once");
    }
  }
  const kiln::Module& module = *computation->module;
  if (module.entry() == nullptr)
    return kiln::FailedPrecondition(function, ": the module has no entry computation");
  if (scalar_loss) {
    const kiln::Shape& result = module.entry()->root()->shape;
    if (result.IsTuple() || !result.IsScalar() || !kiln::IsFloating(result.element_type())) {
      return kiln::InvalidArgument(function, ": the result of '", module.entry()->name(), "' is ",
                                   result.ToString(),
                                   "; a loss is one f16, bf16, f32 or f64 scalar (use kiln_computation_vjp "
                                   "for other results)");
    }
  }
  kiln::StatusOr<std::unique_ptr<kiln::Module>> gradient = kiln::autodiff::BuildVjp(module, numbers);
  if (!gradient.ok()) return Renamed(gradient.status(), function);
  auto result = std::make_unique<kiln_computation_t>();
  result->module = std::move(*gradient);
  *out_computation = result.release();
  return kiln::OkStatus();
}

Status BuildTangents(const char* function, const kiln_computation_t* computation, const int64_t* wrt,
                     size_t num_wrt, kiln_computation_t** out_computation) {
  if (computation == nullptr) return kiln::capi::NullArgument(function, "computation");
  if (out_computation == nullptr) return kiln::capi::NullArgument(function, "out_computation");
  KILN_ASSIGN_OR_RETURN(std::span<const int64_t> numbers, kiln::capi::IntList(function, "wrt", wrt, num_wrt));
  if (numbers.empty()) {
    return kiln::InvalidArgument(function, ": wrt is empty; name the parameter numbers to differentiate");
  }
  const kiln::Module& module = *computation->module;
  if (module.entry() == nullptr)
    return kiln::FailedPrecondition(function, ": the module has no entry computation");
  kiln::StatusOr<std::unique_ptr<kiln::Module>> derivative = kiln::autodiff::BuildJvp(module, numbers);
  if (!derivative.ok()) return Renamed(derivative.status(), function);
  auto result = std::make_unique<kiln_computation_t>();
  result->module = std::move(*derivative);
  *out_computation = result.release();
  return kiln::OkStatus();
}

}  // namespace

extern "C" {

kiln_status_t* kiln_computation_vjp(const kiln_computation_t* computation, const int64_t* wrt, size_t num_wrt,
                                    kiln_computation_t** out_computation) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    return BuildGradient(kiln_capi_function, computation, wrt, num_wrt, /*scalar_loss=*/false,
                         out_computation);
  });
}

kiln_status_t* kiln_computation_value_and_grad(const kiln_computation_t* computation, const int64_t* wrt,
                                               size_t num_wrt, kiln_computation_t** out_computation) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    return BuildGradient(kiln_capi_function, computation, wrt, num_wrt, /*scalar_loss=*/true,
                         out_computation);
  });
}

kiln_status_t* kiln_computation_jvp(const kiln_computation_t* computation, const int64_t* wrt, size_t num_wrt,
                                    kiln_computation_t** out_computation) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    return BuildTangents(kiln_capi_function, computation, wrt, num_wrt, out_computation);
  });
}

}  // extern "C"
