"""The common owner of one C handle: close() once, with-statement, __del__."""

from __future__ import annotations

import threading
from typing import Any, Callable

_close_lock = threading.Lock()


class Handle:
    """Owns one kiln handle; close() frees it once, ``__del__`` is a safety net."""

    __slots__ = ("_ptr", "__weakref__")
    _destroy: Callable[[int], None]  # the kiln_*_destroy function, set per class

    def __init__(self, ptr: int) -> None:
        self._ptr: int | None = ptr

    @property
    def closed(self) -> bool:
        return self._ptr is None

    @property
    def _p(self) -> int:
        """The raw pointer for C calls; ValueError once closed."""
        ptr = self._ptr
        if ptr is None:
            raise ValueError(f"kiln: {type(self).__name__} is closed")
        return ptr

    def close(self) -> None:
        """Frees the handle. Calling it again does nothing."""
        with _close_lock:
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            type(self)._destroy(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass
