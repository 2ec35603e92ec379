"""On a GPU with PyTorch (marker gpu; skipped without torch or a CUDA device): every flavor
with PyTorch tensors, streams, refusals, the workspace from the caching allocator,
fused_linear / gated_mlp against torch in fp64, torch.compile with no graph break, CUDA
graph capture and replay, CuPy arrays and DLPack-only objects."""

import numpy as np
import pytest

import fusedgemm
from fusedgemm import reference

from conftest import EXAMPLE_FILES, EXAMPLES

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]

_TORCH_DTYPES = {
    "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
    "fp8_e4m3": getattr(torch, "float8_e4m3fn", None), "fp8_e5m2": getattr(torch, "float8_e5m2", None),
    "int8": torch.int8, "int32": torch.int32,
}


def _storage(array):
    """The uint8 storage a reference array was made over."""
    base = array.base
    assert isinstance(base, np.ndarray) and base.dtype == np.uint8 and base.ndim == 1
    return base


def to_cuda(array, tensor):
    """A CUDA tensor with the reference array's bytes, dims and strides."""
    raw = torch.from_numpy(_storage(array).copy()).cuda()
    return raw.view(_TORCH_DTYPES[tensor.data_type]).as_strided(tensor.dims, tensor.strides)


def poisoned_cuda(tensor):
    host = reference.empty(tensor)
    return to_cuda(host, tensor), host


