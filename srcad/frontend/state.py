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
which returns the same tuple. The callee's own stores are carried by attrstate.py's local,
in a branch or a loop too (the local holds the value at the end on every path; a call of its
own that sets the attribute sets the local after it: calls.py); a callee of its own called in
a branch or a loop that sets an attribute the callee does not carry itself leaves it unknown
(`blocked`): the caller reads it when the code runs, or is refused.

Before/after (the caller):
    dense1.forward(X)                    forward_and_state = D_forward(dense1, X)
    h = np.tanh(dense1.output)           forward = forward_and_state[0]
                                         D_forward_output = forward_and_state[1]
                                         h = np.tanh(D_forward_output)
"""

from __future__ import annotations

import functools

from .. import ir
from ..runtime import sync_into
from .opaque import is_user_object


def carried_state(fn: ir.Function) -> tuple[list, set]:
    """([(obj, attr, atom)], blocked): what `fn` leaves in `obj.attr` at its end -- the
    value of the local it carries the attribute by (attrstate.py; a store in a branch or a
    loop included: the local holds the last value on every path), or what a callee called at
    its top level carried out; `blocked`: the (id(obj), attr) a callee called in a branch or
    a loop of `fn` sets and `fn` does not carry itself (the caller's own value for them is
    stale after the call)."""
    found: dict = {}
    blocked: set = set()
    for s in fn.body:
        if isinstance(s, (ir.If, ir.For, ir.While)):
            for inner in ir.walk([s]):
                if isinstance(inner, ir.UserCall):
                    blocked |= {(id(obj), attr) for obj, attr, _ in inner.carried_atoms}
                    blocked |= inner.callee.attr_unknown
        elif isinstance(s, ir.UserCall):
            for obj, attr, atom in s.carried_atoms:
                # (a callee's own callee set it: the caller bound it to a name after the call)
                found[(id(obj), attr)] = (obj, attr, atom)
                blocked.discard((id(obj), attr))
    for obj, attr, atom in fn.state_out:  # (the local saw every store, the callees' too)
        found[(id(obj), attr)] = (obj, attr, atom)
        blocked.discard((id(obj), attr))
    return [v for k, v in found.items() if k not in blocked], blocked


def state_given(fn, attrs: list):
    """`fn` as plain Python, called with one more argument per (obj, attr) of `attrs` (the
    values given for its reads of objects' attributes, state.py): each is put on its object
    first (the caller's code keeps the call's state in locals and stores it as it returns;
    Python's object holds it already at this point of the call), then `fn` runs."""
    n = len(attrs)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        for (obj, attr), value in zip(attrs, args[len(args) - n:]):
            _put(obj, attr, value)
        return fn(*args[:len(args) - n], **kwargs)

    return run


def _put(obj, attr: str, value) -> None:
    """`obj.attr = value` for plain Python that reads it. A list or dict where the object
    holds one already: the object's own, made to hold these items (`runtime.sync_into`) --
    Python's object has held that very container all along (a new one stored on it is stored
    as the code runs: attrstate.py), which others may hold too (before the session of
    2026-12-07, fourteenth, the code's own dict was put there instead, and their holders
    missed what `fn` changed in it); else a copy of a list (the code may still read its own
    list, which `fn` may change in place: `self.cache.append(...)`)."""
    current = getattr(obj, attr, None)
    if isinstance(value, (list, dict)) and type(current) is type(value):
        sync_into(current, value)
        return
    setattr(obj, attr, list(value) if isinstance(value, list) else value)


def _now(value):
    return list(value) if isinstance(value, list) else value


def with_state(fn, attrs: list):
    """`fn` as plain Python, returning its value and then each `obj.attr` it left."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        # (a list as it is now: the object's own may be changed in place later in the call)
        return (fn(*args, **kwargs), *[_now(getattr(o, a)) for o, a in attrs])

    run.__wrapped_state__ = attrs
    return run
