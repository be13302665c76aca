"""More of numpy's elementwise functions: copysign, fmod, float_power, ldexp, nextafter, the
tuple-valued frexp / modf / divmod, and unwrap.

Choices worth knowing:

* ``np.nextafter(x, y)`` is x moved one ulp toward y: a step function of x and y with steps
  one ulp wide, whose slope over any interval wider than an ulp is 1 in x and 0 in y. The row
  takes those (as JAX does): dx = g, dy = 0 -- not the zero a step function has almost
  everywhere, which would drop the gradient of ``x`` entirely.
* ``np.copysign(x, y)`` = |x| with y's sign: dx = sign(x) sign(out) (0 at x = 0, as abs), no
  gradient for y (piecewise constant).
* ``np.float_power`` computes in float64 (float32 inputs too); its gradients are cast back to
  each input's dtype.
* The tuple outputs of frexp, modf, divmod: the integer-valued parts (frexp's exponent,
  modf's integral part, divmod's quotient) are piecewise constant and carry no gradient; the
  rules read their cotangents' other part, ``g[0]`` or ``g[1]``.
"""

import numpy as np

from ..runtime_poly import bessel_i1
from .elementwise import ANY, POS
from .table import defjvp, defvjp

_F = "arithmetic"

defvjp(np.copysign, lambda g, out, x1, x2: g * np.sign(x1) * np.sign(out), None,
       name="copysign", elementwise=True, broadcasting=True, c="copysign(x1, x2)", family=_F,
       derivation="|x1| with x2's sign: d = sign(x1) sign(out) dx1 (0 at x1 = 0, as abs); x2 "
       "only picks a sign (no gradient)",
       test_cases=(("np.copysign(a, -1.0)", [(3, 4)]), ("np.copysign(a, b)", [(3, 4), (4,)])))
defvjp(np.fmod, lambda g, out, x1, x2: g, lambda g, out, x1, x2: -g * np.trunc(x1 / x2),
       name="fmod", elementwise=True, broadcasting=True, c="fmod(x1, x2)", family=_F,
       domain=(ANY, POS),
       derivation="x1 - trunc(x1 / x2) x2 (C's remainder, the sign of x1): dx1 - trunc(x1 / "
       "x2) dx2 (piecewise; jumps where x1 / x2 is an integer)",
       test_cases=(("np.fmod(a, 0.7)", [(3, 4)]), ("np.fmod(2.5, a)", [(3,)], POS)))
defvjp(np.float_power,
       lambda g, out, x1, x2: (g * x2 * np.float_power(np.where(x2 == 0, 1, x1), x2 - 1))
       .astype(np.result_type(x1)),
       lambda g, out, x1, x2: (g * out * np.log(np.where(x1 == 0, x2 >= 0, x1)
                                                .astype(np.result_type(out))))
       .astype(np.result_type(x2)),
       name="float_power", elementwise=True, broadcasting=True, family=_F, domain=(POS, ANY),
       # (not fused: numpy computes it in float64 whatever the inputs, a loop type the fuser
       # does not choose for float32 operands)
       c="pow(x1, x2)", c_kinds="", dtypes=("float64",),
       derivation="x1^x2 in float64: x2 x1^(x2-1) dx1 + x1^x2 log(x1) dx2 (as power); each "
       "gradient in its input's dtype",
       test_cases=(("np.float_power(a, 2.0)", [(3, 4)], ANY), ("np.float_power(2.0, a)", [(3,)]),
                   ("np.float_power(a, b)", [(3, 1), (4,)])))
defvjp(np.ldexp, lambda g, out, x1, x2: np.ldexp(g, x2), None,
       # (not marked elementwise, so neither the float grids nor the fuser take it: its second
       # operand is an integer array)
       name="ldexp", broadcasting=True, linear=("x1",), family=_F,
       derivation="x1 2^x2 (x2 an integer): d = 2^x2 dx1, computed exactly as ldexp(g, x2)",
       test_cases=(("np.ldexp(a, 3)", [(3, 4)]), ("np.ldexp(a, np.array([1, -2, 0]))", [(2, 3)]),
                   ("np.ldexp(a, np.array([[2], [-1]]))", [(3,)]), ("np.ldexp(2.0, a.shape[0]) * a",
                                                                   [(3,)])))
