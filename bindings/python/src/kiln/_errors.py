"""Status codes and the KilnError exception."""

from __future__ import annotations

import enum

from ._ffi import lib


class StatusCode(enum.IntEnum):
    """The stable status codes of kiln.h (KILN_STATUS_*)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15


class KilnError(Exception):
    """A failure reported by libkiln: ``code`` (a StatusCode) and ``message``."""

    def __init__(self, code: StatusCode | int, message: str) -> None:
        try:
            code = StatusCode(code)
        except ValueError:
            pass  # a code from a newer library: keep the number
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        name = self.code.name if isinstance(self.code, StatusCode) else str(self.code)
        return f"{name}: {self.message}"


def check(status: int | None) -> None:
    """Raises the KilnError that `status` carries and frees it; NULL is success."""
    if not status:
        return
    try:
        code = lib.kiln_status_code(status)
        message = (lib.kiln_status_message(status) or b"").decode("utf-8", "replace")
    finally:
        lib.kiln_status_destroy(status)
    raise KilnError(code, message)
