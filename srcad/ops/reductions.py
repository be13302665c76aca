"""Reductions: sum, mean, max, min, prod (with axis: int, tuple, negative; keepdims)."""

import numpy as np

from ..runtime import extremum_grad, unreduce
from .table import defvjp

defvjp(np.sum, lambda g, out, a, axis=None, keepdims=False: unreduce(g, a, axis, keepdims),
       name="sum", family="reduction",
       derivation="each input element contributes once: broadcast g back")
defvjp(np.mean,
       lambda g, out, a, axis=None, keepdims=False:
           unreduce(g / (np.size(a) // np.size(out)), a, axis, keepdims),
       name="mean", family="reduction",
       derivation="sum / n: broadcast g / n back")
defvjp(np.max, lambda g, out, a, axis=None, keepdims=False: extremum_grad(g, out, a, axis, keepdims),
       name="max", family="reduction",
       derivation="g flows to the maxima, split evenly among ties (as torch.amax)")
defvjp(np.min, lambda g, out, a, axis=None, keepdims=False: extremum_grad(g, out, a, axis, keepdims),
       name="min", family="reduction",
       derivation="g flows to the minima, split evenly among ties (as torch.amin)")
defvjp(np.prod,
       lambda g, out, a, axis=None, keepdims=False:
           unreduce(g * out, a, axis, keepdims) / a,
       name="prod", family="reduction", domain=(0.5, 1.5),
       derivation="d prod = prod / x_i dx_i (inputs must be non-zero)")
