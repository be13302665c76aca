"""A transform's pullback as a function srcad can differentiate again: second and higher
derivatives through a transform called inside a differentiated function.

The gradient of ``y = t(a0, ..., a<n-1>)`` (a call of a transformed function ``t``, srcad/
ops/composed.py) is ``t.vjp_at((a0, ...), g)``. Differentiating *that* code once more needs
the pullback as a function of (a0, ..., g): `Pullbacks(t, n)`. It is the gradient, w.r.t.
the a's, of

    def <t>_pullback(a0, ..., a<n-1>, g):
        return tree_vdot(t(a0, ..., a<n-1>), g)        # <t(a), g>, g held constant

(a function written here as source and parsed like the user's: ``t(...)`` in it is again a
composed call, and ``tree_vdot`` a row). The frontend turns ``t.vjp_at((a0, ...), g)`` in
generated code into a call of `t.pullbacks(n)` (srcad/frontend/calls.py), and a
`Pullbacks` is itself transformed-like (called, `vjp_at`, `jvp_at`, `pullbacks`), so the
construction repeats at every order.

    dx = grad_f.vjp_at((x,), dg)[0]    ->    dx = grad_f_pullbacks(x, dg)[0]
"""

from __future__ import annotations

from .binding import _is_differentiable, _spec_key
from .errors import SrcadError
from .gradtree import GradTree
from .pullback import dense_cotangent, grad_tree, tangent_tree
from .runtime_trees import vdot_function


class Pullbacks:
    """``lambda a0, ..., a<n-1>, g: t.vjp_at((a0, ...), g)``, as a transformed function."""

    _srcad_transformed = True  # (a call of this in generated code is a composed op)

    def __init__(self, t, n: int):
        self.t, self.n = t, n
        # the transform class of the root (srcad.transformed.Transformed), which this module
        # cannot import (it sits below it): the pullback's own gradient is one of those
        self.make = t.make if isinstance(t, Pullbacks) else type(t)
        self.__name__ = f"{getattr(t, '__name__', 'transform')}_pullbacks"
        self._grads: dict = {}

    def __repr__(self):
        return f"<srcad pullback of {self.t!r}>"

    def __reduce__(self):
        raise SrcadError("a transform's pullback (inside generated code) cannot be pickled",
                         hint="send the transformed function itself (it pickles by reference)")

    def _grad(self, args):
        """grad, w.r.t. the differentiable a's, of the pullback function over t's generated
        code for these arguments (its own code: differentiating it needs t's second
        derivative, taken through that code), and the positions it differentiates."""
        mask = tuple(i for i, v in enumerate(args) if _is_differentiable(v))
        # (t's code as t's names are bound now: a rebound global it reads rebuilds t's code,
        # and so the function over it)
        key = (mask, _spec_key(args), self.version())
        if key not in self._grads:
            main = self.t.compiled(list(args), to_transform=True).functions["main"]
            h = vdot_function(main, self.n,
                              f"{getattr(self.t, '__name__', 'transform')}_pullback")
            self._grads[key] = self.make(h, "grad", mask, {}) if mask else None
        return self._grads[key], mask

    def version(self):
        """Which code of t this is over: t's `_version` once t has checked its guards."""
        t = self.t
        if isinstance(t, Pullbacks):
            return t.version()
        t._fresh()
        return t._version

    def _dense(self, args, g):
        """The cotangent as a plain pytree of t's output structure (zeros where none)."""
        if type(g).__module__ == "numpy" or isinstance(g, float):
            return g
        if isinstance(self.t, Pullbacks):
            # (an inner pullback's output is one gradient per its a, each of that a's
            # structure, which generated code carries as a GradTree: the a's give the plain
            # structure)
            return dense_cotangent(tuple(self.t._args(args)), g)
        return dense_cotangent(self.t(*args), g)

    def _args(self, values) -> list:
        """The a's of a call; for the pullback of a pullback (third order) the last a is the
        inner pullback's cotangent, which generated code may carry as a `GradTree` (missing
        slots zero): as a plain pytree of the inner output's structure, it is a float argument
        like any other."""
        args = list(values[:self.n])
        if isinstance(self.t, Pullbacks) and args:
            args[-1] = self.t._dense(args[:-1], args[-1])
        return args

    def __call__(self, *values):
        args, g = self._args(values), values[self.n]
        t, mask = self._grad(args)
        if t is None:
            return tuple(None for _ in args)
        got = dict(zip(mask, t(*args, self._dense(args, g))))
        return tuple(grad_tree(got[i], a) if i in got else None for i, a in enumerate(args))

    # -- transformed-like: what the composed op's rules call ---------------------------------
    def _bound(self, values):
        args = self._args(values)
        t, mask = self._grad(args)
        if t is None:
            raise SrcadError("a transform's pullback has no float argument to differentiate")
        return t, mask, [*args, self._dense(args, values[self.n])]

    def vjp_at(self, values, cotangent) -> tuple:
        t, mask, full = self._bound(values)
        picked = tuple(_item(cotangent, i) for i in mask)  # (t's output: one per mask)
        return t.vjp_at(tuple(full), picked)

    def jvp_at(self, values, i: int, tangent):
        t, mask, full = self._bound(values)
        got = dict(zip(mask, t.jvp_at(tuple(full), i, tangent)))
        return tangent_tree([got.get(k) for k in range(self.n)])

    def compiled(self, values, given=None, *, to_transform=False):
        """The generated code of the pullback's gradient for these (a0, ..., g): what a
        pullback of this pullback differentiates (a third derivative of t)."""
        del given, to_transform
        args = self._args(values)
        t, mask = self._grad(args)
        if t is None or len(mask) != self.n:
            raise SrcadError(
                "a third derivative through a transform called inside a differentiated "
                "function, with an argument that is not a float array, is not supported",
                hint="pass the inner transform only the float arguments")
        return t.compiled([*args, self._dense(args, values[self.n])], to_transform=True)

    def pullbacks(self, n: int):
        """This pullback's own pullback (third order): `Pullbacks(self, n)`."""
        made = self.__dict__.setdefault("_pullbacks", {})
        if n not in made:
            made[n] = Pullbacks(self, n)
        return made[n]


def _item(cotangent, i):
    if isinstance(cotangent, GradTree):
        return cotangent.slots.get(i)
    if isinstance(cotangent, (list, tuple)):
        return cotangent[i]
    return None  # (a zero: nothing flowed)
