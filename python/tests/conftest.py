"""Shared fixtures of the package tests: the example graphs, a fresh seed per test, and
poisoned output arrays (every byte 0xFF, NaN in each float type)."""

import pathlib
import random

import pytest

import fusedgemm
from fusedgemm import reference

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json"))


@pytest.fixture
def seed(request):
    """A fresh seed per run, printed on failure so a failing draw can be replayed."""
    value = random.SystemRandom().getrandbits(32)
    request.node.user_properties.append(("seed", value))
    print(f"seed {value}")
    return value


def call_buffers(graph, seed):
    """Random inputs and poisoned outputs of a validated graph, keyed by name."""
    inputs = reference.random_inputs(graph, seed)
    outputs = {t.name: reference.empty(t) for t in graph.tensors if t.output}
    return inputs, outputs


def host_plan(path):
    graph = fusedgemm.load_graph(str(path))
    return graph, fusedgemm.build(graph, device="host")