def to_host(t, host):
    torch.cuda.synchronize()
    storage = _storage(host)
    flat = t.as_strided((storage.size // t.element_size(),), (1,))
    storage[...] = flat.view(torch.uint8).cpu().numpy()
    return host


def cuda_call(graph, seed):
    inputs = reference.random_inputs(graph, seed)
    buffers = {name: to_cuda(a, graph.find_tensor(name)) for name, a in inputs.items()}
    outputs = {t.name: poisoned_cuda(t) for t in graph.tensors if t.output}
    buffers.update((name, pair[0]) for name, pair in outputs.items())
    return inputs, buffers, outputs


def check_outputs(graph, inputs, outputs):
    expected = reference.evaluate(graph, inputs)
    for name, (t, host) in outputs.items():
        cmp = expected.compare(name, to_host(t, host))
        assert cmp.passed, f"{graph.name} '{name}': {cmp}"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_flavor_with_torch_tensors(path, seed):
    graph = fusedgemm.load_graph(str(path))
    plan = fusedgemm.build(graph, device="cuda")
    assert plan.device == "cuda:0"
    inputs, buffers, outputs = cuda_call(graph, seed)
    plan.execute(buffers)  # the current stream; any workspace from the caching allocator
    check_outputs(graph, inputs, outputs)
    assert sum(plan.deferrals().values()) == 0


def test_plain_against_torch_in_fp64(seed):
    graph = fusedgemm.load_graph(str(EXAMPLES / "plain.json"))
    plan = fusedgemm.build(graph, device="cuda")
    _, buffers, outputs = cuda_call(graph, seed)
    plan.execute(buffers)
    want = buffers["A"].double()[0] @ buffers["B"].double()[0]
    got = outputs["D"][0].double()[0]
    assert ((got - want).norm() / want.norm()).item() < 1e-2


def test_streams_given_and_current(seed):
    graph = fusedgemm.load_graph(str(EXAMPLES / "epilogue.json"))
    plan = fusedgemm.build(graph, device="cuda")
    side = torch.cuda.Stream()
    for how in ("argument", "current", "int"):
        inputs, buffers, outputs = cuda_call(graph, seed)
        torch.cuda.synchronize()
        if how == "argument":
            plan.execute(buffers, stream=side)
        elif how == "int":
            plan.execute(buffers, stream=side.cuda_stream)
        else:
            with torch.cuda.stream(side):
                plan.execute(buffers)
        side.synchronize()
        check_outputs(graph, inputs, outputs)


def test_a_dict_of_tensors_launches_behind_the_current_streams_work(seed):
    # The dict is read through PyTorch's DLPack exchange table, whose current_work_stream
    # names the stream: work queued there first (a sleep) must delay the kernel.
    graph = fusedgemm.load_graph(str(EXAMPLES / "plain.json"))
    plan = fusedgemm.build(graph, device="cuda")
    assert hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    inputs, buffers, outputs = cuda_call(graph, seed)
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        plan.execute(buffers)
    d, host = outputs["D"]
    early = d.view(torch.uint8).cpu()  # on the default stream, while `side` still sleeps
    assert not side.query()
    assert (early == 0xFF).all().item()
    side.synchronize()
    check_outputs(graph, inputs, outputs)


def test_a_misaligned_torch_output_is_refused_and_untouched(seed):
    graph = fusedgemm.load_graph(str(EXAMPLES / "plain.json"))
    plan = fusedgemm.build(graph, device="cuda")
    _, buffers, _ = cuda_call(graph, seed)
    storage = torch.full((256 * 256 + 8,), float("nan"), dtype=torch.bfloat16, device="cuda")
    d = storage[1:].as_strided((1, 256, 256), (65536, 256, 1))
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.execute({**buffers, "D": d})
    assert (info.value.rule, info.value.role, info.value.tensor) == ("alignment", "output", "D")
    assert torch.isnan(storage).all()
    with pytest.raises(TypeError, match="host"):
        plan.execute({**buffers, "D": np.zeros((1, 256, 256), np.float16)})


def test_the_workspace_comes_from_the_caching_allocator(seed):
    graph = fusedgemm.load_graph(str(EXAMPLES / "taps.json"))
    plan = fusedgemm.build(graph, device="cuda")
    inputs, buffers, outputs = cuda_call(graph, seed)
    bound = plan.bind(buffers)
    assert bound.workspace_bytes > 0
    plan.execute(bound)
    torch.cuda.synchronize()
    segments = torch.cuda.memory_stats()["segment.all.allocated"]
    for _ in range(20):
        plan.execute(bound)
        plan.execute(buffers)
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["segment.all.allocated"] == segments  # no cudaMalloc
    check_outputs(graph, inputs, outputs)


def _act(name, x):
    return {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
            "gelu_tanh": lambda v: torch.nn.functional.gelu(v, approximate="tanh")}[name](x)


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("rows", [1, 17, 256])
def test_fused_linear_against_torch_in_fp64(activation, rows, seed):
    from fusedgemm.torch import fused_linear

    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.rand((rows, 128), generator=g, device="cuda").sub(0.5).to(torch.bfloat16)
    w = torch.rand((192, 128), generator=g, device="cuda").sub(0.5).to(torch.bfloat16)
    b = torch.rand((192,), generator=g, device="cuda").sub(0.5).to(torch.bfloat16)
    for bias in (b, None):
        y = fused_linear(x, w, bias, activation)
        ref = torch.nn.functional.linear(x.double(), w.double(), None if bias is None else bias.double())
        if activation:
            ref = _act(activation, ref)
        assert y.dtype == torch.bfloat16 and y.shape == (rows, 192)
        assert ((y.double() - ref).norm() / ref.norm()).item() < 1e-2


def test_fused_linear_serves_an_extent_range_from_one_plan(seed):
    from fusedgemm.torch import fused_linear, plan_cache

    w = torch.randn((64, 128), device="cuda", dtype=torch.bfloat16)
    before = len(plan_cache)
    for rows in (65, 100, 128):
        x = torch.randn((rows, 128), device="cuda", dtype=torch.bfloat16)
        y = fused_linear(x, w, None, "silu")
        ref = torch.nn.functional.silu(x.double() @ w.double().T)
        assert ((y.double() - ref).norm() / ref.norm()).item() < 1e-2
    assert len(plan_cache) == before + 1


def test_gated_mlp_against_torch_in_fp64(seed):
    from fusedgemm.torch import gated_mlp

    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.rand((2, 40, 128), generator=g, device="cuda").sub(0.5).to(torch.bfloat16)
    wg = torch.rand((256, 128), generator=g, device="cuda").sub(0.5).to(torch.bfloat16)
    wu = torch.rand((256, 128), generator=g, device="cuda").sub(0.5).to(torch.bfloat16)
    y = gated_mlp(x, wg, wu)
    ref = torch.nn.functional.silu(x.double() @ wg.double().T) * (x.double() @ wu.double().T)
    assert y.shape == (2, 40, 256)
    assert ((y.double() - ref).norm() / ref.norm()).item() < 1e-2


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(256, 128, dtype=torch.bfloat16, device="cuda") * 0.1)
        self.b1 = torch.nn.Parameter(torch.randn(256, dtype=torch.bfloat16, device="cuda") * 0.1)
        self.wg = torch.nn.Parameter(torch.randn(256, 256, dtype=torch.bfloat16, device="cuda") * 0.1)
        self.wu = torch.nn.Parameter(torch.randn(256, 256, dtype=torch.bfloat16, device="cuda") * 0.1)
        self.w2 = torch.nn.Parameter(torch.randn(128, 256, dtype=torch.bfloat16, device="cuda") * 0.1)

    def forward(self, x):
        from fusedgemm.torch import fused_linear, gated_mlp

        h = fused_linear(x, self.w1, self.b1, "gelu")
        h = gated_mlp(h, self.wg, self.wu)
        return fused_linear(h, self.w2)


@torch.no_grad()
def test_torch_compile_has_no_graph_break_and_equal_results():
    model = MLP()
    x = torch.randn(64, 128, dtype=torch.bfloat16, device="cuda")
    eager = model(x)
    explanation = torch._dynamo.explain(model)(x)
    assert explanation.graph_break_count == 0, explanation
    assert explanation.graph_count == 1
    compiled = torch.compile(model, fullgraph=True)
    assert torch.equal(compiled(x), eager)


@torch.no_grad()
def test_cuda_graph_capture_and_replay():
    model = MLP()
    static_x = torch.randn(64, 128, dtype=torch.bfloat16, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model(static_x)  # builds every plan before capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
    for _ in range(3):
        fresh = torch.randn(64, 128, dtype=torch.bfloat16, device="cuda")
        static_x.copy_(fresh)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(static_y, model(fresh))


def test_a_bound_pack_captured_in_a_cuda_graph(seed):
    graph_def = fusedgemm.load_graph(str(EXAMPLES / "aux_bias.json"))
    plan = fusedgemm.build(graph_def, device="cuda")
    inputs, buffers, outputs = cuda_call(graph_def, seed)
    bound = plan.bind(buffers)
    plan.execute(bound)
    torch.cuda.synchronize()
    for t, host in outputs.values():
        t.as_strided((_storage(host).size // t.element_size(),), (1,)).view(torch.uint8).fill_(0xFF)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        plan.execute(bound)
    g.replay()
    check_outputs(graph_def, inputs, outputs)


def test_cupy_arrays_through_cuda_array_interface(seed):
    cupy = pytest.importorskip("cupy")
    g = fusedgemm.Graph("plain_fp16")
    a = g.tensor(name="A", dims=[1, 128, 64], strides=[128 * 64, 64, 1], data_type="fp16")
    b = g.tensor(name="B", dims=[1, 64, 96], strides=[64 * 96, 1, 64], data_type="fp16")
    g.matmul(a, b).set_output(True).set_name("D").set_data_type("fp16")
    plan = fusedgemm.build(g, device="cuda")
    rng = np.random.default_rng(seed)
    a_host = rng.uniform(-1, 1, (1, 128, 64)).astype(np.float16)
    b_host = rng.uniform(-1, 1, (1, 96, 64)).astype(np.float16).transpose(0, 2, 1)
    a_dev = cupy.asarray(a_host)
    b_dev = cupy.asarray(np.ascontiguousarray(b_host.transpose(0, 2, 1))).transpose(0, 2, 1)
    d_dev = cupy.full((1, 128, 96), np.nan, dtype=cupy.float16)
    plan.execute({"A": a_dev, "B": b_dev, "D": d_dev})
    cupy.cuda.Device().synchronize()
    want = a_host.astype(np.float64)[0] @ b_host.astype(np.float64)[0]
    got = cupy.asnumpy(d_dev)[0].astype(np.float64)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < reference.relative_tolerance("fp16")


class DLPackOnly:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_dlpack_only_objects_on_cuda(seed):
    graph = fusedgemm.load_graph(str(EXAMPLES / "plain.json"))
    plan = fusedgemm.build(graph, device="cuda")
    inputs, buffers, outputs = cuda_call(graph, seed)
    plan.execute({k: DLPackOnly(v) for k, v in buffers.items()})
    check_outputs(graph, inputs, outputs)


def test_custom_op_of_a_plan(seed):
    from fusedgemm.torch import custom_op

    graph = fusedgemm.load_graph(str(EXAMPLES / "taps.json"))
    plan = fusedgemm.build(graph, device="cuda")
    op = custom_op("taps_test", graph, plan)
    inputs, buffers, _ = cuda_call(graph, seed)
    results = op([buffers[t.name] for t in graph.inputs])
    torch.cuda.synchronize()
    expected = reference.evaluate(graph, inputs)
    for t, r in zip([t for t in graph.tensors if t.output], results):
        host = reference.empty(t)
        assert expected.compare(t.name, to_host(r, host)).passed, t.name
    explanation = torch._dynamo.explain(lambda *xs: op(list(xs)))(*[buffers[t.name] for t in graph.inputs])
    assert explanation.graph_break_count == 0


def test_the_readme_quick_start():
    M, N, K = 256, 512, 128
    g = fusedgemm.Graph("linear_gelu")
    a = g.tensor(name="A", dims=[1, M, K], strides=[M * K, K, 1], data_type="bf16")
    b = g.tensor(name="B", dims=[1, K, N], strides=[K * N, 1, K], data_type="bf16")
    bias = g.tensor(name="bias", dims=[1, 1, N], data_type="bf16")
    y = g.pointwise(g.pointwise(g.matmul(a, b), bias, mode="add"), mode="gelu_erf")
    y.set_output(True).set_name("D").set_data_type("bf16")
    plan = fusedgemm.build(g)
    assert plan.engine == "fused" and plan.device == "cuda:0"
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    bb = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    d = torch.empty(1, M, N, device="cuda", dtype=torch.bfloat16)
    buffers = {"A": x.view(1, M, K), "B": w.t().unsqueeze(0), "bias": bb, "D": d}
    plan.execute(buffers)
    ref = torch.nn.functional.gelu(x.double() @ w.double().T + bb.double())
    assert ((d[0].double() - ref).norm() / ref.norm()).item() < 1e-2
    bound = plan.bind(buffers)
    d.fill_(float("nan"))
    plan.execute(bound)
    assert ((d[0].double() - ref).norm() / ref.norm()).item() < 1e-2
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.execute({**buffers, "D": d[:, :, : N // 2]})
    assert (info.value.rule, info.value.role, info.value.tensor) == ("extent", "output", "D")
    assert "legal: 512 for the call's batch 1 M 256 N 512 K 128" in str(info.value)
