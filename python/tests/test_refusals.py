"""Refused calls raise IllegalCall naming the rule, role and tensor, count a deferral under
the rule, and write nothing; explain says the same without launching."""

import numpy as np
import pytest

import fusedgemm
from fusedgemm import reference

pytest.importorskip("ml_dtypes")  # bf16 and fp8 numpy arrays on the host device

from conftest import EXAMPLES, call_buffers, host_plan


def _misaligned(tensor):
    """A poisoned array of the tensor's declared layout, starting 2 bytes past an aligned
    address."""
    dtype = fusedgemm.numpy_dtype(tensor.data_type)
    span = 1 + sum((d - 1) * s for d, s in zip(tensor.dims, tensor.strides))
    storage = np.full((span + 64) * dtype.itemsize, 0xFF, np.uint8)  # room for the offset
    base = storage.__array_interface__["data"][0]
    offset = (-base) % 64 + 2
    return np.ndarray(tuple(tensor.dims), dtype, buffer=storage, offset=offset,
                      strides=tuple(s * dtype.itemsize for s in tensor.strides))


def _untouched(array):
    return bool((np.asarray(array).view(np.uint8) == 0xFF).all())


def _refuse(plan, buffers, rule, role, tensor):
    verdict = plan.explain(buffers)
    assert not verdict.legal and verdict.rule == rule, verdict
    before = plan.deferrals().get(rule, 0)
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.execute(buffers)
    e = info.value
    assert isinstance(e, ValueError)
    assert (e.rule, e.role, e.tensor) == (rule, role, tensor), str(e)
    assert str(e) == verdict.message
    assert (verdict.role, verdict.tensor) == (role, tensor)
    assert str(e).startswith(f"{rule}: role {role} '{tensor}': ")
    assert "legal: " in str(e)
    if rule in plan.deferrals():
        assert plan.deferrals()[rule] == before + 1
    return e


