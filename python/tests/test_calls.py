"""Bound packs, views the plan reads through, and threads."""

import concurrent.futures

import numpy as np
import pytest

import fusedgemm
from fusedgemm import reference

pytest.importorskip("ml_dtypes")  # bf16 and fp8 numpy arrays on the host device

from conftest import EXAMPLES, call_buffers, host_plan


def test_a_bound_pack_executes_again_and_sees_new_values(seed):
    graph, plan = host_plan(EXAMPLES / "aux_bias.json")
    inputs, outputs = call_buffers(graph, seed)
    bound = plan.bind({**inputs, **outputs})
    assert isinstance(bound, fusedgemm.BoundPack)
    for round_ in range(3):
        fresh = reference.random_inputs(graph, seed + 1 + round_)
        for name, array in fresh.items():
            inputs[name][...] = array  # same addresses, new values
        for array in outputs.values():
            array.view(np.uint8)[...] = 0xFF
        plan.execute(bound)
        expected = reference.evaluate(graph, inputs)
        assert expected.compare("D", outputs["D"]).passed
    assert sum(plan.deferrals().values()) == 0


def test_a_tuning_pins_the_kernel_shape(seed):
    # The recipe takes the tuning (describe says so); the host device interprets the program,
    # so the call checks the plan end to end, not the kernel (KernelShapeGpu runs that).
    graph = fusedgemm.load_graph(str(EXAMPLES / "plain.json"))
    plan = fusedgemm.build(graph, device="host", tuning={
        "tile_m": 64, "tile_n": 256, "ping_pong": True, "staging_buffers": 4})
    assert "2 ping-pong consumers" in plan.describe()
    assert "4 buffer(s) each" in plan.describe()
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    assert reference.evaluate(graph, inputs).compare("D", outputs["D"]).passed


