"""Loads libkiln and declares the C functions of kiln.h for ctypes.

This module is private: it only knows names, argument types and structs. The
declarations are checked against capi/include/kiln/kiln.h by the test suite.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)

#: The ABI major version this binding speaks (the SONAME suffix).
ABI_MAJOR = 0

_STATUS = c_void_p  # kiln_status_t*, NULL on success
_H = c_void_p  # any opaque handle
_PP = POINTER(c_void_p)  # out-param for a handle, or an array of handles
_STR = c_char_p
_OP = c_int64  # kiln_op_t
_OPP = POINTER(c_int64)
_I64P = POINTER(c_int64)
_I32P = POINTER(c_int32)
_SIZEP = POINTER(c_size_t)

OP_INVALID = -1

_CUSTOM_CALL_FN = CFUNCTYPE(None, c_void_p, POINTER(c_void_p))
CustomCallFn = _CUSTOM_CALL_FN
#: kiln_host_release_fn: void (*)(void* user_data)
HostReleaseFn = CFUNCTYPE(None, c_void_p)
#: kiln_event_callback_fn: void (*)(const kiln_status_t* status, void* user_data)
EventCallbackFn = CFUNCTYPE(None, c_void_p, c_void_p)


class OpAttr(Structure):
    """kiln_op_attr_t: an attribute value of a user-defined op."""


OpAttr._fields_ = [
    ("struct_size", c_size_t),
    ("name", c_char_p),
    ("kind", c_int32),
    ("i", c_int64),
    ("f", ctypes.c_double),
    ("s", c_void_p),
    ("s_size", c_size_t),
    ("type", c_int32),
    ("dims", _I64P),
    ("rank", c_size_t),
    ("data", c_void_p),
    ("byte_size", c_size_t),
    ("item_kind", c_int32),
    ("num_items", c_size_t),
    ("items", POINTER(OpAttr)),
]


class OpBuffer(Structure):
    """kiln_op_buffer_t: an argument or result of a user-defined op's kernel."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("type", c_int32),
        ("dims", _I64P),
        ("rank", c_size_t),
        ("data", c_void_p),
        ("byte_size", c_size_t),
    ]


