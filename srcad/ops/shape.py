"""Shape ops: transpose, swapaxes, reshape, expand_dims, squeeze, broadcast_to,
concatenate, stack, and indexing (basic slices and integer-array gathers)."""

import operator

import numpy as np

from ..runtime import astype, inverse_permutation, unbroadcast, unconcatenate, unindex, unstack
from .table import defvjp

defvjp(np.transpose, lambda g, out, a, axes=None: np.transpose(g, inverse_permutation(axes)),
       name="transpose", family="shape", view=True,
       derivation="transpose back with the inverse permutation")
defvjp(np.swapaxes, lambda g, out, a, axis1, axis2: np.swapaxes(g, axis1, axis2),
       name="swapaxes", family="shape", view=True,
       derivation="swapping twice is the identity")
defvjp(np.reshape, lambda g, out, a, shape: np.reshape(g, np.shape(a)),
       name="reshape", family="shape", view=True,
       derivation="reshape back to the input's shape")
defvjp(np.expand_dims, lambda g, out, a, axis: np.reshape(g, np.shape(a)),
       name="expand_dims", family="shape", view=True,
       derivation="reshape back to the input's shape")
defvjp(np.squeeze, lambda g, out, a, axis=None: np.reshape(g, np.shape(a)),
       name="squeeze", family="shape", view=True,
       derivation="reshape back to the input's shape")
defvjp(np.broadcast_to, lambda g, out, array, shape: unbroadcast(g, array),
       name="broadcast_to", family="shape", view=True,
       derivation="the backward of a broadcast is a sum over the broadcast axes")
defvjp(np.concatenate, lambda g, out, arrays, axis=0: unconcatenate(g, arrays, axis),
       name="concatenate", family="shape",
       derivation="split g at the input boundaries")
defvjp(np.stack, lambda g, out, arrays, axis=0: unstack(g, arrays, axis),
       name="stack", family="shape",
       derivation="take each input's slice of g along the new axis")
defvjp(operator.getitem, lambda g, out, a, index: unindex(g, a, index),
       name="getitem", spelling="a[index]", family="shape", view=True,
       derivation="scatter-add g into zeros at the index (repeated gathers accumulate)")
defvjp(astype, lambda g, out, x, dtype: g.astype(x.dtype),
       name="astype", spelling="x.astype(dtype)", family="shape",
       derivation="cast the gradient back to the input's dtype")
