"""srcad.save / srcad.load: bit-exact round trips of pytrees, and never any unpickling."""

import doctest
import io
import re
import json
import os
import pathlib
import pickle
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import srcad
import srcad.io
import srcad.optim


def assert_identical(a, b, where="tree"):
    """Same container types, key order, dtypes, shapes and bytes, all the way down."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_identical(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_identical(x, y, f"{where}[{i}]")
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), where
    elif isinstance(a, float):
        assert struct.pack("<d", a) == struct.pack("<d", b), where
    elif isinstance(a, complex):
        assert struct.pack("<dd", a.real, a.imag) == struct.pack("<dd", b.real, b.imag), where
    else:
        assert a == b, where


def roundtrip(tmp_path, tree, name="t.srcad"):
    path = tmp_path / name
    srcad.save(path, tree)
    back = srcad.load(path)
    assert_identical(tree, back)
    return back


# --- dtypes, shapes, values -----------------------------------------------------------------------

DTYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128,
    ">f8", ">i4", "<U5", "S3", "datetime64[ns]", "timedelta64[s]",
    [("x", "<f4"), ("n", "<i2")],
]  # fmt: skip
SHAPES = [(), (0,), (3,), (2, 0, 3), (3, 4), (2, 3, 1, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_and_shape(tmp_path, dtype):
    rng = np.random.default_rng(0)
    tree = {}
    for shape in SHAPES:
        n = int(np.prod(shape))
        raw = rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8)
        if np.dtype(dtype).kind == "U":
            a = np.array((["ab", "", "xyz\u00e9"] * n)[:n], dtype=dtype).reshape(shape)
        else:  # arbitrary bit patterns: NaNs with payloads, subnormals, NaT, all of it
            a = raw.view(dtype).reshape(shape)
        tree[str(shape)] = a
    roundtrip(tmp_path, tree)


def test_layouts_and_scalars(tmp_path):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    tree = [
        base.T,  # Fortran order
        base[::2, 1::3],  # non-contiguous view
        np.asfortranarray(base),
        np.float16(-0.0),
        np.int64(-(2**63)),
        np.complex64(1 - 2j),
        np.bool_(True),
        np.float32("nan"),
    ]
    back = roundtrip(tmp_path, tree)
    assert np.array_equal(back[1], base[::2, 1::3])
    assert type(back[3]) is np.float16 and np.signbit(back[3])


def test_nan_payloads_and_negative_zero(tmp_path):
    bits64 = np.array([0x7FF8000000000001, 0xFFF0000000000ABC, 0x8000000000000000], np.uint64)
    bits32 = np.array([0x7FC00123, 0xFF800001, 0x80000000], np.uint32)
    bits16 = np.array([0x7E01, 0xFC01, 0x8000], np.uint16)
    py_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF800000000BEEF))[0]
    tree = {
        "f64": bits64.view(np.float64),
        "f32": bits32.view(np.float32),
        "f16": bits16.view(np.float16),
        "py": [-0.0, py_nan, float("inf"), -float("inf"), 5e-324, complex(-0.0, py_nan)],
    }
    back = roundtrip(tmp_path, tree)
    assert np.array_equal(back["f64"].view(np.uint64), bits64)
    assert np.array_equal(back["f32"].view(np.uint32), bits32)
    assert struct.pack("<d", back["py"][1]) == struct.pack("<d", py_nan)
    assert str(back["py"][0]) == "-0.0"


def test_python_scalars_and_containers(tmp_path):
    tree = {
        "zeta": 1,
        "alpha": (True, False, 0, 1, None),  # bools stay bools, ints stay ints
        "big": [2**100, -(2**70)],
        "text": ["", "héllo ✓", "\x00nul"],
        "empty": ({}, [], ()),
        "nested": {"b": [(1.5, [np.ones(2)])], "a": ({"x": None},)},
        "": "empty key",
    }
    back = roundtrip(tmp_path, tree)
    assert list(back) == ["zeta", "alpha", "big", "text", "empty", "nested", ""]
    assert list(back["nested"]) == ["b", "a"]
    assert type(back["alpha"]) is tuple and type(back["nested"]["b"]) is list
    assert type(back["nested"]["b"][0]) is tuple and back["alpha"][0] is True


def test_top_level_leaves(tmp_path):
    for i, tree in enumerate([np.arange(3), 3.25, None, "s", (), [np.zeros((0, 2))]]):
        roundtrip(tmp_path, tree, f"{i}.srcad")


# --- random pytrees -----------------------------------------------------------------------------

arrays = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.float16, np.int32, np.uint8, np.bool_,
                           np.complex128]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
    elements=None,
)  # fmt: skip
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=5),
    st.complex_numbers(allow_nan=True),
)  # fmt: skip
trees = st.recursive(
    st.one_of(arrays, scalars),
    lambda sub: st.one_of(
        st.lists(sub, max_size=4),
        st.lists(sub, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=4), sub, max_size=4),
    ),
    max_leaves=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=trees)
def test_random_pytrees_round_trip(tmp_path, tree):
    roundtrip(tmp_path, tree)


# --- optimiser state ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda p: srcad.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
        lambda p: srcad.optim.SGD(p, lr=0.1),  # momentum_buffer stays None
        lambda p: srcad.optim.Adam(p, amsgrad=True, betas=(0.8, 0.9)),
        lambda p: srcad.optim.AdamW(p),
    ],
)
def test_optimizer_state_round_trips(tmp_path, make):
    params = {"W": np.ones((2, 3), np.float32), "b": [np.zeros(3)]}
    opt = make(params)
    opt.step({"W": np.full((2, 3), 0.5, np.float32), "b": [np.arange(3.0)]})
    state = opt.state_dict()
    back = roundtrip(tmp_path, state)
    assert type(back["hyperparams"].get("betas", ())) is tuple
    opt.load_state_dict(back)


# --- never unpickle ---------------------------------------------------------------------------


class Boobytrap:
    """Unpickling this creates a marker file: the proof that code ran."""

    marker = None

    def __reduce__(self):
        return (pathlib.Path.touch, (self.marker,))


@pytest.fixture
def no_pickle(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("srcad called pickle")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)


def pickled_files(tmp_path):
    trap = Boobytrap()
    trap.marker = tmp_path / "PWNED"
    obj = np.array([trap, 1], dtype=object)
    files = {}
    files["npy"] = tmp_path / "obj.npy"
    np.save(files["npy"], obj, allow_pickle=True)
    files["npz"] = tmp_path / "obj.npz"
    np.savez(files["npz"], weights=np.ones(3), extra=obj)
    files["pickle"] = tmp_path / "raw.pkl"
    files["pickle"].write_bytes(pickle.dumps({"w": trap}))
    # a srcad archive whose array member was swapped for a pickled object array
    files["srcad"] = tmp_path / "tampered.srcad"
    srcad.save(files["srcad"], {"w": np.ones(3)})
    with zipfile.ZipFile(files["srcad"]) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    buf = io.BytesIO()
    np.save(buf, obj, allow_pickle=True)
    members["a0.npy"] = buf.getvalue()
    # (without the checksum record: a file of the format before it, which loads with every
    # check but the checksums -- so the object array itself is what must be refused)
    members.pop("__srcad_sums__.npy", None)
    with zipfile.ZipFile(files["srcad"], "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    return files, trap.marker


@pytest.mark.parametrize("kind", ["npy", "npz", "pickle", "srcad"])
def test_pickled_objects_are_refused_never_unpickled(tmp_path, no_pickle, kind):
    files, marker = pickled_files(tmp_path)
    with pytest.raises(srcad.SrcadError) as e:
        srcad.load(files[kind])
    # (the message itself, not the temporary path, which holds the test's name)
    assert re.search("never unpickles|not read: unpickling", str(e.value)), str(e.value)
    assert not marker.exists()


def test_save_refuses_what_would_need_pickle(tmp_path, no_pickle):
    path = tmp_path / "x.srcad"
    with pytest.raises(srcad.SrcadError, match="only store with pickle"):
        srcad.save(path, {"w": np.array([1, None], dtype=object)})
    with pytest.raises(srcad.SrcadError, match="only str keys"):
        srcad.save(path, {1: np.ones(2)})
    with pytest.raises(srcad.SrcadError, match="cannot save the set"):
        srcad.save(path, {"s": {1, 2}})
    with pytest.raises(srcad.SrcadError, match="cannot save the Boobytrap"):
        srcad.save(path, [Boobytrap()])
    assert not path.exists() and os.listdir(tmp_path) == []  # no temp files left behind


def test_plain_numpy_files_load(tmp_path, no_pickle):
    np.save(tmp_path / "a.npy", np.arange(4.0))
    np.savez(tmp_path / "b.npz", x=np.ones(2, np.float32), y=np.arange(3))
    assert_identical(srcad.load(tmp_path / "a.npy"), np.arange(4.0))
    assert_identical(
        srcad.load(tmp_path / "b.npz"), {"x": np.ones(2, np.float32), "y": np.arange(3)}
    )


def test_file_format(tmp_path):
    path = tmp_path / "ckpt"  # written exactly there: no ".npz" appended
    srcad.save(path, {"w": np.ones(2), "n": 3})
    assert os.listdir(tmp_path) == ["ckpt"]
    with np.load(path, allow_pickle=False) as npz:  # numpy reads it as a plain .npz
        header = json.loads(npz["__srcad_tree__"].tobytes())
        assert header == {
            "format": "srcad-tree",
            "version": 1,
            "tree": {"dict": [["w", {"array": "a0"}], ["n", {"int": 3}]]},
        }
        assert np.array_equal(npz["a0"], np.ones(2))


def test_damaged_files(tmp_path):
    path = tmp_path / "bad"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(srcad.SrcadError, match="neither"):
        srcad.load(path)
    srcad.save(path, [np.ones(2)])
    path.write_bytes(path.read_bytes()[:-40])  # truncated
    with pytest.raises(srcad.SrcadError):
        srcad.load(path)
    for header in (b"{not json", json.dumps({"format": "srcad-tree", "version": 99, "tree": 1})):
        buf = io.BytesIO()
        np.save(
            buf, np.frombuffer(header if isinstance(header, bytes) else header.encode(), np.uint8)
        )
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("__srcad_tree__.npy", buf.getvalue())
        with pytest.raises(srcad.SrcadError, match="damaged|version 99"):
            srcad.load(path)
    with pytest.raises(FileNotFoundError):
        srcad.load(tmp_path / "missing")


def test_docstring_examples():
    result = doctest.testmod(srcad.io, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
