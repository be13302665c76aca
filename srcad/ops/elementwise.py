"""Elementwise ops: arithmetic, transcendentals, selections.

Rules never mention broadcasting: rows marked ``broadcasting=True`` have every VJP
unbroadcast to its input's shape by the reverse transform (one `unbroadcast`, in
srcad/runtime.py). ``c`` is the op's C expression for the fusion pass.
"""

import numpy as np

from ..runtime import clip_grad
from .table import defvjp

POS = (0.5, 2.0)  # a domain away from singularities

# --- binary arithmetic (python operators) -----------------------------------------------------
defvjp(np.add, lambda g, out, x, y: g, lambda g, out, x, y: g,
       name="add", spelling="x + y", elementwise=True, broadcasting=True, c="x + y",
       family="arithmetic", derivation="d(x+y) = dx + dy")
defvjp(np.subtract, lambda g, out, x, y: g, lambda g, out, x, y: -g,
       name="subtract", spelling="x - y", elementwise=True, broadcasting=True, c="x - y",
       family="arithmetic", derivation="d(x-y) = dx - dy")
defvjp(np.multiply, lambda g, out, x, y: g * y, lambda g, out, x, y: g * x,
       name="multiply", spelling="x * y", elementwise=True, broadcasting=True, c="x * y",
       family="arithmetic", derivation="d(xy) = y dx + x dy (product rule)")
defvjp(np.true_divide, lambda g, out, x, y: g / y, lambda g, out, x, y: -g * out / y,
       name="divide", spelling="x / y", elementwise=True, broadcasting=True, c="x / y",
       family="arithmetic", domain=((-2.0, 2.0), POS),
       derivation="d(x/y) = dx/y - (x/y) dy/y")
defvjp(np.power,
       lambda g, out, x, y: g * y * x ** (y - 1),
       lambda g, out, x, y: g * out * np.log(np.where(x == 0, 1, x)),
       name="power", spelling="x ** y", elementwise=True, broadcasting=True, c="pow(x, y)",
       family="arithmetic", domain=(POS, (-2.0, 2.0)),
       derivation="d(x^y) = y x^(y-1) dx + x^y log(x) dy (log term is 0 where x = 0, as torch)")
defvjp(np.negative, lambda g, out, x: -g,
       name="negative", spelling="-x", elementwise=True, c="-x",
       family="arithmetic", derivation="d(-x) = -dx")

# --- unary transcendental ---------------------------------------------------------------------
defvjp(np.square, lambda g, out, x: g * 2 * x,
       name="square", elementwise=True, c="x * x", family="unary",
       derivation="d(x^2) = 2x dx")
defvjp(np.sqrt, lambda g, out, x: g / (2 * out),
       name="sqrt", elementwise=True, c="sqrt(x)", family="unary", domain=POS,
       derivation="d sqrt(x) = dx / (2 sqrt(x))")
defvjp(np.exp, lambda g, out, x: g * out,
       name="exp", elementwise=True, c="exp(x)", family="unary",
       derivation="d e^x = e^x dx")
defvjp(np.log, lambda g, out, x: g / x,
       name="log", elementwise=True, c="log(x)", family="unary", domain=POS,
       derivation="d log x = dx / x")
defvjp(np.log1p, lambda g, out, x: g / (1 + x),
       name="log1p", elementwise=True, c="log1p(x)", family="unary", domain=(-0.5, 2.0),
       derivation="d log(1+x) = dx / (1+x)")
defvjp(np.expm1, lambda g, out, x: g * (out + 1),
       name="expm1", elementwise=True, c="expm1(x)", family="unary",
       derivation="d (e^x - 1) = e^x dx")
defvjp(np.tanh, lambda g, out, x: g * (1 - out * out),
       name="tanh", elementwise=True, c="tanh(x)", family="unary",
       derivation="d tanh x = (1 - tanh^2 x) dx")
defvjp(np.sin, lambda g, out, x: g * np.cos(x),
       name="sin", elementwise=True, c="sin(x)", family="unary",
       derivation="d sin x = cos x dx")
defvjp(np.cos, lambda g, out, x: -g * np.sin(x),
       name="cos", elementwise=True, c="cos(x)", family="unary",
       derivation="d cos x = -sin x dx")
defvjp(np.absolute, lambda g, out, x: g * np.sign(x),
       name="abs", spelling="np.abs(x)", elementwise=True, c="fabs(x)", family="unary",
       derivation="d|x| = sign(x) dx (0 at 0, as torch)")
defvjp(np.reciprocal, lambda g, out, x: -g * out * out,
       name="reciprocal", elementwise=True, c="1 / x", family="unary", domain=POS,
       derivation="d(1/x) = -dx / x^2")

# --- selections -------------------------------------------------------------------------------
defvjp(np.maximum,
       lambda g, out, x, y: np.where(x > y, g, np.where(x == y, g / 2, 0)),
       lambda g, out, x, y: np.where(y > x, g, np.where(x == y, g / 2, 0)),
       name="maximum", elementwise=True, broadcasting=True,
       c="(x > y || isnan(x)) ? x : y", family="selection",
       derivation="g flows to the larger input; ties split evenly (as torch)")
defvjp(np.minimum,
       lambda g, out, x, y: np.where(x < y, g, np.where(x == y, g / 2, 0)),
       lambda g, out, x, y: np.where(y < x, g, np.where(x == y, g / 2, 0)),
       name="minimum", elementwise=True, broadcasting=True,
       c="(x < y || isnan(x)) ? x : y", family="selection",
       derivation="g flows to the smaller input; ties split evenly (as torch)")
defvjp(np.where,
       None,
       lambda g, out, condition, x, y: np.where(condition, g, 0),
       lambda g, out, condition, x, y: np.where(condition, 0, g),
       name="where", elementwise=True, broadcasting=True, c="condition ? x : y",
       family="selection", derivation="g flows to the selected input")
defvjp(np.clip,
       lambda g, out, a, a_min, a_max: clip_grad(g, a, a_min, a_max),
       lambda g, out, a, a_min, a_max: np.where(a < a_min, g, 0),
       lambda g, out, a, a_min, a_max: np.where(a > a_max, g, 0),
       name="clip", elementwise=True, broadcasting=True, family="selection",
       c="x < lo ? lo : (x > hi ? hi : x)",
       derivation="g flows to a inside [a_min, a_max], else to the active bound")
