"""``save`` / ``load``: pytrees of numpy arrays and Python scalars, bit-exact, with no pickle.

A file is a zip archive in numpy's ``.npz`` layout (``np.load`` can read its arrays too):

- ``__srcad_tree__.npy`` -- a uint8 array holding UTF-8 JSON that describes the tree:
  ``{"format": "srcad-tree", "version": 1, "tree": NODE}``, where a NODE is one of
  ``{"dict": [[key, NODE], ...]}`` (str keys, in order), ``{"list": [NODE, ...]}``,
  ``{"tuple": [NODE, ...]}``, ``{"array": "a3"}`` (the member ``a3.npy``),
  ``{"npscalar": "a4"}`` (a numpy scalar, kept as a 0-d member), ``{"none": null}``,
  ``{"bool": true}``, ``{"int": 12}``, ``{"str": "..."}``, ``{"float": "3ff0000000000000"}``
  and ``{"complex": [re, im]}`` (a float's 8 bytes as big-endian hex, so NaN payloads and -0.0
  survive).
- ``a0.npy``, ``a1.npy``, ... -- one ``.npy`` per array, written by ``np.lib.format.write_array``
  (raw bytes behind a header giving dtype, byte order and shape).

Why it cannot unpickle: the structure is JSON, parsed by ``json.loads``; every array is read by
``np.lib.format.read_array(..., allow_pickle=False)``, which refuses an object dtype before
reading any data. Saving an object array is refused too, so a srcad file never contains pickle.
``load`` also reads a plain ``.npy`` (an array) or ``.npz`` (a dict of arrays) the same way.

    >>> import os, tempfile, numpy as np, srcad
    >>> tree = {"W": np.arange(3, dtype=np.float32), "meta": ("adam", 3, None, [1.5, True])}
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.srcad")
    >>> srcad.save(path, tree)
    >>> back = srcad.load(path)
    >>> back["W"], back["meta"]
    (array([0., 1., 2.], dtype=float32), ('adam', 3, None, [1.5, True]))
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import zipfile
from typing import Any

import numpy as np

from .errors import SrcadError

__all__ = ["load", "save"]

_TREE_MEMBER = "__srcad_tree__.npy"
_FORMAT, _VERSION = "srcad-tree", 1


# --- encoding: tree -> (JSON node, arrays) ----------------------------------------------------


def _float_bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def _bits_float(s: str) -> float:
    return struct.unpack(">d", bytes.fromhex(s))[0]


def _encode(tree: Any, arrays: dict[str, np.ndarray], where: str) -> dict:
    """The JSON node for ``tree``; its arrays go into ``arrays`` under fresh member names."""
    if isinstance(tree, dict):
        items = []
        for key, sub in tree.items():
            if not isinstance(key, str):
                raise SrcadError(
                    f"srcad.save: dict key {key!r} at {where} is a {type(key).__name__}; "
                    "only str keys can be saved"
                )
            items.append([key, _encode(sub, arrays, f"{where}[{key!r}]")])
        return {"dict": items}
    if type(tree) in (list, tuple):
        kind = "list" if type(tree) is list else "tuple"
        return {kind: [_encode(sub, arrays, f"{where}[{i}]") for i, sub in enumerate(tree)]}
    if isinstance(tree, (np.ndarray, np.generic)):
        array = np.asarray(tree)
        if array.dtype.hasobject:
            raise SrcadError(
                f"srcad.save: the array at {where} has dtype {array.dtype}, which numpy can only "
                "store with pickle; srcad never pickles -- convert it to a numeric or str dtype"
            )
        name = f"a{len(arrays)}"
        arrays[name] = array
        return {"array" if isinstance(tree, np.ndarray) else "npscalar": name}
    if tree is None:
        return {"none": None}
    if type(tree) is bool:
        return {"bool": tree}
    if type(tree) is int:
        return {"int": tree}
    if type(tree) is float:
        return {"float": _float_bits(tree)}
    if type(tree) is complex:
        return {"complex": [_float_bits(tree.real), _float_bits(tree.imag)]}
    if type(tree) is str:
        return {"str": tree}
    raise SrcadError(
        f"srcad.save: cannot save the {type(tree).__name__} at {where}; a tree holds dicts "
        "(str keys), lists, tuples, numpy arrays and scalars, and int/float/complex/bool/str/None"
    )


# --- decoding: (JSON node, archive) -> tree ------------------------------------------------------


def _decode(node: Any, read: Any, where: str) -> Any:
    if not (isinstance(node, dict) and len(node) == 1):
        raise SrcadError(f"srcad.load: malformed structure at {where}: {node!r}")
    ((kind, value),) = node.items()
    if kind == "dict":
        return {key: _decode(sub, read, f"{where}[{key!r}]") for key, sub in value}
    if kind in ("list", "tuple"):
        items = [_decode(sub, read, f"{where}[{i}]") for i, sub in enumerate(value)]
        return items if kind == "list" else tuple(items)
    if kind == "array":
        return read(value)
    if kind == "npscalar":
        return read(value)[()]
    if kind == "none":
        return None
    if kind in ("bool", "int", "str"):
        expected = {"bool": bool, "int": int, "str": str}[kind]
        if type(value) is not expected:
            raise SrcadError(f"srcad.load: malformed {kind} at {where}: {value!r}")
        return value
    if kind == "float":
        return _bits_float(value)
    if kind == "complex":
        return complex(_bits_float(value[0]), _bits_float(value[1]))
    raise SrcadError(f"srcad.load: unknown node kind {kind!r} at {where}")


def _read_npy(fileobj: Any, what: str) -> np.ndarray:
    try:
        return np.lib.format.read_array(fileobj, allow_pickle=False)
    except ValueError as e:
        if "pickle" in str(e).lower() or "object" in str(e).lower():
            raise SrcadError(
                f"srcad.load: {what} holds a pickled Python object (an object-dtype array); "
                "srcad never unpickles, since unpickling can run arbitrary code -- re-save the "
                "data with numeric arrays"
            ) from None
        raise SrcadError(f"srcad.load: {what} is not a valid .npy array: {e}") from None


# --- public API ---------------------------------------------------------------------------------


def save(path: str | os.PathLike, tree: Any) -> None:
    """Write ``tree`` (dicts with str keys, lists, tuples, arrays and Python scalars) to ``path``.

    The file is written to a temporary name and renamed into place, so a crash never leaves a
    half-written checkpoint; like the temporary file, it is readable by its owner only (0600).
    Exactly ``path`` is written (no ``.npz`` is appended).

    >>> import os, tempfile, numpy as np, srcad
    >>> path = os.path.join(tempfile.mkdtemp(), "x.npz")
    >>> srcad.save(path, [np.float16(-0.0), np.empty((0, 3))])
    >>> srcad.load(path)
    [np.float16(-0.0), array([], shape=(0, 3), dtype=float64)]
    """
    arrays: dict[str, np.ndarray] = {}
    header = {"format": _FORMAT, "version": _VERSION, "tree": _encode(tree, arrays, "tree")}
    text = json.dumps(header, ensure_ascii=False, allow_nan=False).encode("utf-8")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".srcad-save-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
            members = {_TREE_MEMBER: np.frombuffer(text, dtype=np.uint8), **arrays}
            for name, array in members.items():
                with zf.open(
                    name if name.endswith(".npy") else name + ".npy", "w", force_zip64=True
                ) as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path: str | os.PathLike) -> Any:
    """Read a tree written by ``save`` (or a plain ``.npy`` / ``.npz`` of numeric arrays).

    Never unpickles: a file holding a pickled object raises ``SrcadError``.

    >>> import os, tempfile, numpy as np, srcad
    >>> path = os.path.join(tempfile.mkdtemp(), "t.srcad")
    >>> srcad.save(path, {"b": (1, 2.5), "a": np.array([True, False])})
    >>> srcad.load(path)
    {'b': (1, 2.5), 'a': array([ True, False])}
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        magic = f.read(6)
        f.seek(0)
        if magic == b"\x93NUMPY":
            return _read_npy(f, path)
        if not zipfile.is_zipfile(f):
            raise SrcadError(
                f"srcad.load: {path} is neither a srcad archive nor a .npy/.npz file "
                "(pickle files are not read: unpickling can run arbitrary code)"
            )
        f.seek(0)
        with zipfile.ZipFile(f) as zf:
            names = set(zf.namelist())

            def read(member: str) -> np.ndarray:
                if not isinstance(member, str):
                    raise SrcadError(f"srcad.load: {path}: bad array reference {member!r}")
                filename = member if member.endswith(".npy") else member + ".npy"
                if filename not in names:
                    raise SrcadError(f"srcad.load: {path} lacks the array member {member!r}")
                with zf.open(filename) as m:
                    return _read_npy(m, f"{path}:{filename}")

            if _TREE_MEMBER not in names:  # a plain .npz: its arrays, by name
                return {n[: -len(".npy")]: read(n) for n in zf.namelist() if n.endswith(".npy")}
            raw = read(_TREE_MEMBER)
            try:
                header = json.loads(raw.tobytes().decode("utf-8"))
                ok = header["format"] == _FORMAT and "tree" in header
            except (ValueError, TypeError, KeyError):
                ok = False
            if not ok:
                raise SrcadError(f"srcad.load: {path} has a damaged structure description")
            if header.get("version") != _VERSION:
                raise SrcadError(
                    f"srcad.load: {path} is format version {header.get('version')}; this srcad "
                    f"reads version {_VERSION}"
                )
            try:
                return _decode(header["tree"], read, "tree")
            except (TypeError, ValueError, AttributeError, struct.error) as e:
                raise SrcadError(f"srcad.load: {path} has a damaged structure: {e}") from None
