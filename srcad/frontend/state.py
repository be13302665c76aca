"""State a callee leaves on objects, carried back to its caller with its value.

Layer classes written in the "forward stores, caller reads" style (Neural Networks from
Scratch, many course libraries) return nothing from ``forward`` and keep the result on the
object: ``dense1.forward(X); activation1.forward(dense1.output)``. Python's caller then reads
the attribute the call set. Inside the callee, frontend/attrstate.py already carries
``self.output = v`` by a local (the gradient flows within the callee) and stores the plain
value on the object once per call; this module carries it *out*: the callee returns, with
its own value, the last value it stored in each attribute of an object known when
normalising (``self`` bound to a global layer, or a layer of a list), and the caller's later
reads of that attribute (``dense1.output``, ``layer.prev.output``: calls.py `carried_read`)
read that value -- so the gradient flows through the object as Python's values do.

The other way: what the caller stored on an object before a call (``dense1.weights = W1``,
carried by attrstate.py's local, or an earlier callee's ``self.output``) is given to the
callee as one more parameter per attribute (parse.ParsedFunction.attr_in), which its reads of
``self.weights`` read -- so a gradient w.r.t. weights set on layers reaches them.

Input: a callee's `ir.Function` (normalised). Output: `carried_state` -- [(object, attribute,
the atom holding the value at its end)] for each attribute a top-level ``setattr`` effect (or
a call of its own that carried one out) sets, in the order they were first set; the caller
(normalize.user_call) appends those atoms to the callee's return value and calls
`with_state(fn, ...)` wherever it runs the callee as plain Python (no gradient through it),
which returns the same tuple. An attribute set inside a branch or a loop of the callee is
not carried (its value at the end is not one atom): reads of it stay what they were.

Before/after (the caller):
    dense1.forward(X)                    forward_and_state = D_forward(dense1, X)
    h = np.tanh(dense1.output)           forward = forward_and_state[0]
                                         D_forward_output = forward_and_state[1]
                                         h = np.tanh(D_forward_output)
"""

from __future__ import annotations

import functools

from .. import ir
from .opaque import is_user_object


def carried_state(fn: ir.Function) -> tuple[list, set]:
    """([(obj, attr, atom)], blocked): what `fn` leaves in `obj.attr` at its end, for the
    attributes it sets at its top level (see the module docstring); `blocked`: the (id(obj),
    attr) it sets in a branch or a loop (the caller's own value for them is stale after)."""
    found: dict = {}
    blocked: set = set()
    for s in fn.body:
        if isinstance(s, (ir.If, ir.For, ir.While)):
            for inner in ir.walk([s]):
                for obj, attr, _ in _sets(inner):
                    blocked.add((id(obj), attr))
            continue
        for obj, attr, atom in _sets(s):
            found[(id(obj), attr)] = (obj, attr, atom)
    return [v for k, v in found.items() if k not in blocked], blocked


def _sets(s):
    """The attributes statement `s` sets on known objects: (obj, attr, atom)."""
    if isinstance(s, ir.Effect) and s.kind == "setattr":
        obj = s.args["_obj"]
        if isinstance(obj, ir.Const) and is_user_object(obj.value):
            yield obj.value, s.args["attr"].value, s.args["value"]
    elif isinstance(s, ir.UserCall):
        # (a callee's own callee set it: the caller bound it to a name after the call)
        yield from s.carried_atoms


def state_given(fn, n: int):
    """`fn` as plain Python, called with `n` more arguments (the values given for its reads of
    objects' attributes, state.py): the object holds them already, the call drops them."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return fn(*args[:len(args) - n], **kwargs)

    return run


def with_state(fn, attrs: list):
    """`fn` as plain Python, returning its value and then each `obj.attr` it left."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return (fn(*args, **kwargs), *[getattr(o, a) for o, a in attrs])

    run.__wrapped_state__ = attrs
    return run
