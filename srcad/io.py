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
- ``__srcad_sums__.npy`` (since issue 24) -- a uint8 array holding UTF-8 JSON
  ``{"format": "srcad-sums", "version": 1, "members": {NAME: [SIZE, SHA256], ...}}``: the size
  and sha256 of every other member's bytes (the structure's included); and the zip archive's
  comment, ``srcad-sums-v1 <sha256 of the sums member>``. So a checksum chain covers the
  structure and every array, and the zip directory's names too (a renamed member fails).

The structure's ``version`` stays 1: a file written before the checksums (no sums member, no
comment) still loads, with every check below but the checksums (a member's CRC-32 is still
checked); a file written now loads in an older srcad, which ignores the extra member.

``load`` never lies and never allocates what the file does not hold: every member's declared
size must fit in the file (a deflated one in 1032 times its compressed size, deflate's
limit); every ``.npy`` header's shape times item size must be exactly the bytes that follow
it, checked before the array is allocated (``max_bytes=`` caps the total too); the structure
is validated node by node (kinds, types, 16-hex-digit floats, member names, nesting at most
`MAX_DEPTH` deep, which ``save`` enforces too); every checksum is compared. Anything else --
truncation, flipped bits, a damaged zip directory -- raises ``SrcadError``.

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

import hashlib
import json
import os
import re
import struct
import tempfile
import zipfile
import zlib
from typing import Any

import numpy as np

try:  # numpy 2: the .npy header reader lives here (numpy 1.26: np.lib.format itself)
    from numpy.lib import _format_impl
except ImportError:  # pragma: no cover - numpy 1.26
    _format_impl = np.lib.format

from .errors import SrcadError

__all__ = ["load", "save"]

_TREE_MEMBER = "__srcad_tree__.npy"
_SUMS_MEMBER = "__srcad_sums__.npy"
_SUMS_COMMENT = b"srcad-sums-v1 "
_FORMAT, _VERSION = "srcad-tree", 1
MAX_DEPTH = 200  # containers nested deeper are refused by save and load
_HEX16 = re.compile(r"[0-9a-f]{16}")
_MEMBER = re.compile(r"a[0-9]{1,9}")
_DAMAGED = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, ValueError,
            KeyError, IndexError, TypeError, AttributeError, NotImplementedError, struct.error,
            OverflowError, RecursionError, UnicodeDecodeError,
            RuntimeError,  # (zipfile: "is encrypted, password required")
            OSError)  # (a seek to a negative offset a damaged directory names)


# --- encoding: tree -> (JSON node, arrays) ----------------------------------------------------


def _float_bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def _bits_float(s: str) -> float:
    return struct.unpack(">d", bytes.fromhex(s))[0]


def _encode(tree: Any, arrays: dict[str, np.ndarray], where: str, depth: int = 0) -> dict:
    """The JSON node for ``tree``; its arrays go into ``arrays`` under fresh member names."""
    if depth > MAX_DEPTH and isinstance(tree, (dict, list, tuple)):
        raise SrcadError(f"srcad.save: the tree is nested more than {MAX_DEPTH} containers deep "
                         f"at {where[:200]}...; srcad files are limited to that depth")
    if isinstance(tree, dict):
        items = []
        for key, sub in tree.items():
            if not isinstance(key, str):
                raise SrcadError(
                    f"srcad.save: dict key {key!r} at {where} is a {type(key).__name__}; "
                    "only str keys can be saved"
                )
            items.append([key, _encode(sub, arrays, f"{where}[{key!r}]", depth + 1)])
        return {"dict": items}
    if type(tree) in (list, tuple):
        kind = "list" if type(tree) is list else "tuple"
        return {kind: [_encode(sub, arrays, f"{where}[{i}]", depth + 1)
                       for i, sub in enumerate(tree)]}
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


