"""The installed package: its version is the CMake project's, its stubs ship beside the
extension, and every public name has a docstring."""

import inspect
import pathlib
import re

import fusedgemm
from fusedgemm import _fusedgemm, reference

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_version_is_the_cmake_project_version():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert fusedgemm.__version__ == re.search(r"project\(fusedgemm VERSION ([0-9.]+)", cmake)[1]


def test_type_stubs_ship_beside_the_extension():
    stub = pathlib.Path(_fusedgemm.__file__).with_name("_fusedgemm.pyi")
    text = stub.read_text()
    for name in ("class Graph", "class Plan", "def build(", "def execute(", "class BoundPack"):
        assert name in text
    assert (pathlib.Path(fusedgemm.__file__).parent / "py.typed").exists()


def _own_members(cls):
    """Public members fusedgemm defines on `cls` (not those of builtin bases)."""
    for klass in cls.__mro__:
        if klass.__module__.startswith("fusedgemm"):
            for name, member in vars(klass).items():
                if not name.startswith("_"):
                    yield name, member


def test_every_public_name_has_a_docstring():
    missing = []
    for name in fusedgemm.__all__:
        if name == "__version__":
            continue
        obj = getattr(fusedgemm, name)
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for member_name, member in _own_members(obj):
                if callable(member) or hasattr(member, "__get__"):
                    if not (getattr(member, "__doc__", None) or "").strip():
                        missing.append(f"{name}.{member_name}")
    for name in ("empty", "random_inputs", "evaluate", "Evaluation"):
        if not (getattr(reference, name).__doc__ or "").strip():
            missing.append(f"reference.{name}")
    assert not missing, missing
