"""Arrays read through DLPack's C exchange table (``__dlpack_c_exchange_api__``, PyTorch's
fast path) on the host device: the same views, results and refusals as the array protocols,
and a fall back to them whenever the table cannot say."""

import gc

import numpy as np
import pytest

import fusedgemm
from fusedgemm import reference

pytest.importorskip("ml_dtypes")  # bf16 and fp8 numpy arrays on the host device

from conftest import EXAMPLE_FILES, EXAMPLES, call_buffers, host_plan
from exchange_producer import ExchangeArray, wrap


def _untouched(array):
    return (array.view(np.uint8) == 0xFF).all()


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_flavor_reads_the_same_views_through_the_table(path, seed):
    graph, plan = host_plan(path)
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    through_table = {t.name: reference.empty(t) for t in graph.tensors if t.output}
    reads = ExchangeArray.reads
    plan.execute(wrap({**inputs, **through_table}))
    assert ExchangeArray.reads - reads == len(inputs) + len(outputs)
    expected = reference.evaluate(graph, inputs)
    for name, array in through_table.items():
        assert expected.compare(name, array).passed, f"{path.stem} '{name}'"
        assert array.tobytes() == outputs[name].tobytes(), f"{path.stem} '{name}'"
    assert sum(plan.deferrals().values()) == 0


def test_a_refused_call_is_refused_alike_and_writes_nothing(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    short = {**inputs, "D": outputs["D"][:, :, :128]}
    with pytest.raises(fusedgemm.IllegalCall) as direct:
        plan.execute(short)
    reads = ExchangeArray.reads
    with pytest.raises(fusedgemm.IllegalCall) as exchanged:
        plan.execute(wrap(short))
    assert ExchangeArray.reads > reads
    assert str(exchanged.value) == str(direct.value)
    assert (exchanged.value.rule, exchanged.value.role) == ("extent", "output")
    assert plan.explain(wrap(short)).message == plan.explain(short).message
    assert _untouched(outputs["D"])


def test_a_type_fusedgemm_lacks_is_refused_by_the_array_protocols(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, _ = call_buffers(graph, seed)
    reads = ExchangeArray.reads
    with pytest.raises(TypeError, match="float64"):
        plan.execute({"D": ExchangeArray(np.zeros((1, 256, 256))), **inputs})
    assert ExchangeArray.reads == reads + 1


# The array protocols read a wrapped array through numpy's __dlpack__, which has no bf16: the
# arrays wrapped here are multi_output.json's fp32 outputs, given through a table that
# answers as `wrap` says; the call asks the table, then reads them by the protocols, right.
def expect_the_array_protocols_read(seed, **wrap):
    graph, plan = host_plan(EXAMPLES / "multi_output.json")
    inputs, outputs = call_buffers(graph, seed)
    wrapped = {n: ExchangeArray(a, **wrap) for n, a in outputs.items() if a.dtype == np.float32}
    assert wrapped
    reads = ExchangeArray.reads
    plan.execute({**wrapped, **inputs, **{n: a for n, a in outputs.items() if n not in wrapped}})
    assert ExchangeArray.reads > reads  # the table was asked
    expected = reference.evaluate(graph, inputs)
    assert all(expected.compare(n, a).passed for n, a in outputs.items())


def test_an_array_the_table_refuses_is_read_by_the_array_protocols(seed):
    expect_the_array_protocols_read(seed, fail=True)


@pytest.mark.parametrize("lie", ["rank", "no_shape", "huge"])
def test_a_hostile_tensor_from_the_table_is_not_read(lie, seed):
    # A rank no view has (2^30 extents to copy), no extents at all, or compact extents whose
    # strides overflow: the table's answer is set aside and the array protocols read the array.
    expect_the_array_protocols_read(seed, lie=lie)


def test_a_bound_pack_keeps_exchanged_arrays_alive(seed):
    graph, plan = host_plan(EXAMPLES / "taps.json")
    inputs, outputs = call_buffers(graph, seed)
    expected = reference.evaluate(graph, inputs)
    bound = plan.bind(wrap({**inputs, **outputs}))
    assert bound.workspace_bytes > 0
    kept = dict(outputs)
    del inputs, outputs
    gc.collect()
    plan.execute(bound)  # the workspace from the host allocator, the arrays from the pack
    assert all(expected.compare(n, a).passed for n, a in kept.items())


def test_uid_and_tensor_keys_read_through_the_table(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    by_name = {t.name: t for t in graph.tensors}
    keyed = {by_name["A"]: inputs["A"], by_name["B"].uid: inputs["B"], "D": outputs["D"]}
    plan.execute(wrap(keyed))
    assert reference.evaluate(graph, inputs).compare("D", outputs["D"]).passed
