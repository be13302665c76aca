"""np.piecewise, np.vectorize and np.apply_along_axis as the loops numpy runs: the shape
helpers source mode's lowering calls (frontend/callbacks.py), and the same algorithms run
eagerly for tape mode on its values (tape_tensor.py / tape.py), numpy call for numpy call,
so the two modes agree bit for bit.

    >>> along_axis_source(3, 4), along_axis_dest(3, 1, 4)
    ((2, 3), (1, 2))
"""

from __future__ import annotations

import re

import numpy  # (not `np`: the eager forms take the numpy the tape's traced code sees as `np`)

VECTORIZE_NAME = "__srcad_vectorized_"  # the name a vectorize object's function is called by


def along_axis_source(ndim_arr, ndim_res):
    """Where the function's result axes are in the stacked results (after the other axes of
    an array of ndim_arr axes, the one iterated over removed)."""
    return tuple(range(ndim_arr - 1, ndim_res))


def along_axis_dest(ndim_arr, axis, ndim_res):
    """Where numpy puts them: at the axis iterated over."""
    axis = axis % ndim_arr
    return tuple(range(axis, axis + ndim_res - ndim_arr + 1))


def over_axes(axes, ndim):
    """np.apply_over_axes' axes, as numpy reads them: one or a sequence, negative ones from
    the end (a list of Python ints)."""
    axes = [axes] if numpy.ndim(axes) == 0 else list(axes)
    return [int(a) + ndim if int(a) < 0 else int(a) for a in axes]


def piecewise_count(n, nf):
    """How many conditions np.piecewise was given (n), checked against the nf functions as
    numpy checks them."""
    if nf not in (n, n + 1) or n == 0:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are needed")
    return n


# --- eager forms (tape mode): `np` is the numpy the tape's traced code sees ----------------------


def piecewise_eager(np, x, condlist, funclist, *args, **kw):
    """np.piecewise as frontend/callbacks.py writes it out: later conditions win, a default
    where none holds when there is one function more than conditions."""
    if not isinstance(funclist, (list, tuple)):
        raise TypeError("piecewise: give the functions as a list")
    items = list(condlist) if isinstance(condlist, (list, tuple)) else [condlist]  # (one array)
    if not items:
        raise ValueError("piecewise: no conditions")
    if not any(isinstance(c, (list, tuple)) for c in items) and all(
            isinstance(c, bool) for c in items):
        raise TypeError("piecewise: a list of Python bools (one condition) is not supported")
    n = len(items)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are needed")
    xs = np.asarray(x)
    conds = [np.asarray(c, dtype=bool) for c in items]
    if len(funclist) == n + 1:
        either = conds[0]
        for c in conds[1:]:
            either = np.logical_or(either, c)
        conds.append(np.logical_not(either))
    y = np.zeros_like(xs)
    for c, f in zip(conds, funclist):
        if not callable(f):
            y[c] = f
        elif np.any(c):
            y[c] = f(xs[c], *args, **kw)
    return y


def vectorize_eager(np, pyfunc, otypes, *args):
    """np.vectorize(pyfunc, otypes=otypes)(*args) as a loop over the broadcast elements."""
    arrays = [np.asarray(a) for a in args]
    shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    flat = [np.ravel(np.broadcast_to(a, shape)) for a in arrays]
    out = [pyfunc(*(fl[i] for fl in flat)) for i in range(np.size(flat[0]))]
    if out and isinstance(out[0], tuple):  # several outputs: one array each
        return tuple(np.reshape(_cast(np, np.array([o[k] for o in out]), otypes, k), shape)
                     for k in range(len(out[0])))
    return np.reshape(_cast(np, np.array(out), otypes, 0), shape)


def _cast(np, res, otypes, k):
    """Output k cast to its otype (one code for every output, or one each)."""
    if not otypes:
        return res
    return res.astype(np.dtype(otypes[k] if len(otypes) > 1 else otypes))


def signature_cores(signature):
    """np.vectorize's `signature` ("(n),()->(n)"): how many core dimensions each input has,
    and how many outputs there are."""
    lhs, arrow, rhs = signature.replace(" ", "").partition("->")
    if not arrow:
        raise ValueError(f"not a generalised ufunc signature: {signature!r}")
    inputs = re.findall(r"\(([^)]*)\)", lhs)
    return tuple(len([d for d in i.split(",") if d]) for i in inputs), len(
        re.findall(r"\(([^)]*)\)", rhs))