class OpCallFrame(Structure):
    """kiln_op_call_frame_t: the typed call frame of a kernel or shape function."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("op_name", c_char_p),
        ("backend", c_char_p),
        ("device", c_void_p),
        ("stream", c_void_p),
        ("user_data", c_void_p),
        ("num_args", c_size_t),
        ("args", POINTER(OpBuffer)),
        ("num_results", c_size_t),
        ("results", POINTER(OpBuffer)),
        ("num_attrs", c_size_t),
        ("attrs", POINTER(OpAttr)),
    ]


#: kiln_op_kernel_fn and kiln_op_shape_fn: kiln_status_t* (*)(kiln_op_call_frame_t*)
OpKernelFn = CFUNCTYPE(c_void_p, POINTER(OpCallFrame))
OpShapeFn = CFUNCTYPE(c_void_p, POINTER(OpCallFrame))
#: kiln_op_grad_fn
OpGradFn = CFUNCTYPE(
    c_void_p, c_void_p, _OPP, c_size_t, _OPP, _OPP, c_size_t, POINTER(OpAttr), c_size_t, _OPP, c_void_p
)


class ClientOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("backend", c_char_p), ("num_devices", c_int32)]


class CompileOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("optimization_level", c_int32),
        ("num_threads", c_int32),
        ("allow_unsafe_nan_math", c_int32),
    ]


class ExecuteOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("rng_seed", c_uint64),
        ("timeout_ns", c_int64),
        ("cancellation", c_void_p),
        ("device", c_void_p),
        ("donated_arguments", _SIZEP),
        ("num_donated_arguments", c_size_t),
    ]


def _list_fields(*names: str) -> list:
    fields: list = []
    for name in names:
        if name.startswith("="):
            fields.append((name[1:], c_int64))
        else:
            fields += [(name, _I64P), ("num_" + name, c_size_t)]
    return fields


class GatherDimensionNumbers(Structure):
    _fields_ = [("struct_size", c_size_t)] + _list_fields(
        "offset_dims",
        "collapsed_slice_dims",
        "start_index_map",
        "=index_vector_dim",
        "operand_batching_dims",
        "start_indices_batching_dims",
    )


class ScatterDimensionNumbers(Structure):
    _fields_ = [("struct_size", c_size_t)] + _list_fields(
        "update_window_dims",
        "inserted_window_dims",
        "scatter_dims_to_operand_dims",
        "=index_vector_dim",
        "input_batching_dims",
        "scatter_indices_batching_dims",
    )


class DotDimensionNumbers(Structure):
    _fields_ = [("struct_size", c_size_t)] + _list_fields(
        "lhs_contracting_dimensions",
        "rhs_contracting_dimensions",
        "lhs_batch_dimensions",
        "rhs_batch_dimensions",
    )


class ConvDimensionNumbers(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("input_batch_dimension", c_int64),
        ("input_feature_dimension", c_int64),
        ("input_spatial_dimensions", _I64P),
        ("kernel_input_feature_dimension", c_int64),
        ("kernel_output_feature_dimension", c_int64),
        ("kernel_spatial_dimensions", _I64P),
        ("output_batch_dimension", c_int64),
        ("output_feature_dimension", c_int64),
        ("output_spatial_dimensions", _I64P),
        ("num_spatial_dimensions", c_size_t),
    ]


# name: (restype, argtypes), in kiln.h order.
FUNCTIONS = {
    "kiln_version": (_STR, []),
    "kiln_version_number": (c_uint32, []),
    "kiln_status_code": (c_int32, [_STATUS]),
    "kiln_status_message": (_STR, [_STATUS]),
    "kiln_status_code_name": (_STR, [c_int32]),
    "kiln_status_destroy": (None, [_STATUS]),
    "kiln_string_destroy": (None, [c_void_p]),
    "kiln_element_type_name": (_STR, [c_int32]),
    "kiln_element_type_byte_width": (c_size_t, [c_int32]),
    "kiln_backend_count": (_STATUS, [_SIZEP]),
    "kiln_backend_name": (_STATUS, [c_size_t, _PP]),
    "kiln_client_create": (_STATUS, [POINTER(ClientOptions), _PP]),
    "kiln_client_destroy": (None, [_H]),
    "kiln_client_backend_name": (_STATUS, [_H, _PP]),
    "kiln_client_device_count": (_STATUS, [_H, _SIZEP]),
    "kiln_client_device_description": (_STATUS, [_H, c_size_t, _PP]),
    "kiln_client_device": (_STATUS, [_H, c_size_t, _PP]),
    "kiln_device_index": (_STATUS, [_H, _SIZEP]),
    "kiln_device_description": (_STATUS, [_H, _PP]),
    "kiln_client_transfer_to_infeed": (_STATUS, [_H, c_int32, _I64P, c_size_t, c_void_p, c_size_t]),
    "kiln_register_custom_call": (_STATUS, [_STR, _CUSTOM_CALL_FN]),
    "kiln_status_create": (_STATUS, [c_int32, _STR]),
    "kiln_user_op_def_create": (_STATUS, [_STR, _PP]),
    "kiln_user_op_def_destroy": (None, [_H]),
    "kiln_user_op_def_add_attr": (_STATUS, [_H, _STR]),
    "kiln_user_op_def_add_input": (_STATUS, [_H, _STR]),
    "kiln_user_op_def_add_output": (_STATUS, [_H, _STR]),
    "kiln_user_op_def_set_doc": (_STATUS, [_H, _STR]),
    "kiln_user_op_def_set_shape_fn": (_STATUS, [_H, OpShapeFn]),
    "kiln_user_op_def_set_grad_fn": (_STATUS, [_H, OpGradFn]),
    "kiln_user_op_def_set_user_data": (_STATUS, [_H, c_void_p, HostReleaseFn]),
    "kiln_user_op_register": (_STATUS, [_H]),
    "kiln_user_op_register_kernel": (_STATUS, [_STR, _STR, c_int32, OpKernelFn, c_void_p, HostReleaseFn]),
    "kiln_user_op_register_device_kernel": (_STATUS, [_STR, _STR, c_int32, c_void_p, c_size_t, _STR]),
    "kiln_user_op_register_device_kernel_with_launch": (
        _STATUS,
        [_STR, _STR, c_int32, c_void_p, c_size_t, _STR, c_uint32, c_uint32],
    ),
    "kiln_op_call_registered": (_OP, [_H, _STR, _OPP, c_size_t, _STR]),
    "kiln_user_op_frame_set_result_dims": (_STATUS, [POINTER(OpCallFrame), c_size_t, _I64P, c_size_t]),
    "kiln_user_op_registry_describe": (_STATUS, [_PP]),
    "kiln_builder_create": (_STATUS, [_STR, _PP]),
    "kiln_builder_destroy": (None, [_H]),
    "kiln_builder_first_error": (_STATUS, [_H]),
    "kiln_builder_get_shape": (_STATUS, [_H, _OP, _I32P, _I64P, c_size_t, _SIZEP]),
    "kiln_builder_build": (_STATUS, [_H, _OP, _PP]),
    "kiln_op_parameter": (_OP, [_H, c_int64, c_int32, _I64P, c_size_t, _I64P, _STR]),
    "kiln_op_constant": (_OP, [_H, c_int32, _I64P, c_size_t, c_void_p, c_size_t]),
    "kiln_op_constant_f32": (_OP, [_H, c_float]),
    "kiln_op_constant_f64": (_OP, [_H, c_double]),
    "kiln_op_constant_s32": (_OP, [_H, c_int32]),
    "kiln_op_constant_s64": (_OP, [_H, c_int64]),
    "kiln_op_constant_u32": (_OP, [_H, c_uint32]),
    "kiln_op_constant_pred": (_OP, [_H, c_int]),
    "kiln_op_iota": (_OP, [_H, c_int32, _I64P, c_size_t, c_int64]),
    "kiln_op_add": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_sub": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_mul": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_div": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_rem": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_max": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_min": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_pow": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_atan2": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_and": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_or": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_xor": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_shift_left": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_shift_right_arithmetic": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_shift_right_logical": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_complex": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_eq": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_ne": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_ge": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_gt": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_le": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_lt": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_compare": (_OP, [_H, _OP, _OP, c_int32, c_int32, _I64P, c_size_t]),
    "kiln_op_abs": (_OP, [_H, _OP]),
    "kiln_op_neg": (_OP, [_H, _OP]),
    "kiln_op_not": (_OP, [_H, _OP]),
    "kiln_op_sign": (_OP, [_H, _OP]),
    "kiln_op_floor": (_OP, [_H, _OP]),
    "kiln_op_ceil": (_OP, [_H, _OP]),
    "kiln_op_round": (_OP, [_H, _OP]),
    "kiln_op_round_nearest_even": (_OP, [_H, _OP]),
    "kiln_op_exp": (_OP, [_H, _OP]),
    "kiln_op_expm1": (_OP, [_H, _OP]),
    "kiln_op_log": (_OP, [_H, _OP]),
    "kiln_op_log1p": (_OP, [_H, _OP]),
    "kiln_op_logistic": (_OP, [_H, _OP]),
    "kiln_op_sqrt": (_OP, [_H, _OP]),
    "kiln_op_rsqrt": (_OP, [_H, _OP]),
    "kiln_op_cbrt": (_OP, [_H, _OP]),
    "kiln_op_sin": (_OP, [_H, _OP]),
    "kiln_op_cos": (_OP, [_H, _OP]),
    "kiln_op_tan": (_OP, [_H, _OP]),
    "kiln_op_tanh": (_OP, [_H, _OP]),
    "kiln_op_erf": (_OP, [_H, _OP]),
    "kiln_op_is_finite": (_OP, [_H, _OP]),
    "kiln_op_clz": (_OP, [_H, _OP]),
    "kiln_op_popcnt": (_OP, [_H, _OP]),
    "kiln_op_real": (_OP, [_H, _OP]),
    "kiln_op_imag": (_OP, [_H, _OP]),
    "kiln_op_copy": (_OP, [_H, _OP]),
    "kiln_op_cross_replica_sum": (_OP, [_H, _OP]),
    "kiln_op_optimization_barrier": (_OP, [_H, _OP]),
    "kiln_op_select": (_OP, [_H, _OP, _OP, _OP]),
    "kiln_op_clamp": (_OP, [_H, _OP, _OP, _OP]),
    "kiln_op_convert": (_OP, [_H, _OP, c_int32]),
    "kiln_op_bitcast_convert": (_OP, [_H, _OP, c_int32]),
    "kiln_op_reduce_precision": (_OP, [_H, _OP, c_int64, c_int64]),
    "kiln_op_broadcast": (_OP, [_H, _OP, _I64P, c_size_t]),
    "kiln_op_broadcast_in_dim": (_OP, [_H, _OP, _I64P, c_size_t, _I64P, c_size_t]),
    "kiln_op_reshape": (_OP, [_H, _OP, _I64P, c_size_t]),
    "kiln_op_reshape_with_dimensions": (_OP, [_H, _OP, _I64P, c_size_t, _I64P, c_size_t]),
    "kiln_op_collapse": (_OP, [_H, _OP, _I64P, c_size_t]),
    "kiln_op_transpose": (_OP, [_H, _OP, _I64P, c_size_t]),
    "kiln_op_rev": (_OP, [_H, _OP, _I64P, c_size_t]),
    "kiln_op_concat_in_dim": (_OP, [_H, _OPP, c_size_t, c_int64]),
    "kiln_op_pad": (_OP, [_H, _OP, _OP, _I64P, _I64P, _I64P, c_size_t]),
    "kiln_op_slice": (_OP, [_H, _OP, _I64P, _I64P, _I64P, c_size_t]),
    "kiln_op_slice_in_dim": (_OP, [_H, _OP, c_int64, c_int64, c_int64, c_int64]),
    "kiln_op_dynamic_slice": (_OP, [_H, _OP, _OP, _I64P, c_size_t]),
    "kiln_op_dynamic_slice_scalars": (_OP, [_H, _OP, _OPP, c_size_t, _I64P, c_size_t]),
    "kiln_op_dynamic_update_slice": (_OP, [_H, _OP, _OP, _OP]),
    "kiln_op_dynamic_update_slice_scalars": (_OP, [_H, _OP, _OP, _OPP, c_size_t]),
    "kiln_op_get_dimension_size": (_OP, [_H, _OP, c_int64]),
    "kiln_op_gather": (_OP, [_H, _OP, _OP, POINTER(GatherDimensionNumbers), _I64P, c_size_t, c_int]),
    "kiln_op_scatter": (
        _OP,
        [_H, _OPP, c_size_t, _OP, _OPP, c_size_t, _H, POINTER(ScatterDimensionNumbers), c_int, c_int],
    ),
    "kiln_op_tuple": (_OP, [_H, _OPP, c_size_t]),
    "kiln_op_get_tuple_element": (_OP, [_H, _OP, c_int64]),
    "kiln_op_dot": (_OP, [_H, _OP, _OP]),
    "kiln_op_dot_general": (_OP, [_H, _OP, _OP, POINTER(DotDimensionNumbers)]),
    "kiln_op_set_precision": (_OP, [_H, _OP, c_int32, c_int32]),
    "kiln_op_fft": (_OP, [_H, _OP, c_int32, _I64P, c_size_t]),
    "kiln_op_conv": (_OP, [_H, _OP, _OP, _I64P, c_size_t, c_int32]),
    "kiln_op_conv_with_general_padding": (_OP, [_H, _OP, _OP, _I64P, _I64P, _I64P, c_size_t]),
    "kiln_op_conv_with_general_dimensions": (
        _OP,
        [_H, _OP, _OP, _I64P, c_size_t, c_int32, POINTER(ConvDimensionNumbers)],
    ),
    "kiln_op_conv_general": (
        _OP,
        [_H, _OP, _OP, _I64P, _I64P, _I64P, c_size_t, POINTER(ConvDimensionNumbers)],
    ),
    "kiln_op_conv_general_dilated": (
        _OP,
        [
            _H,
            _OP,
            _OP,
            _I64P,
            _I64P,
            _I64P,
            _I64P,
            _I64P,
            c_size_t,
            POINTER(ConvDimensionNumbers),
            c_int64,
            c_int64,
        ],
    ),
    "kiln_op_reduce": (_OP, [_H, _OP, _OP, _H, _I64P, c_size_t]),
    "kiln_op_reduce_variadic": (_OP, [_H, _OPP, _OPP, c_size_t, _H, _I64P, c_size_t]),
    "kiln_op_reduce_window": (_OP, [_H, _OP, _OP, _H, _I64P, _I64P, c_size_t, c_int32]),
    "kiln_op_reduce_window_general": (
        _OP,
        [_H, _OPP, _OPP, c_size_t, _H, _I64P, _I64P, _I64P, _I64P, _I64P, _I64P, c_size_t],
    ),
    "kiln_op_select_and_scatter": (_OP, [_H, _OP, _H, _I64P, _I64P, c_size_t, c_int32, _OP, _OP, _H]),
    "kiln_op_select_and_scatter_general": (
        _OP,
        [_H, _OP, _H, _I64P, _I64P, _I64P, _I64P, c_size_t, _OP, _OP, _H],
    ),
    "kiln_op_map": (_OP, [_H, _OPP, c_size_t, _H, _I64P, c_size_t]),
    "kiln_op_sort": (_OP, [_H, _OP]),
    "kiln_op_sort_variadic": (_OP, [_H, _OPP, c_size_t, _H, c_int64, c_int]),
    "kiln_op_all_reduce": (_OP, [_H, _OP, _H]),
    "kiln_op_batch_norm_training": (_OP, [_H, _OP, _OP, _OP, c_float, c_int64]),
    "kiln_op_batch_norm_inference": (_OP, [_H, _OP, _OP, _OP, _OP, _OP, c_float, c_int64]),
    "kiln_op_batch_norm_grad": (_OP, [_H, _OP, _OP, _OP, _OP, _OP, c_float, c_int64]),
    "kiln_op_call": (_OP, [_H, _H, _OPP, c_size_t]),
    "kiln_op_while": (_OP, [_H, _H, _H, _OP]),
    "kiln_op_conditional": (_OP, [_H, _OP, _OP, _H, _OP, _H]),
    "kiln_op_conditional_indexed": (_OP, [_H, _OP, _PP, _OPP, c_size_t]),
    "kiln_op_rng_uniform": (_OP, [_H, _OP, _OP, c_int32, _I64P, c_size_t]),
    "kiln_op_rng_normal": (_OP, [_H, _OP, _OP, c_int32, _I64P, c_size_t]),
    "kiln_op_rng_bernoulli": (_OP, [_H, _OP, c_int32, _I64P, c_size_t]),
    "kiln_op_rng_bit_generator": (_OP, [_H, c_int32, _OP, c_int32, _I64P, c_size_t]),
    "kiln_op_infeed": (_OP, [_H, c_int32, _I64P, c_size_t, _STR]),
    "kiln_op_outfeed": (_OP, [_H, _OP, _STR]),
    "kiln_op_custom_call": (_OP, [_H, _STR, _OPP, c_size_t, c_int32, _I64P, c_size_t, _STR, c_int]),
    "kiln_op_after_all": (_OP, [_H, _OPP, c_size_t]),
    "kiln_op_create_token": (_OP, [_H]),
    "kiln_computation_from_hlo_text": (_STATUS, [_STR, c_size_t, _PP]),
    "kiln_computation_to_hlo_text": (_STATUS, [_H, _PP]),
    "kiln_computation_parameter_count": (_STATUS, [_H, _SIZEP]),
    "kiln_computation_destroy": (None, [_H]),
    # Gradients (0.2): wrt is (int64 array, count).
    "kiln_computation_vjp": (_STATUS, [_H, _I64P, c_size_t, _PP]),
    "kiln_computation_value_and_grad": (_STATUS, [_H, _I64P, c_size_t, _PP]),
    "kiln_computation_jvp": (_STATUS, [_H, _I64P, c_size_t, _PP]),
    "kiln_client_buffer_from_host": (_STATUS, [_H, c_int32, _I64P, c_size_t, _I64P, c_void_p, c_size_t, _PP]),
    "kiln_device_buffer_from_host": (_STATUS, [_H, c_int32, _I64P, c_size_t, _I64P, c_void_p, c_size_t, _PP]),
    "kiln_device_buffer_alias_host": (
        _STATUS,
        [_H, c_int32, _I64P, c_size_t, c_void_p, c_size_t, HostReleaseFn, c_void_p, _PP],
    ),
    "kiln_buffer_is_host_alias": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_device_buffer_alias_cuda_memory": (
        _STATUS,
        [_H, c_int32, _I64P, c_size_t, c_uint64, HostReleaseFn, c_void_p, _PP],
    ),
    "kiln_buffer_cuda_memory": (_STATUS, [_H, POINTER(c_int), POINTER(c_uint64)]),
    "kiln_buffer_destroy": (None, [_H]),
    "kiln_buffer_device": (_STATUS, [_H, _PP]),
    "kiln_buffer_copy_to_device": (_STATUS, [_H, _H, _PP]),
    "kiln_buffer_element_type": (_STATUS, [_H, _I32P]),
    "kiln_buffer_rank": (_STATUS, [_H, _SIZEP]),
    "kiln_buffer_dimensions": (_STATUS, [_H, _I64P, c_size_t]),
    "kiln_buffer_minor_to_major": (_STATUS, [_H, _I64P, c_size_t]),
    "kiln_buffer_byte_size": (_STATUS, [_H, _SIZEP]),
    "kiln_buffer_to_host": (_STATUS, [_H, c_void_p, c_size_t]),
    "kiln_client_buffer_from_npy_file": (_STATUS, [_H, _STR, c_int32, _PP]),
    "kiln_buffer_to_npy_file": (_STATUS, [_H, _STR]),
    # Safetensors files (0.2): the kiln_safetensors_t* is a _H; names and values are borrowed.
    "kiln_safetensors_open": (_STATUS, [_STR, _PP]),
    "kiln_safetensors_destroy": (None, [_H]),
    "kiln_safetensors_tensor_count": (_STATUS, [_H, _SIZEP]),
    "kiln_safetensors_tensor_name": (_STATUS, [_H, c_size_t, _PP]),
    "kiln_safetensors_metadata": (_STATUS, [_H, _STR, _PP]),
    "kiln_safetensors_read": (_STATUS, [_H, _H, _STR, _PP]),
    "kiln_safetensors_write_file": (_STATUS, [_STR, _PP, _PP, c_size_t, _PP, _PP, c_size_t]),
    # DLPack: the tensors are DLManagedTensorVersioned* / DLManagedTensor* (kiln._dlpack).
    "kiln_buffer_to_dlpack_versioned": (_STATUS, [_H, _PP]),
    "kiln_buffer_to_dlpack": (_STATUS, [_H, _PP]),
    "kiln_device_buffer_from_dlpack_versioned": (_STATUS, [_H, c_void_p, _PP]),
    "kiln_device_buffer_from_dlpack": (_STATUS, [_H, c_void_p, _PP]),
    "kiln_buffer_ready_event": (_STATUS, [_H, _PP]),
    "kiln_event_await": (_STATUS, [_H]),
    "kiln_event_is_ready": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_event_on_ready": (_STATUS, [_H, EventCallbackFn, c_void_p]),
    "kiln_event_destroy": (None, [_H]),
    "kiln_client_compile": (_STATUS, [_H, _H, POINTER(CompileOptions), _PP]),
    "kiln_executable_destroy": (None, [_H]),
    "kiln_executable_parameter_count": (_STATUS, [_H, _SIZEP]),
    "kiln_executable_result_count": (_STATUS, [_H, _SIZEP]),
    "kiln_executable_parameter_type": (_STATUS, [_H, c_size_t, _I32P]),
    "kiln_cancellation_create": (_STATUS, [_PP]),
    "kiln_cancellation_cancel": (None, [_H]),
    "kiln_cancellation_is_cancelled": (_STATUS, [_H, POINTER(c_int)]),
    "kiln_cancellation_destroy": (None, [_H]),
    "kiln_executable_execute": (_STATUS, [_H, _PP, c_size_t, POINTER(ExecuteOptions), _PP, c_size_t, _SIZEP]),
    "kiln_executable_execute_async": (
        _STATUS,
        [_H, _PP, c_size_t, POINTER(ExecuteOptions), _PP, c_size_t, _SIZEP, _PP],
    ),
}


def _candidates() -> list[str]:
    override = os.environ.get("KILN_LIBRARY_PATH")
    if override:
        if os.path.isdir(override):
            return [
                os.path.join(override, name)
                for name in (f"libkiln.so.{ABI_MAJOR}", "libkiln.so", "libkiln.dylib", "kiln.dll")
            ]
        return [override]
    found = ctypes.util.find_library("kiln")
    names = [f"libkiln.so.{ABI_MAJOR}"]
    if found:
        names.insert(0, found)
    return names


def _load() -> ctypes.CDLL:
    errors = []
    for candidate in _candidates():
        if os.sep in candidate and not os.path.exists(candidate):
            errors.append(f"{candidate}: no such file")
            continue
        try:
            lib = ctypes.CDLL(candidate)
        except OSError as e:
            errors.append(str(e))
            continue
        missing = [name for name in FUNCTIONS if not hasattr(lib, name)]
        if missing:
            raise ImportError(f"kiln: {candidate} is older than this binding; it lacks " + ", ".join(missing))
        for name, (restype, argtypes) in FUNCTIONS.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        return lib
    raise ImportError(
        "kiln: cannot load libkiln (set KILN_LIBRARY_PATH to the library file or "
        "its directory, or install it where the system loader finds it): " + "; ".join(errors)
    )


lib = _load()

_major = lib.kiln_version_number() // 10000
if _major != ABI_MAJOR:
    raise ImportError(
        f"kiln: libkiln {lib.kiln_version().decode()} has ABI major {_major}; this binding needs {ABI_MAJOR}"
    )
