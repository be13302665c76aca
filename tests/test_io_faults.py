"""srcad.load never lies (issue 24): every malformed input raises SrcadError -- before
allocating what the file does not hold -- and a file that loads gives back exactly the tree
that was saved. Bit flips everywhere (the zip directory too), truncation at every length,
wrong types in the structure, depth bombs, sizes declared beyond the file or a limit,
renamed members; files written before the checksums still load."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile

import numpy as np
import pytest

import srcad
import srcad.io
from srcad.io import _SUMS_COMMENT, _SUMS_MEMBER, _TREE_MEMBER

from test_io import assert_identical


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def archive(path, header, arrays=(), *, sums=True, rename=None):
    """A srcad archive with the structure `header` (a dict, or raw JSON bytes) and the arrays
    a0, a1, ...; with `sums`, a valid checksum record (so only the structure is wrong)."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    members = {_TREE_MEMBER: npy(np.frombuffer(text, np.uint8))}
    for i, a in enumerate(arrays):
        members[f"a{i}.npy"] = npy(a)
    record = {n: [len(b), hashlib.sha256(b).hexdigest()] for n, b in members.items()}
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in members.items():
            zf.writestr((rename or {}).get(n, n), b)
        if sums:
            body = npy(np.frombuffer(json.dumps({"format": "srcad-sums", "version": 1,
                                                 "members": record}).encode(), np.uint8))
            zf.writestr(_SUMS_MEMBER, body)
            zf.comment = _SUMS_COMMENT + hashlib.sha256(body).hexdigest().encode()


def tree_of(node):
    return {"format": "srcad-tree", "version": 1, "tree": node}


TREE = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([-0.0, 1e-310]),
        "meta": ("adam", 3, None, [1.5, True], 2j), "s": np.int16(-7)}


def refused(path, **kw):
    with pytest.raises(srcad.SrcadError):
        srcad.load(path, **kw)


def test_every_bit_flip_is_refused_or_harmless(tmp_path):
    path = tmp_path / "t.srcad"
    srcad.save(path, TREE)
    good = path.read_bytes()
    cd_start = good.find(b"PK\x01\x02")  # the central directory, then the end record
    bad = path.with_name("bad.srcad")
    for pos in range(len(good)):
        bits = range(8) if pos >= cd_start else (pos % 8,)  # every bit of the directory
        for bit in bits:
            data = bytearray(good)
            data[pos] ^= 1 << bit
            bad.write_bytes(bytes(data))
            try:
                back = srcad.load(bad)
            except srcad.SrcadError:
                continue
            except Exception as e:  # noqa: BLE001
                pytest.fail(f"flip at byte {pos} bit {bit}: {type(e).__name__}: {e}")
            # (a flip in a field nothing reads -- a timestamp, "version made by" -- is
            # harmless; what may never happen is a different tree)
            assert_identical(TREE, back, f"flip at byte {pos} bit {bit}")


def test_every_truncation_is_refused(tmp_path):
    path = tmp_path / "t.srcad"
    srcad.save(path, TREE)
    good = path.read_bytes()
    for n in range(len(good)):
        path.write_bytes(good[:n])
        refused(path)


def test_renamed_members_are_refused(tmp_path):
    path = tmp_path / "t.srcad"
    archive(path, tree_of({"list": [{"array": "a0"}, {"array": "a1"}]}),
            [np.zeros(3), np.ones(3)], rename={"a0.npy": "a1.npy", "a1.npy": "a0.npy"})
    refused(path)
    archive(path, tree_of({"list": [{"array": "a0"}]}), [np.zeros(3)],
            rename={"a0.npy": "a9.npy"})
    refused(path)


@pytest.mark.parametrize("node", [
    {"complex": []}, {"complex": ["x", "y"]}, {"complex": "00"}, {"float": 1.5},
    {"float": "zz00000000000000"}, {"float": "3ff"}, {"dict": [[1, {"none": None}]]},
    {"dict": {"a": {"none": None}}}, {"dict": [["a"]]},
    {"dict": [["a", {"none": None}], ["a", {"none": None}]]}, {"list": {"none": None}},
    {"tuple": "ab"}, {"array": 3}, {"array": "../../etc/passwd"}, {"array": "a7"},
    {"npscalar": "a0"}, {"none": 0}, {"int": True}, {"int": "1"}, {"bool": 1},
    {"str": None}, {"set": []}, {"none": None, "int": 1}, [], "tree", None,
])  # fmt: skip
def test_wrong_types_in_the_structure(tmp_path, node):
    path = tmp_path / "t.srcad"
    archive(path, tree_of(node), [np.ones(3)])
    refused(path)


