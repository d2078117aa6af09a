"""Kiln: an XLA-style array compiler and runtime, from Python.

A thin binding over libkiln's C API (kiln.h)::

    import numpy as np, kiln

    with kiln.Builder("axpy") as b:
        x = b.parameter(0, "f32", [3], "x")
        y = b.parameter(1, "f32", [3], "y")
        computation = b.build(2.0 * x + y)
    with kiln.Client() as client, client.compile(computation) as exe:
        print(exe(np.ones(3, np.float32), np.arange(3, dtype=np.float32)))

libkiln is found through KILN_LIBRARY_PATH (the file or its directory), else the
system loader (libkiln.so.0).
"""

from . import safetensors
from ._builder import (
    Builder,
    ConvDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    Op,
    ScatterDimensionNumbers,
    register_custom_call,
)
from ._errors import KilnError, StatusCode
from ._runtime import (
    Buffer,
    Cancellation,
    Client,
    Computation,
    Device,
    Event,
    Executable,
    backends,
    from_dlpack,
    grad,
    jvp,
    value_and_grad,
    version,
    version_number,
)
from ._types import (
    ComparisonDirection,
    ComparisonType,
    ElementType,
    FftType,
    Padding,
    Precision,
    RngAlgorithm,
)
from ._user_ops import (
    GradFrame,
    KernelFrame,
    ShapeFrame,
    register_device_kernel,
    register_kernel,
    register_op,
    registered_ops,
)
from ._user_ops import Shape as AttrShape

__version__ = "0.2.0"

__all__ = [
    "Buffer",
    "Builder",
    "Cancellation",
    "Client",
    "ComparisonDirection",
    "ComparisonType",
    "Computation",
    "Device",
    "ConvDimensionNumbers",
    "DotDimensionNumbers",
    "ElementType",
    "Event",
    "Executable",
    "FftType",
    "GatherDimensionNumbers",
    "KilnError",
    "Op",
    "Padding",
    "Precision",
    "RngAlgorithm",
    "ScatterDimensionNumbers",
    "StatusCode",
    "backends",
    "from_dlpack",
    "grad",
    "jvp",
    "register_custom_call",
    "register_op",
    "register_device_kernel",
    "register_kernel",
    "registered_ops",
    "KernelFrame",
    "ShapeFrame",
    "GradFrame",
    "AttrShape",
    "safetensors",
    "value_and_grad",
    "version",
    "version_number",
]