def _decode(node: Any, read: Any, where: str, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise SrcadError(f"srcad.load: the structure is nested more than {MAX_DEPTH} deep")
    if not (isinstance(node, dict) and len(node) == 1):
        raise SrcadError(f"srcad.load: malformed structure at {where}: {str(node)[:100]}")
    ((kind, value),) = node.items()
    bad = SrcadError(f"srcad.load: malformed {kind} at {where}: {str(value)[:100]}")
    if kind == "dict":
        if not isinstance(value, list):
            raise bad
        out = {}
        for item in value:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise bad
            out[item[0]] = _decode(item[1], read, f"{where}[{item[0]!r}]", depth + 1)
        if len(out) != len(value):
            raise bad  # (a repeated key)
        return out
    if kind in ("list", "tuple"):
        if not isinstance(value, list):
            raise bad
        items = []
        for i, sub in enumerate(value):
            items.append(_decode(sub, read, f"{where}[{i}]", depth + 1))
        return items if kind == "list" else tuple(items)
    if kind in ("array", "npscalar"):
        if not (isinstance(value, str) and _MEMBER.fullmatch(value)):
            raise bad
        array = read(value)
        if kind == "array":
            return array
        if array.ndim != 0:
            raise bad
        return array[()]
    if kind == "none":
        if value is not None:
            raise bad
        return None
    if kind in ("bool", "int", "str"):
        expected = {"bool": bool, "int": int, "str": str}[kind]
        if type(value) is not expected:
            raise bad
        return value
    if kind == "float":
        if not (isinstance(value, str) and _HEX16.fullmatch(value)):
            raise bad
        return _bits_float(value)
    if kind == "complex":
        if not (isinstance(value, list) and len(value) == 2 and
                all(isinstance(v, str) and _HEX16.fullmatch(v) for v in value)):
            raise bad
        return complex(_bits_float(value[0]), _bits_float(value[1]))
    raise SrcadError(f"srcad.load: unknown node kind {str(kind)[:40]!r} at {where}")


class _Hashing:
    """A reader or writer that hashes and counts the bytes going through it."""

    def __init__(self, inner):
        self.inner, self.sha, self.count = inner, hashlib.sha256(), 0

    def read(self, n=-1):
        data = self.inner.read(n)
        self.sha.update(data)
        self.count += len(data)
        return data

    def write(self, data):
        self.sha.update(data)
        self.count += len(data)
        return self.inner.write(data)


def _header(fp) -> tuple:
    """(shape, fortran_order, dtype) of the .npy header at `fp`."""
    version = np.lib.format.read_magic(fp)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fp)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fp)
    impl = getattr(np.lib.format, "_read_array_header", None)
    if impl is None:  # (numpy 2 keeps it in _format_impl)
        impl = _format_impl._read_array_header
    return impl(fp, version)


def _read_npy(fileobj: Any, what: str, size: int | None = None, expect=None,
              budget: list | None = None) -> np.ndarray:
    """The array in the .npy stream `fileobj`, which holds exactly `size` bytes (None: not
    checked); `expect`: its [size, sha256]; `budget`: [bytes still allowed]. The declared
    shape is checked against `size` and the budget before anything is allocated."""
    fp = _Hashing(fileobj)
    try:
        shape, fortran, dtype = _header(fp)
    except ValueError as e:
        if "pickle" in str(e).lower() or "object" in str(e).lower():
            raise _pickled(what) from None
        raise SrcadError(f"srcad.load: {what} is not a valid .npy array: {e}") from None
    if dtype.hasobject:
        raise _pickled(what)
    count = 1
    for n in shape:
        if not isinstance(n, int) or n < 0:
            raise SrcadError(f"srcad.load: {what} declares the shape {shape}")
        count *= n
    nbytes = count * dtype.itemsize
    if size is not None and fp.count + nbytes != size:
        raise SrcadError(f"srcad.load: {what} declares {nbytes:,} bytes of data ({shape}, "
                         f"{dtype}) but holds {size - fp.count:,}: damaged or truncated")
    if budget is not None:
        if nbytes > budget[0]:
            raise SrcadError(f"srcad.load: {what} declares {nbytes:,} bytes, over the limit "
                             f"(max_bytes)")
        budget[0] -= nbytes
    array = np.ndarray(count, dtype=dtype)
    if nbytes:
        flat = array.view(np.uint8)
        step = 1 << 24
        for start in range(0, nbytes, step):
            data = fp.read(min(step, nbytes - start))
            if len(data) != min(step, nbytes - start):
                raise SrcadError(f"srcad.load: {what} is truncated")
            flat[start:start + len(data)] = np.frombuffer(data, np.uint8)
    if fp.read(1):  # (and, in a zip member, its CRC-32 checked at the end)
        raise SrcadError(f"srcad.load: {what} has bytes after its data")
    if expect is not None and (fp.count != expect[0] or fp.sha.hexdigest() != expect[1]):
        raise SrcadError(f"srcad.load: {what} does not match its checksum: the file is damaged")
    array = array.reshape(shape[::-1]).transpose() if fortran else array.reshape(shape)
    return array


