"""fusedgemm: a fused GEMM graph compiled into one Hopper kernel, every call checked.

    import fusedgemm
    g = fusedgemm.Graph("linear")
    a = g.tensor(name="A", dims=[1, 256, 128], strides=[256 * 128, 128, 1], data_type="bf16")
    ...
    plan = fusedgemm.build(g)                   # CUDA when present, else the host device
    plan.execute({"A": a_array, "B": b_array, "D": d_array})

A refused call raises IllegalCall (a ValueError with .rule, .role, .tensor) and writes
nothing; a malformed graph raises GraphError. ``fusedgemm.torch`` (with PyTorch installed)
adds custom ops for torch.compile and CUDA graphs.
"""

from ._errors import (
    CompileError,
    Declined,
    DriverError,
    Error,
    GraphError,
    IllegalCall,
    InvalidArgument,
    IoError,
    NotFound,
    Unavailable,
)
from ._fusedgemm import (
    BoundPack,
    Context,
    Decline,
    Graph,
    Plan,
    Tensor,
    Verdict,
    __version__,
    build,
    graph_from_json,
    load_graph,
)
from ._arrays import numpy_dtype

__all__ = [
    "BoundPack",
    "CompileError",
    "Context",
    "Decline",
    "Declined",
    "DriverError",
    "Error",
    "Graph",
    "GraphError",
    "IllegalCall",
    "InvalidArgument",
    "IoError",
    "NotFound",
    "Plan",
    "Tensor",
    "Unavailable",
    "Verdict",
    "__version__",
    "build",
    "graph_from_json",
    "load_graph",
    "numpy_dtype",
]
