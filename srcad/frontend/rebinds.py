"""A dict parameter rebound by the function's own top-level statements: a name per binding.

``params = {k: params[k] * x for k in params}``, ``params = {**params, "W": W * 2}``: Python
reads the argument on the right and binds a new value to the same name. The passes after
this one ask of a name "is it the argument?" (a dict argument's keys, read from the call:
`ParsedFunction.dict_paths`) by whether the function ever stores it, so such a rebinding made
the argument unknown everywhere -- and a dict comprehension over it was lowered as a loop
over a list (a KeyError from srcad's code). Here each top-level ``p = ...`` of a parameter
the call gives a dict binds a new name, named by its line as the normaliser names a rebound
local (``params_L4``), and the reads after it, up to the next such statement, read that name;
the parameter itself is never stored. (An array parameter rebound, ``x = np.asarray(x)``, is
left to the normaliser, which names it the same way.)

Only where the rebinding is plain: every store of the parameter is the one target of a
top-level assignment (not in a loop, a branch, a ``with`` or ``try``; no ``+=``, ``del``,
``global``), and no nested function, lambda or class reads it (a closure reads the last
binding when it is called). Otherwise the function is left as it is.

    def f(params, x):                     def f(params, x):
        params = {k: params[k] * x ...}       params_L2 = {k: params[k] * x ...}
        return np.sum(params["w"])            return np.sum(params_L2["w"])
"""

from __future__ import annotations

import gast

from ..naming import fresh

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_COMPS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def rename_rebound_params(pf) -> None:
    """Give each top-level rebinding of a parameter of `pf` a name of its own (see above)."""
    body = pf.tree.body
    taken = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)} | set(pf.params)
    held = getattr(pf, "dict_paths", None) or ()
    for p in pf.params:
        if (p,) not in held:
            continue  # (only a dict argument's: an array's rebinding the normaliser names)
        rebinds = _rebinding_statements(body, p)
        if not rebinds:
            continue
        current = p
        for i, s in enumerate(body):
            if i in rebinds:
                _rename_reads(s.value, p, current)
                # (named by its line, as the normaliser names a rebound local: `x_L85`)
                line = getattr(s, "lineno", None)
                current = fresh(f"{p}_L{line}" if line is not None else p, taken)
                s.targets[0].id = current
            else:
                _rename_reads(s, p, current)


def _rebinding_statements(body: list, p: str) -> set:
    """Indices of the top-level ``p = ...`` statements of `body`, where those are the only
    stores of `p` and nothing reads `p` in a scope of its own; else an empty set."""
    out = set()
    for i, s in enumerate(body):
        plain = isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Name) and s.targets[0].id == p
        for n in gast.walk(s.value if plain else s):
            if isinstance(n, (gast.Global, gast.Nonlocal)) and p in n.names:
                return set()
            if isinstance(n, _SCOPES) and any(isinstance(m, gast.Name) and m.id == p
                                              for m in gast.walk(n)):
                return set()
            if isinstance(n, _COMPS) and any(
                    isinstance(m, gast.Name) and m.id == p
                    for g in n.generators for m in gast.walk(g.target)):
                return set()  # (a comprehension's own `p`)
            if isinstance(n, gast.Name) and n.id == p and \
                    isinstance(n.ctx, (gast.Store, gast.Del)):
                return set()
        if plain:
            out.add(i)
    return out


def _rename_reads(node, old: str, new: str) -> None:
    if old == new:
        return
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id == old:
            n.id = new