def _pickled(what: str) -> SrcadError:
    return SrcadError(
        f"srcad.load: {what} holds a pickled Python object (an object-dtype array); "
        "srcad never unpickles, since unpickling can run arbitrary code -- re-save the "
        "data with numeric arrays"
    )


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
            sums = {}
            for name, array in members.items():
                name = name if name.endswith(".npy") else name + ".npy"
                with zf.open(name, "w", force_zip64=True) as member:
                    h = _Hashing(member)
                    np.lib.format.write_array(h, array, allow_pickle=False)
                sums[name] = [h.count, h.sha.hexdigest()]
            body = json.dumps({"format": "srcad-sums", "version": 1, "members": sums}).encode()
            with zf.open(_SUMS_MEMBER, "w", force_zip64=True) as member:
                h = _Hashing(member)
                np.lib.format.write_array(h, np.frombuffer(body, np.uint8), allow_pickle=False)
            zf.comment = _SUMS_COMMENT + h.sha.hexdigest().encode()
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path: str | os.PathLike, *, max_bytes: int | None = None) -> Any:
    """Read a tree written by ``save`` (or a plain ``.npy`` / ``.npz`` of numeric arrays).

    Never unpickles: a file holding a pickled object raises ``SrcadError``. Verifies the
    archive's checksums and refuses, with ``SrcadError`` and before allocating, any
    malformed input: truncation, flipped bits, wrong types, nesting deeper than
    `MAX_DEPTH`, arrays declaring more bytes than the file holds or, with `max_bytes`,
    more than that in all.

    >>> import os, tempfile, numpy as np, srcad
    >>> path = os.path.join(tempfile.mkdtemp(), "t.srcad")
    >>> srcad.save(path, {"b": (1, 2.5), "a": np.array([True, False])})
    >>> srcad.load(path)
    {'b': (1, 2.5), 'a': array([ True, False])}
    """
    path = os.fspath(path)
    budget = None if max_bytes is None else [int(max_bytes)]
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        try:
            magic = f.read(6)
            f.seek(0)
            if magic == b"\x93NUMPY":
                return _read_npy(f, path, size, budget=budget)
            if not zipfile.is_zipfile(f):
                raise SrcadError(
                    f"srcad.load: {path} is neither a srcad archive nor a .npy/.npz file "
                    "(pickle files are not read: unpickling can run arbitrary code)"
                )
            f.seek(0)
            with zipfile.ZipFile(f) as zf:
                return _load_zip(zf, path, size, budget)
        except SrcadError:
            raise
        except MemoryError:
            raise SrcadError(f"srcad.load: {path} asks for more memory than there is") from None
        except _DAMAGED as e:
            raise SrcadError(f"srcad.load: {path} is damaged ({type(e).__name__}: "
                             f"{str(e)[:200]})") from None


def _load_zip(zf: zipfile.ZipFile, path: str, size: int, budget) -> Any:
    infos = {}
    for info in zf.infolist():
        if info.filename in infos:
            raise SrcadError(f"srcad.load: {path} holds the member {info.filename!r} twice")
        if info.flag_bits & 0x1:
            ok = False  # (encrypted: never written by srcad or numpy)
        elif info.compress_type == zipfile.ZIP_STORED:
            ok = info.file_size == info.compress_size and \
                info.header_offset + info.compress_size <= size
        elif info.compress_type == zipfile.ZIP_DEFLATED:  # (np.savez_compressed)
            ok = info.compress_size <= size and \
                info.file_size <= 1032 * info.compress_size + 1024
        else:
            ok = False
        if not ok:
            raise SrcadError(f"srcad.load: {path}: the member {info.filename!r} declares "
                             f"{info.file_size:,} bytes that the file cannot hold: damaged")
        infos[info.filename] = info

    def member(name: str, expect=None) -> np.ndarray:
        with zf.open(infos[name]) as m:
            return _read_npy(m, f"{path}:{name}", infos[name].file_size, expect, budget)

    if _TREE_MEMBER not in infos:  # a plain .npz: its arrays, by name
        if zf.comment.startswith(_SUMS_COMMENT) or _SUMS_MEMBER in infos:
            raise SrcadError(f"srcad.load: {path} lacks its structure member: damaged")
        return {n[: -len(".npy")]: member(n) for n in infos if n.endswith(".npy")}
    sums = None
    if zf.comment.startswith(_SUMS_COMMENT) or _SUMS_MEMBER in infos:
        want = zf.comment[len(_SUMS_COMMENT):].decode("ascii", "replace")
        if not zf.comment.startswith(_SUMS_COMMENT) or _SUMS_MEMBER not in infos or \
                not re.fullmatch(r"[0-9a-f]{64}", want):
            raise SrcadError(f"srcad.load: {path} has a damaged checksum record")
        info = infos[_SUMS_MEMBER]
        raw = member(_SUMS_MEMBER, [info.file_size, want])
        record = json.loads(raw.tobytes().decode("utf-8"))
        sums = record["members"] if record.get("format") == "srcad-sums" and \
            record.get("version") == 1 else None
        if not isinstance(sums, dict) or set(sums) | {_SUMS_MEMBER} != set(infos) or \
                not all(isinstance(v, list) and len(v) == 2 for v in sums.values()):
            raise SrcadError(f"srcad.load: {path}: its members do not match its checksum "
                             "record: damaged")

    def read(name: str) -> np.ndarray:
        filename = name + ".npy"
        if filename not in infos:
            raise SrcadError(f"srcad.load: {path} lacks the array member {name!r}")
        return member(filename, None if sums is None else sums[filename])

    raw = member(_TREE_MEMBER, None if sums is None else sums[_TREE_MEMBER])
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
        ok = isinstance(header, dict) and header["format"] == _FORMAT and "tree" in header
    except (ValueError, TypeError, KeyError, RecursionError):
        ok = False
    if not ok:
        raise SrcadError(f"srcad.load: {path} has a damaged structure description")
    if header.get("version") != _VERSION:
        raise SrcadError(
            f"srcad.load: {path} is format version {str(header.get('version'))[:20]}; this "
            f"srcad reads version {_VERSION}"
        )
    try:
        return _decode(header["tree"], read, "tree")
    except (TypeError, ValueError, AttributeError, struct.error, RecursionError) as e:
        raise SrcadError(f"srcad.load: {path} has a damaged structure: {e}") from None
