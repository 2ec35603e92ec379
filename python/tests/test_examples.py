"""Every example flavor on the host device with numpy arrays, against the fp64 reference."""

import numpy as np
import pytest

import fusedgemm
from fusedgemm import reference

pytest.importorskip("ml_dtypes")  # bf16 and fp8 numpy arrays on the host device

from conftest import EXAMPLE_FILES, call_buffers, host_plan


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_flavor_matches_the_fp64_reference(path, seed):
    graph, plan = host_plan(path)
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    expected = reference.evaluate(graph, inputs)
    for name, array in outputs.items():
        cmp = expected.compare(name, array)
        assert cmp.passed, f"{path.stem} '{name}': {cmp}"
    assert sum(plan.deferrals().values()) == 0


def _f64(array):
    return np.asarray(array).astype(np.float64)


def test_plain_matches_numpy_matmul(seed):
    # An oracle that shares nothing with the C++ reference: numpy's own fp64 matmul of the
    # arrays the call was given, so an array read at the wrong strides cannot pass.
    graph, plan = host_plan(EXAMPLE_FILES[0].parent / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    want = _f64(inputs["A"])[0] @ _f64(inputs["B"])[0]
    got = _f64(outputs["D"])[0]
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < reference.relative_tolerance("bf16")


def test_aux_bias_matches_numpy(seed):
    graph, plan = host_plan(EXAMPLE_FILES[0].parent / "aux_bias.json")
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    x = {k: _f64(v) for k, v in inputs.items()}
    want = (x["A"] @ x["B"]) * x["row_scale"] * x["alpha"] + x["bias"] + x["residual"]
    got = _f64(outputs["D"])
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < reference.relative_tolerance("bf16")


def test_fallback_engine_runs_a_declined_graph(seed):
    graph, plan = host_plan(EXAMPLE_FILES[0].parent / "fallback_only.json")
    assert plan.engine == "fallback"
    assert plan.declined.rule == "chained_gemm"
    assert "chained_gemm" in plan.describe()
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    expected = reference.evaluate(graph, inputs)
    assert all(expected.compare(n, a).passed for n, a in outputs.items())


def test_forcing_the_fused_engine_on_a_declined_graph_raises_declined():
    graph = fusedgemm.load_graph(str(EXAMPLE_FILES[0].parent / "fallback_only.json"))
    with pytest.raises(fusedgemm.Declined) as info:
        fusedgemm.build(graph, device="host", engine="fused")
    assert info.value.rule == "chained_gemm"
    assert "role A 'T'" in str(info.value)