@pytest.fixture
def plain(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    return graph, plan, inputs, outputs


def test_a_misaligned_output_is_refused_by_alignment_and_nothing_is_written(plain):
    graph, plan, inputs, _ = plain
    d = _misaligned(graph.find_tensor("D"))
    e = _refuse(plan, {**inputs, "D": d}, "alignment", "output", "D")
    assert "2 bytes past" in str(e)
    assert _untouched(d)


def test_a_wrong_element_type_is_refused_by_data_type(plain):
    _, plan, inputs, _ = plain
    d = np.full((1, 256, 256), np.nan, np.float32)
    e = _refuse(plan, {**inputs, "D": d}, "data_type", "output", "D")
    assert "view says fp32; legal: bf16" in str(e)
    assert np.isnan(d).all()


def test_a_short_output_is_refused_by_extent(plain):
    _, plan, inputs, outputs = plain
    d = outputs["D"][:, :, :255]
    e = _refuse(plan, {**inputs, "D": d}, "extent", "output", "D")
    assert "N 255" in str(e)
    assert _untouched(outputs["D"])


def test_a_missing_buffer_is_refused_by_buffer_missing(plain):
    _, plan, inputs, _ = plain
    _refuse(plan, dict(inputs), "buffer_missing", "output", "D")


def test_an_output_over_an_input_is_refused_by_buffer_overlap(plain):
    graph, plan, inputs, _ = plain
    a = inputs["A"]
    # D's bf16 [1, 256, 256] laid over A's storage (and past it): the output would overwrite
    # an operand.
    storage = np.full(256 * 256 * 2, 0xFF, np.uint8)
    storage[: a.nbytes] = a.view(np.uint8).reshape(-1)
    a_view = np.ndarray(a.shape, a.dtype, buffer=storage, strides=a.strides)
    d = np.ndarray((1, 256, 256), a.dtype, buffer=storage, strides=(256 * 256 * 2, 512, 2))
    before = a_view.copy()
    _refuse(plan, {**inputs, "A": a_view, "D": d}, "buffer_overlap", "output", "D")
    assert (a_view.view(np.uint16) == before.view(np.uint16)).all()


def test_a_small_workspace_is_refused_by_workspace(seed):
    graph, plan = host_plan(EXAMPLES / "taps.json")
    inputs, outputs = call_buffers(graph, seed)
    need = plan.workspace_bytes({**inputs, **outputs})
    assert need > 0
    small = np.zeros(need - 16, np.uint8)
    buffers = {**inputs, **outputs}
    verdict = plan.explain(buffers, workspace=small)
    assert verdict.rule == "workspace", verdict
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.execute(buffers, workspace=small)
    assert info.value.rule == "workspace"
    assert all(_untouched(a) for a in outputs.values())
    # The same call with a workspace of the size asked for is legal.
    plan.execute(buffers, workspace=np.zeros(need, np.uint8))
    expected = reference.evaluate(graph, inputs)
    assert all(expected.compare(n, a).passed for n, a in outputs.items())


def test_an_unknown_key_is_refused_before_the_rules(plain):
    _, plan, inputs, outputs = plain
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.execute({**inputs, **outputs, "X": outputs["D"]})
    assert info.value.rule == "pack_unknown_tensor"
    assert info.value.role is None
    assert plan.explain({**inputs, **outputs, "X": outputs["D"]}).rule == "pack_unknown_tensor"
    assert _untouched(outputs["D"])


def test_the_empty_name_is_a_name_no_tensor_has(seed):
    # D of uid 0: the empty name is not read as uid 0.
    graph = fusedgemm.Graph("plain")
    a = graph.tensor(name="A", dims=[1, 64, 64], data_type="bf16")
    b = graph.tensor(name="B", dims=[1, 64, 64], strides=[4096, 1, 64], data_type="bf16")
    graph.matmul(a, b).set_output(True).set_name("D").set_data_type("bf16").set_uid(0)
    plan = fusedgemm.build(graph, device="host")
    inputs, outputs = call_buffers(graph, seed)
    with pytest.raises(fusedgemm.IllegalCall, match="pack_unknown_tensor: name '' names no buffer"):
        plan.execute({**inputs, "": outputs["D"]})
    assert _untouched(outputs["D"])
    plan.execute({**inputs, 0: outputs["D"]})
    assert reference.evaluate(graph, inputs).compare("D", outputs["D"]).passed


def test_keys_past_their_range_are_type_errors_naming_them(plain):
    _, plan, inputs, outputs = plain
    with pytest.raises(TypeError, match=r"buffers: key: 1180591620717411303424; legal: a tensor uid"):
        plan.execute({**inputs, 2**70: outputs["D"]})
    with pytest.raises(TypeError, match=r"buffers: key: '\\ud800'; legal: a tensor name in UTF-8"):
        plan.execute({**inputs, "\ud800": outputs["D"]})
    assert _untouched(outputs["D"])


def test_an_array_of_no_fusedgemm_type_is_a_type_error(plain):
    _, plan, inputs, _ = plain
    with pytest.raises(TypeError, match="float64"):
        plan.execute({**inputs, "D": np.zeros((1, 256, 256))})
    with pytest.raises(TypeError, match="not an array"):
        plan.execute({**inputs, "D": "D"})


def test_a_legal_call_is_legal(plain):
    _, plan, inputs, outputs = plain
    verdict = plan.explain({**inputs, **outputs})
    assert verdict.legal and bool(verdict) and verdict.rule is None
    assert _untouched(outputs["D"])  # explain launches nothing


def test_a_read_only_output_is_refused_by_read_only_and_inputs_may_be_read_only(plain):
    graph, plan, inputs, outputs = plain
    d = outputs["D"]
    d.flags.writeable = False
    _refuse(plan, {**inputs, "D": d}, "read_only", "output", "D")
    assert _untouched(d)
    # Read-only inputs are read as any others.
    for array in inputs.values():
        array.flags.writeable = False
    d.flags.writeable = True
    plan.execute({**inputs, **outputs})
    assert reference.evaluate(graph, inputs).compare("D", d).passed


def test_hostile_arguments_are_type_and_value_errors_naming_them(plain):
    graph, plan, inputs, outputs = plain
    for address in (-1, 2**70):
        with pytest.raises(TypeError, match=r"address: .*; legal: an integer from 0 to 2\^64"):
            plan.execute({**inputs, **outputs, "D": address})
    with pytest.raises(TypeError, match="device: 1099511627776; legal: an ordinal"):
        fusedgemm.build(graph, device=2**40)
    with pytest.raises(ValueError, match="device 'cuda:0x'"):
        fusedgemm.build(graph, device="cuda:0x")
    for tuning, match in (({"tile_m": 10**30}, "tuning 'tile_m': 1000000000000000000000000000000"),
                          ({"split_n": "yes"}, "tuning 'split_n': 'yes'; legal: True or False"),
                          ({"borrow_staging": 1},
                           "tuning 'borrow_staging': 1; legal: True or False"),
                          ({"tile_m": None}, "tuning 'tile_m': None"),
                          ({1: 2}, "tuning: key: 1; legal: a string")):
        with pytest.raises(TypeError, match=match):
            fusedgemm.build(graph, device="host", tuning=tuning)
    with pytest.raises(fusedgemm.InvalidArgument,
                       match="9 staging buffers per stored output; legal: 1 to 8"):
        fusedgemm.build(graph, device="host", tuning={"staging_buffers": 9})
    with pytest.raises(fusedgemm.InvalidArgument,
                       match="borrow_staging is true, but staging is borrowed only where both "
                             "consumers share each tile"):
        fusedgemm.build(graph, device="host", tuning={"borrow_staging": True, "ping_pong": True})
    with pytest.raises(fusedgemm.InvalidArgument,
                       match="aux_buffers is 2, but graph '.*' has no full 16- or 32-bit aux"):
        fusedgemm.build(graph, device="host", tuning={"aux_buffers": 2})
    for hostile in (-1, 5, 2**31 - 1):
        with pytest.raises(fusedgemm.InvalidArgument,
                           match=f"aux_buffers {hostile}; legal: 0 .* to 4 buffers"):
            fusedgemm.build(graph, device="host", tuning={"aux_buffers": hostile})
    with pytest.raises(TypeError, match="tuning 'aux_buffers': 4294967296"):
        fusedgemm.build(graph, device="host", tuning={"aux_buffers": 2**32})
    backwards = np.zeros(1024, np.uint8)[::-1]
    with pytest.raises(TypeError, match="workspace: strides .* go backwards"):
        plan.execute({**inputs, **outputs}, workspace=backwards)
