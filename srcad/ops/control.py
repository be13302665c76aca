"""Ops that normalisation introduces: copying a value into a loop- or branch-assigned name."""

from ..runtime import same_object
from .table import defnondiff, defvjp


def identity(x):
    """`h = h_add`: a plain copy of a reference (values are never mutated in place)."""
    return x


defvjp(identity, lambda g, out, x: g, name="copy", linear=('x',), spelling="x", family="control",
       derivation="the adjoint passes through unchanged")


# `y is a` as generated code asks it (srcad/runtime.py): spelled as a call, not `is`, so that
# generated code differentiated again reads the row, not a user's identity test
defnondiff(same_object, name="same_object", family="control",
           test_cases=(("a * OP(a, a) + b * OP(a, b)", [(3,), (3,)]),))
