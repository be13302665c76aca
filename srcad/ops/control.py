"""Ops that normalisation introduces: copying a value into a loop- or branch-assigned name."""

from .table import defnondiff, defvjp


def identity(x):
    """`h = h_add`: a plain copy of a reference (values are never mutated in place)."""
    return x


defvjp(identity, lambda g, out, x: g, name="copy", linear=('x',), spelling="x", family="control",
       derivation="the adjoint passes through unchanged")


def same_object(a, b):
    """`y is a`: are two names bound to one array? (frontend/aliases.py `split_reads`: which
    adjoint a read adds into; no gradient of its own.)"""
    return a is b


defnondiff(same_object, name="same_object", spelling="a is b", family="control",
           test_cases=(("a * OP(a, a) + b * OP(a, b)", [(3,), (3,)]),))