def test_a_bound_pack_keeps_its_arrays_alive(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    d = outputs["D"]
    bound = plan.bind({**inputs, **outputs})
    expected = reference.evaluate(graph, inputs)
    del inputs, outputs
    plan.execute(bound)
    assert expected.compare("D", d).passed


def test_a_bound_pack_that_breaks_a_rule_is_refused_every_time(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    bound = plan.bind({**inputs, "D": outputs["D"][:, :, :128]})
    for _ in range(2):
        with pytest.raises(fusedgemm.IllegalCall) as info:
            plan.execute(bound)
        assert (info.value.rule, info.value.role, info.value.tensor) == ("extent", "output", "D")
    assert plan.deferrals()["extent"] == 2
    assert plan.explain(bound).rule == "extent"
    assert (outputs["D"].view(np.uint8) == 0xFF).all()


def test_a_bound_pack_of_another_plan_is_refused(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    _, other = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    bound = other.bind({**inputs, **outputs})
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.execute(bound)
    assert info.value.rule == "bound_pack"
    assert (outputs["D"].view(np.uint8) == 0xFF).all()
    # Nor does it say what workspace a call of this plan needs.
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.workspace_bytes(bound)
    assert info.value.rule == "bound_pack"


def test_a_bound_tap_pack_gets_its_workspace(seed):
    graph, plan = host_plan(EXAMPLES / "taps.json")
    inputs, outputs = call_buffers(graph, seed)
    bound = plan.bind({**inputs, **outputs})
    assert bound.workspace_bytes == plan.workspace_bytes(bound) > 0
    plan.execute(bound)
    expected = reference.evaluate(graph, inputs)
    assert all(expected.compare(n, a).passed for n, a in outputs.items())


def test_a_smaller_problem_runs_through_views(seed):
    # A fused plan serves other M and N: arrays of the call's extents are views the rule
    # table judges, and the outputs match a graph declared at those extents.
    graph, plan = host_plan(EXAMPLES / "plain.json")
    small = fusedgemm.load_graph(str(EXAMPLES / "plain.json"))
    for t, dims, strides in (("A", [1, 128, 128], [128 * 128, 128, 1]),
                             ("B", [1, 128, 64], [128 * 64, 1, 128]),
                             ("D", [1, 128, 64], [128 * 64, 64, 1])):
        small.find_tensor(t).set_dim(dims).set_stride(strides)
    small.validate()
    inputs, outputs = call_buffers(small, seed)
    plan.execute({**inputs, **outputs})
    assert reference.evaluate(small, inputs).compare("D", outputs["D"]).passed


def test_threads_execute_one_plan_at_once(seed):
    graph, plan = host_plan(EXAMPLES / "epilogue.json")
    calls = [call_buffers(graph, seed + i) for i in range(4)]

    def run(call):
        inputs, outputs = call
        for _ in range(2):
            plan.execute({**inputs, **outputs})
        return all(reference.evaluate(graph, inputs).compare(n, a).passed
                   for n, a in outputs.items())

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(run, calls))
    assert sum(plan.deferrals().values()) == 0


def test_threads_share_one_bound_pack_and_refusals_stay_per_call(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    bound = plan.bind({**inputs, **outputs})
    bad = {**inputs, "D": np.zeros((1, 256, 256), np.float32)}

    def run(i):
        if i % 2:
            with pytest.raises(fusedgemm.IllegalCall):
                plan.execute(bad)
            return "refused"
        plan.execute(bound)
        return "ran"

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, range(8)))
    assert results.count("refused") == 4
    assert plan.deferrals()["data_type"] == 4
    assert reference.evaluate(graph, inputs).compare("D", outputs["D"]).passed


# A dict call's bound pack is kept by the plan, keyed by the views it was bound from
# (BoundPackCache): a call on other memory, or on other views of the same memory, is bound
# anew, and the cache keeps no array alive.
def test_a_dict_call_on_other_arrays_writes_only_those(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    other = reference.empty(graph.find_tensor(next(t.uid for t in graph.tensors if t.name == "D")))
    outputs["D"].view(np.uint8)[...] = 0xFF
    plan.execute({**inputs, "D": other})
    assert reference.evaluate(graph, inputs).compare("D", other).passed
    assert (outputs["D"].view(np.uint8) == 0xFF).all()


def test_a_narrower_view_of_the_same_memory_is_judged_again(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    plan.execute({**inputs, **outputs})
    outputs["D"].view(np.uint8)[...] = 0xFF
    for _ in range(2):
        with pytest.raises(fusedgemm.IllegalCall) as info:
            plan.execute({**inputs, "D": outputs["D"][:, :, :128]})
        assert info.value.rule == "extent"
    assert plan.deferrals()["extent"] == 2
    assert (outputs["D"].view(np.uint8) == 0xFF).all()


def test_dict_calls_past_the_cache_rotate_and_stay_right(seed):
    graph, plan = host_plan(EXAMPLES / "aux_bias.json")
    calls = [call_buffers(graph, seed + i) for i in range(20)]  # more than the cache holds
    for _ in range(2):
        for inputs, outputs in calls:
            for array in outputs.values():
                array.view(np.uint8)[...] = 0xFF
            plan.execute({**inputs, **outputs})
            assert reference.evaluate(graph, inputs).compare("D", outputs["D"]).passed


def test_a_dict_call_keeps_no_array_alive(seed):
    import weakref

    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)
    d = outputs.pop("D")
    storage = d.base
    watch = weakref.ref(storage)
    plan.execute({**inputs, "D": d})
    del d, storage
    assert watch() is None


def test_threads_build_from_one_graph_at_once(seed):
    graph = fusedgemm.load_graph(str(EXAMPLES / "aux_bias.json"))

    def build(_):
        return fusedgemm.build(graph, device="host")

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        plans = list(pool.map(build, range(24)))
    inputs, outputs = call_buffers(graph, seed)
    plans[-1].execute({**inputs, **outputs})
    assert reference.evaluate(graph, inputs).compare("D", outputs["D"]).passed


def test_a_dict_that_drops_an_array_while_it_is_read_is_read_as_it_was(seed):
    graph, plan = host_plan(EXAMPLES / "plain.json")
    inputs, outputs = call_buffers(graph, seed)

    class Shrinking(dict):
        """Drops its output from its items as they are listed (and from itself)."""

        def items(self):
            listed = list(super().items())
            self.pop("D", None)
            return listed

    buffers = Shrinking({**inputs, "D": outputs.pop("D")})
    plan.execute(buffers)
    assert "D" in buffers  # read through the dict itself, not its items()
    assert reference.evaluate(graph, inputs).compare("D", buffers["D"]).passed