defvjp(np.nextafter, lambda g, out, x1, x2: g * np.ones_like(out), None,
       name="nextafter", elementwise=True, broadcasting=True, c="nextafter(x1, x2)", family=_F,
       derivation="x1 moved one ulp toward x2: slope 1 in x1 and 0 in x2 over any interval "
       "wider than an ulp (as JAX); not the step function's zero almost everywhere",
       test_cases=(("np.nextafter(a, 3.0)", [(3, 4)]), ("np.nextafter(a, b)", [(3, 4), (4,)])))

# --- tuple outputs ------------------------------------------------------------------------------
defvjp(np.frexp, lambda g, out, x: np.ldexp(g[0] * np.ones_like(out[0]), -out[1]),
       name="frexp", family=_F,
       derivation="(m, e) with x = m 2^e, e an integer (piecewise constant): dm = 2^-e dx",
       test_cases=(("np.frexp(a)[0]", [(3, 4)]), ("np.frexp(a)[0] * np.frexp(a)[1]", [(5,)])))
defjvp(np.frexp, lambda g, out, x: (np.ldexp(g, -out[1]), np.zeros_like(out[1])))
defvjp(np.modf, lambda g, out, x: g[0] * np.ones_like(out[0]),
       name="modf", family=_F,
       derivation="(fractional part, integral part): d frac = dx, the integral part is "
       "piecewise constant",
       test_cases=(("np.modf(a * 3.0)[0]", [(3, 4)]),
                   ("np.modf(a * 3.0)[0] * np.modf(a * 3.0)[1]", [(5,)])))
defjvp(np.modf, lambda g, out, x: (g, np.zeros_like(out[1])))
defvjp(np.divmod, lambda g, out, x1, x2: g[1] * np.ones_like(out[1]),
       lambda g, out, x1, x2: -g[1] * out[0],
       name="divmod", family=_F, broadcasting=True, domain=(ANY, POS),
       derivation="(floor(x1 / x2), x1 mod x2): the quotient is piecewise constant; d mod = "
       "dx1 - floor(x1 / x2) dx2",
       test_cases=(("np.divmod(a, 0.7)[1]", [(3, 4)]), ("np.divmod(a, b)[1]", [(3, 4), (4,)]),
                   ("np.divmod(a, b)[1] * np.divmod(a, b)[0]", [(3,), (3,)])))

# (the tangent of the pair as one array stacked along a new first axis: the transform adds the
# two arguments' terms with `+`, which would concatenate two tuples; indexing and unpacking
# read it as the pair)
defjvp(np.divmod,
       lambda g, out, x1, x2: np.stack((np.zeros_like(out[0]), g * np.ones_like(out[1]))),
       lambda g, out, x1, x2: np.stack((np.zeros_like(out[0]), -g * out[0])))

# --- unwrap -------------------------------------------------------------------------------------
defvjp(np.unwrap, lambda g, out, p, discont=None, axis=-1, period=2 * np.pi: g,
       name="unwrap", family=_F,
       derivation="p plus multiples of the period chosen from p's jumps (piecewise constant): "
       "the identity where the choice does not change",
       test_cases=(("np.unwrap(a * 3.0)", [(6,)]), ("np.unwrap(a * 3.0, axis=0)", [(5, 3)]),
                   ("np.unwrap(a, period=1.0)", [(2, 6)])))
defjvp(np.unwrap, lambda g, out, p, discont=None, axis=-1, period=2 * np.pi: g)

# --- i0 -----------------------------------------------------------------------------------------
defvjp(np.i0, lambda g, out, x: g * bessel_i1(x),
       name="i0", family=_F, domain=(-3.0, 3.0),
       derivation="d I0(x) = I1(x) dx (I1 by the midpoint rule of its integral, "
       "srcad/runtime_poly.py)",
       test_cases=(("np.i0(a)", [(3, 4)]), ("np.i0(a * 1.5)", [(5,)])))
defjvp(np.i0, lambda g, out, x: g * bessel_i1(x))
defvjp(bessel_i1,
       lambda g, out, x: g * np.where(x == 0, 0.5, np.i0(x) - out / np.where(x == 0, 1, x)),
       name="bessel_i1", family="runtime",
       derivation="I1'(x) = I0(x) - I1(x) / x (1/2 at 0)")
defjvp(bessel_i1,
       lambda g, out, x: g * np.where(x == 0, 0.5, np.i0(x) - out / np.where(x == 0, 1, x)))