@pytest.mark.parametrize("header", [
    b"[]", b"{}", b"null", b'{"format": "srcad-tree", "version": "1", "tree": {"none": null}}',
    b"\xff\xfe", json.dumps({"format": "srcad-tree", "version": 1}).encode(),
])
def test_damaged_headers(tmp_path, header):
    path = tmp_path / "t.srcad"
    archive(path, header)
    refused(path)


@pytest.mark.parametrize("depth", [600, 100_000])
def test_depth_bombs(tmp_path, depth):
    path = tmp_path / "t.srcad"
    text = ('{"format": "srcad-tree", "version": 1, "tree": ' + '{"list": [' * depth
            + '{"none": null}' + "]}" * depth + "}").encode()
    archive(path, text)
    refused(path)


def test_save_refuses_what_load_would(tmp_path):
    deep = None
    for _ in range(srcad.io.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(srcad.SrcadError, match="nested"):
        srcad.save(tmp_path / "d.srcad", deep)
    ok = None
    for _ in range(srcad.io.MAX_DEPTH - 1):
        ok = [ok]
    srcad.save(tmp_path / "ok.srcad", ok)
    assert srcad.load(tmp_path / "ok.srcad") == ok


def huge_npy() -> bytes:
    """A valid .npy header declaring an 8 TiB float64 array, and 8 bytes of data."""
    header = {"descr": "<f8", "fortran_order": False, "shape": (1 << 40,)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + b"\0" * 8


def test_declared_sizes_beyond_the_file(tmp_path, monkeypatch):
    real = np.ndarray

    def guarded(shape, *a, **k):  # nothing of that size may even be asked for
        assert int(np.prod(shape)) < 1 << 30, "allocated what the file does not hold"
        return real(shape, *a, **k)

    path = tmp_path / "big.npy"
    path.write_bytes(huge_npy())
    assert len(huge_npy()) < 256
    monkeypatch.setattr(np, "ndarray", guarded)
    refused(path)
    # the same as a member of an archive with a valid checksum record
    p2 = tmp_path / "big.srcad"
    members = {_TREE_MEMBER: npy(np.frombuffer(json.dumps(tree_of({"array": "a0"})).encode(),
                                               np.uint8)), "a0.npy": huge_npy()}
    with zipfile.ZipFile(p2, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    refused(p2)
    # a zip directory declaring a member larger than the file
    monkeypatch.setattr(np, "ndarray", real)
    srcad.save(p2, [np.ones(4)])
    data = bytearray(p2.read_bytes())
    cd = data.find(b"PK\x01\x02")
    while cd >= 0:  # every central entry's sizes: 2**31
        struct.pack_into("<II", data, cd + 20, 1 << 31, 1 << 31)
        cd = data.find(b"PK\x01\x02", cd + 4)
    p2.write_bytes(bytes(data))
    refused(p2)


def test_max_bytes(tmp_path):
    path = tmp_path / "t.srcad"
    srcad.save(path, [np.ones(1000), np.ones(1000)])
    assert len(srcad.load(path, max_bytes=20_000)) == 2  # (the structure counts too)
    with pytest.raises(srcad.SrcadError, match="max_bytes"):
        srcad.load(path, max_bytes=10_000)


def test_files_without_checksums_still_load(tmp_path):
    path = tmp_path / "old.srcad"  # as srcad wrote them before issue 24
    archive(path, tree_of({"dict": [["w", {"array": "a0"}], ["n", {"int": 3}]]}),
            [np.arange(3.0)], sums=False)
    assert_identical(srcad.load(path), {"w": np.arange(3.0), "n": 3})
    # and their data is still checked: a flipped byte of an array fails its CRC-32
    data = bytearray(path.read_bytes())
    pos = data.find(np.arange(3.0).tobytes()) + 9
    data[pos] ^= 0x10
    path.write_bytes(bytes(data))
    refused(path)


def test_checksum_record_is_required_once_announced(tmp_path):
    path = tmp_path / "t.srcad"
    srcad.save(path, TREE)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
        comment = zf.comment
    for drop_member, keep_comment in ((True, True), (False, False)):
        with zipfile.ZipFile(path, "w") as zf:
            for n, b in members.items():
                if not (drop_member and n == _SUMS_MEMBER):
                    zf.writestr(n, b)
            if keep_comment:
                zf.comment = comment
        refused(path)


def test_plain_npz_limits(tmp_path):
    path = tmp_path / "c.npz"
    np.savez_compressed(path, x=np.zeros(10_000))
    assert srcad.load(path)["x"].shape == (10_000,)
    with pytest.raises(srcad.SrcadError):
        srcad.load(path, max_bytes=1000)
