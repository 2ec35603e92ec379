"""The exceptions fusedgemm raises; the extension builds them from a C++ Status.

Every fusedgemm error is a ``fusedgemm.Error`` carrying ``.code`` (the C++ ErrorCode's
spelling) and the diagnostic as its message. A refused call is an ``IllegalCall`` (a
``ValueError``) that also carries ``.rule``, ``.role`` and ``.tensor``.
"""


class Error(Exception):
    """A fusedgemm error; ``.code`` is the error code ('illegal_call', 'invalid_graph', ...)."""

    def __init__(self, message, code="internal"):
        super().__init__(message)
        self.code = code


class GraphError(Error, ValueError):
    """A malformed graph: validate() or the JSON reader found errors (all listed)."""


class IllegalCall(Error, ValueError):
    """A call broke one of the plan's rules; nothing was written.

    ``.rule`` is the rule's id (``fusedgemm explain --rules``), ``.role`` the role it names
    ('A', 'B', 'aux', 'scale', 'output', 'tap') and ``.tensor`` the tensor's name; each is
    None where the diagnostic names none.
    """

    def __init__(self, message, rule=None, role=None, tensor=None):
        super().__init__(message, "illegal_call")
        self.rule = rule
        self.role = role
        self.tensor = tensor


class Declined(Error):
    """The fused engine refused the graph (build with engine='fused'); ``.rule`` names why."""

    def __init__(self, message, rule=None):
        super().__init__(message, "declined")
        self.rule = rule


class InvalidArgument(Error, ValueError):
    """An API was called with a bad argument (a tuning the kernel cannot take, ...)."""


class Unavailable(Error, RuntimeError):
    """Something the call needs is missing: a GPU, the driver, NVRTC, cuBLASLt."""


class DriverError(Error, RuntimeError):
    """A CUDA driver call failed; the message names the call and the error."""


class CompileError(Error, RuntimeError):
    """NVRTC refused a generated kernel; the message carries the log."""


class NotFound(Error, LookupError):
    """A lookup by name or uid found nothing."""


class IoError(Error, OSError):
    """A file could not be read or written."""


_BY_CODE = {
    "invalid_graph": GraphError,
    "invalid_argument": InvalidArgument,
    "unavailable": Unavailable,
    "driver": DriverError,
    "compile": CompileError,
    "not_found": NotFound,
    "io": IoError,
}


def from_status(code, message, rule, role, tensor, graph_domain):
    """The exception of a C++ Status (called by the extension on its error path only)."""
    if code == "illegal_call":
        return IllegalCall(message, rule or None, role or None, tensor or None)
    if code == "declined":
        return Declined(message, rule or None)
    if graph_domain and code == "invalid_argument":
        return GraphError(message, code)
    return _BY_CODE.get(code, Error)(message, code)
