"""Ops that normalisation introduces: copying a value into a loop- or branch-assigned name."""

import numpy as np

from ..runtime import same_object, unpacked, where_input
from .table import defnondiff, defvjp


def identity(x):
    """`h = h_add`: a plain copy of a reference (values are never mutated in place)."""
    return x


defvjp(identity, lambda g, out, x: g, name="copy", linear=('x',), spelling="x", family="control",
       derivation="the adjoint passes through unchanged")


# `a, b, c = helper(x)` where the helper returns a list it built (frontend/normalize.py
# `unpack_by_index`): the value itself, its length checked as Python's unpacking checks it
defvjp(unpacked, lambda g, out, x, n: g, None, name="unpacked", linear=('x',),
       family="control", derivation="the identity (a length check: Python's unpacking error "
       "where the length is not n)", test_cases=(("OP(a, 3) * 2.0", [(3, 4)]),))


# `y is a` as generated code asks it (srcad/runtime.py): spelled as a call, not `is`, so that
# generated code differentiated again reads the row, not a user's identity test
defnondiff(same_object, name="same_object", family="control",
           test_cases=(("a * OP(a, a) + b * OP(a, b)", [(3,), (3,)]),))


# an input of a ufunc called with `where=` and `out=` (frontend/normalize.py): the ufunc's
# own rule may be inf or NaN where the mask is False (log at 0, a division by 0), and the
# output does not depend on the input there, so the gradient is masked after that rule, at
# the broadcast shape (before any sum back to the input's shape)
defvjp(where_input, lambda g, out, x, where: np.where(where, g, 0), None,
       name="where_input", linear=('x',), broadcasting=True, family="control",
       derivation="x broadcast against the mask: g where the mask holds, 0 elsewhere (the "
                  "ufunc's output there is `out`'s, whatever x is)",
       # (a mask broadcasting the input: tests/test_probe10_forms.py, as the torch twins
       # of tests/test_forward.py run the row's forward on torch values)
       test_cases=(("np.where(a > 0.5, np.log(OP(a, a > 0.5)), 0.0)", [(3, 4)]),))
