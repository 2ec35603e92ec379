"""The Python builder and the graph's JSON form; malformed graphs raise GraphError."""

import json

import numpy as np
import pytest

import fusedgemm

from conftest import EXAMPLE_FILES, EXAMPLES

ml_dtypes = pytest.importorskip("ml_dtypes")


def linear_graph(m=64, n=96, k=64, activation="gelu_erf"):
    g = fusedgemm.Graph("linear")
    a = g.tensor(name="A", dims=[1, m, k], strides=[m * k, k, 1], data_type="bf16")
    b = g.tensor(name="B", dims=[1, k, n], strides=[k * n, 1, k], data_type="bf16")
    bias = g.tensor(name="bias", dims=[1, 1, n], data_type="bf16")
    acc = g.matmul(a, b, name="gemm")
    d = g.pointwise(g.pointwise(acc, bias, mode="add"), mode=activation, name="act")
    d.set_output(True).set_name("D").set_data_type("bf16")
    return g


def test_the_builder_names_numbers_and_infers_on_validate():
    g = linear_graph()
    g.validate()
    assert g.is_validated
    d = g.find_tensor("D")
    assert d.dims == [1, 64, 96] and d.output and d.data_type == "bf16"
    assert g.find_tensor(d.uid) is d
    assert {t.name for t in g.tensors} >= {"A", "B", "bias", "D"}
    assert all(t.uid is not None for t in g.tensors)
    assert "act" in str(g)


def test_json_round_trip_loses_nothing():
    g = linear_graph()
    text = g.to_json()
    again = fusedgemm.graph_from_json(text)
    assert again.to_json() == text
    for path in EXAMPLE_FILES:
        loaded = fusedgemm.load_graph(str(path))
        assert fusedgemm.graph_from_json(loaded.to_json()).to_json() == loaded.to_json()


def test_save_and_load(tmp_path):
    g = linear_graph()
    g.save(str(tmp_path / "g.json"))
    assert fusedgemm.load_graph(str(tmp_path / "g.json")).to_json() == g.to_json()
    # A pathlib.Path (os.PathLike) as well as a str.
    g.save(tmp_path / "h.json")
    assert fusedgemm.load_graph(tmp_path / "h.json").to_json() == g.to_json()


def test_a_k_mismatch_raises_graph_error_naming_the_tensor_and_numbers():
    g = fusedgemm.Graph("bad")
    a = g.tensor(name="A", dims=[1, 64, 32], data_type="bf16")
    b = g.tensor(name="B", dims=[1, 16, 64], data_type="bf16")
    g.matmul(a, b).set_output(True).set_data_type("bf16")
    with pytest.raises(fusedgemm.GraphError) as info:
        g.validate()
    assert isinstance(info.value, ValueError)
    assert "matmul_k_mismatch: tensor 'B'" in str(info.value) and "K = 16" in str(info.value)
    with pytest.raises(fusedgemm.GraphError):
        fusedgemm.build(g, device="host")


def test_malformed_json_raises_graph_error():
    with pytest.raises(fusedgemm.GraphError, match="not JSON"):
        fusedgemm.graph_from_json("{")
    doc = json.loads((EXAMPLES / "plain.json").read_text())
    doc["nodes"][0]["kind"] = "convolution"
    with pytest.raises(fusedgemm.GraphError, match="convolution"):
        fusedgemm.graph_from_json(json.dumps(doc))


def test_an_unreadable_file_raises_os_error(tmp_path):
    with pytest.raises(OSError, match="load_graph"):
        fusedgemm.load_graph(str(tmp_path / "missing.json"))


def test_unknown_spellings_raise_value_error_listing_the_legal_ones():
    g = fusedgemm.Graph()
    with pytest.raises(ValueError, match="legal: fp32"):
        g.tensor(name="A", dims=[1, 8, 8], data_type="fp64")
    a = g.tensor(name="A", dims=[1, 8, 8], data_type="bf16")
    with pytest.raises(ValueError, match="gelu_erf"):
        g.pointwise(a, mode="gelu")
    with pytest.raises(ValueError, match="amax"):
        g.reduction(a, mode="median")
    with pytest.raises(ValueError, match="legal: None"):
        fusedgemm.build(linear_graph(), device="tpu")


def test_a_pointwise_attribute_past_fp32_range_is_refused_as_json_refuses_it():
    g = fusedgemm.Graph()
    a = g.tensor(name="A", dims=[1, 8, 8], data_type="bf16")
    with pytest.raises(ValueError, match="relu_upper_clip 1e\\+40 is out of fp32 range"):
        g.pointwise(a, mode="relu", relu_upper_clip=1e40)
    # Infinity is a value fp32 has; the largest finite double below its range rounds.
    clipped = g.pointwise(a, mode="relu", relu_upper_clip=float("inf"), relu_lower_clip=-3.4e38)
    clipped.set_output(True).set_name("Y").set_data_type("bf16")
    again = fusedgemm.graph_from_json(g.to_json())
    assert again.to_json() == g.to_json()


def test_bias_gelu_built_in_python_matches_numpy_in_bf16(seed):
    # bf16 arrays through ml_dtypes, keys by name, uid and Tensor handle alike.
    rng = np.random.default_rng(seed)
    g = linear_graph()
    plan = fusedgemm.build(g, device="host")
    bf16 = ml_dtypes.bfloat16
    a = rng.uniform(-1, 1, (1, 64, 64)).astype(bf16)
    b_t = rng.uniform(-1, 1, (1, 96, 64)).astype(bf16)  # B stored K-major: [b, N, K]
    b = b_t.transpose(0, 2, 1)
    bias = rng.uniform(-1, 1, (96,)).astype(bf16)  # a rank-1 bias aligns to the last axis
    d = np.full((1, 64, 96), np.nan, bf16)
    plan.execute({"A": a, g.find_tensor("B").uid: b, g.find_tensor("bias"): bias, "D": d})
    x = a.astype(np.float64)[0] @ b.astype(np.float64)[0] + bias.astype(np.float64)
    from math import erf
    want = x * 0.5 * (1 + np.vectorize(erf)(x / np.sqrt(2)))
    got = d.astype(np.float64)[0]
    rel = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert rel < 1e-2, rel
    assert not np.isnan(got).any()


def test_a_fp8_plan_takes_ml_dtypes_fp8_arrays(seed):
    rng = np.random.default_rng(seed)
    g = fusedgemm.Graph("fp8")
    a = g.tensor(name="A", dims=[1, 64, 64], strides=[64 * 64, 64, 1], data_type="fp8_e4m3")
    b = g.tensor(name="B", dims=[1, 64, 64], strides=[64 * 64, 1, 64], data_type="fp8_e4m3")
    g.matmul(a, b).set_output(True).set_name("D").set_data_type("fp32")
    plan = fusedgemm.build(g, device="host")
    fp8 = ml_dtypes.float8_e4m3fn
    av = rng.uniform(-1, 1, (1, 64, 64)).astype(fp8)
    bv = rng.uniform(-1, 1, (1, 64, 64)).astype(fp8).transpose(0, 2, 1)
    d = np.full((1, 64, 64), np.nan, np.float32)
    plan.execute({"A": av, "B": bv, "D": d})
    want = av.astype(np.float64)[0] @ bv.astype(np.float64)[0]
    assert np.linalg.norm(d[0] - want) / np.linalg.norm(want) < 1e-5