def vectorize_general_eager(np, pyfunc, otypes, cores, excluded, args, kwargs):
    """np.vectorize(pyfunc, otypes=, signature=, excluded=)(*args, **kwargs) as the loop
    frontend/callbacks.py writes (`cores`: each vectorized input's core dimensions, the
    positional ones then the keywords, as numpy orders them; None: no signature)."""
    keys = [i for i in range(len(args)) if i not in excluded] + [
        k for k in kwargs if k not in excluded]
    arrays = [np.asarray(args[k] if isinstance(k, int) else kwargs[k]) for k in keys]
    cores = cores if cores is not None else (0,) * len(arrays)
    if len(cores) != len(arrays):
        raise TypeError(f"wrong number of positional arguments: expected {len(cores)}, "
                        f"got {len(arrays)}")
    core_shapes = [np.shape(a)[np.ndim(a) - c:] for a, c in zip(arrays, cores)]
    shape = np.broadcast_shapes(*(np.shape(a)[:np.ndim(a) - c] for a, c in zip(arrays, cores)))
    flat = [np.reshape(np.broadcast_to(a, shape + cs), (-1,) + cs)
            for a, cs in zip(arrays, core_shapes)]
    out = []
    for i in range(np.shape(flat[0])[0]):
        pos = [args[k] for k in range(len(args))]
        kw = dict(kwargs)
        for k, fl in zip(keys, flat):
            if isinstance(k, int):
                pos[k] = fl[i]
            else:
                kw[k] = fl[i]
        out.append(pyfunc(*pos, **kw))
    if out and isinstance(out[0], tuple):  # several outputs: one array each
        results = [_cast(np, np.array([o[k] for o in out]), otypes, k)
                   for k in range(len(out[0]))]
        return tuple(np.reshape(r, shape + np.shape(r)[1:]) for r in results)
    res = _cast(np, np.array(out), otypes, 0)
    return np.reshape(res, shape + np.shape(res)[1:])


def apply_along_axis_eager(np, func1d, axis, arr, *args, **kw):
    """np.apply_along_axis as a loop over the 1-d slices, the results stacked, their axes
    where the axis was."""
    m = np.moveaxis(np.asarray(arr), axis, -1)
    flat = np.reshape(m, (-1, np.shape(m)[-1]))
    rows = [func1d(flat[i], *args, **kw) for i in range(np.shape(flat)[0])]
    res = np.array(rows)
    res = np.reshape(res, np.shape(m)[:-1] + np.shape(res)[1:])
    return np.moveaxis(res, along_axis_source(np.ndim(m), np.ndim(res)),
                       along_axis_dest(np.ndim(m), axis, np.ndim(res)))


def apply_over_axes_eager(np, func, a, axes):
    """np.apply_over_axes as numpy loops: func(a, axis) per axis in turn, a result that
    dropped the axis given it back (np.expand_dims)."""
    val = np.asarray(a)
    for axis in over_axes(axes, numpy.ndim(a)):
        res = func(val, axis)
        if np.ndim(res) != np.ndim(val):
            res = np.expand_dims(res, axis)
            if np.ndim(res) != np.ndim(val):
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


class VectorizeEager:
    """A np.vectorize object as tape mode's traced code sees it: given a tape value, the loop
    of `vectorize_eager`; otherwise numpy's own object. Forms source mode does not lower
    (signature=, excluded=, keywords) are numpy's, which refuses a tape value."""

    def __init__(self, np_view, has_value, obj, pyfunc=None):
        self._np, self._has_value, self._obj = np_view, has_value, obj
        # (the function as the traced code sees it: a module-level `VEXP = np.vectorize(
        # math.exp)` holds the plain builtin, which turns a tape value into a float)
        self._pyfunc = obj.pyfunc if pyfunc is None else pyfunc

    def __call__(self, *args, **kwargs):
        obj = self._obj
        otypes = obj.otypes if isinstance(obj.otypes, str) and obj.otypes else None
        if self._has_value(args) and not kwargs and obj.signature is None and \
                not obj.excluded and args:
            return vectorize_eager(self._np, self._pyfunc, otypes, *args)
        if self._has_value(args) or self._has_value(tuple(kwargs.values())):
            cores = None
            if obj.signature is not None:
                cores, _ = signature_cores(obj.signature)
            return vectorize_general_eager(self._np, self._pyfunc, otypes, cores,
                                           set(obj.excluded), args, kwargs)
        return obj(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._obj, name)


def eager_callbacks():
    """numpy function -> its eager form (`np` first), for tape mode's __array_function__."""
    return {numpy.piecewise: piecewise_eager, numpy.apply_along_axis: apply_along_axis_eager,
            numpy.apply_over_axes: apply_over_axes_eager}
