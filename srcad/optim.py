"""Optimisers over pytrees of numpy arrays: torch.optim's names, defaults and update formulas.

``SGD``, ``Adam`` and ``AdamW`` take torch's hyper-parameters (same names, same order, same
defaults, same validation) and follow the operation order of torch's single-tensor paths
(``torch/optim/sgd.py::_single_tensor_sgd`` and ``torch/optim/adam.py::_single_tensor_adam``;
AdamW is Adam with decoupled weight decay, as in ``torch/optim/adamw.py``), so float64
trajectories agree with torch's to rounding (torch's CPU kernels fuse some multiply-adds, so
bit equality is not promised; ``tests/test_optim.py`` measures ~1e-15).

Parameters are a pytree -- a dict with str keys, a list or a tuple, nested, of floating-point
numpy arrays (or a single array). ``opt.step(grads)`` takes gradient *values* in the same
structure (``None`` skips a leaf, as torch skips a parameter whose ``.grad`` is None) and updates
the parameter arrays in place, keeping their dtype. The per-parameter state lives in
``opt.state`` keyed by the leaf's path (``"W1"``, ``"layers/0/b"``), and the hyper-parameters in
``opt.hyperparams`` (torch's ``param_groups[0]``; assign to it to schedule the learning rate).

    >>> import numpy as np, srcad
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> opt = srcad.optim.SGD(params, lr=0.1, momentum=0.9)
    >>> opt.step({"w": np.array([1.0, -1.0])})
    >>> opt.step({"w": np.array([1.0, -1.0])})
    >>> params["w"]
    array([0.71, 2.29])
    >>> opt.state_dict()["state"]["w"]["momentum_buffer"]
    array([ 1.9, -1.9])

``state_dict()`` returns plain arrays, numbers and containers (copies), which ``srcad.save``
writes without pickle; ``load_state_dict`` restores them so that resumed training is bitwise
identical to uninterrupted training.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from numbers import Real
from typing import Any

import numpy as np

from . import build
from .errors import SrcadError

__all__ = ["SGD", "Adam", "AdamW", "OptimizerArgumentError"]


class OptimizerArgumentError(SrcadError, ValueError):
    """A bad hyper-parameter, parameter tree or state dict (a ValueError, as torch raises)."""


# --- hyper-parameter validation: one row per check, torch's messages -------------------------
# (ok?, message) over the hyper-parameter dict; a row naming a hyper-parameter this optimiser
# lacks is skipped. torch/optim/sgd.py and adam.py check exactly these; NaN fails `>= 0`.

# fmt: off
_CHECKS = (
    (lambda h: h["lr"] >= 0,           "Invalid learning rate: {lr}"),
    (lambda h: h["momentum"] >= 0,     "Invalid momentum value: {momentum}"),
    (lambda h: h["weight_decay"] >= 0, "Invalid weight_decay value: {weight_decay}"),
    (lambda h: h["eps"] >= 0,          "Invalid epsilon value: {eps}"),
    (lambda h: 0 <= h["betas"][0] < 1, "Invalid beta parameter at index 0: {betas[0]}"),
    (lambda h: 0 <= h["betas"][1] < 1, "Invalid beta parameter at index 1: {betas[1]}"),
    (lambda h: not h["nesterov"] or (h["momentum"] > 0 and h["dampening"] == 0),
                                       "Nesterov momentum requires a momentum and zero dampening"),
)
# fmt: on

_FLAGS = ("nesterov", "maximize", "amsgrad")


def _check_hyperparams(cls: str, h: dict[str, Any]) -> dict[str, Any]:
    """Type-check and range-check ``h`` (torch's rules); returns it with betas as a tuple."""
    h = dict(h)
    for name, value in h.items():
        if name in _FLAGS:
            if not isinstance(value, (bool, np.bool_)):
                raise OptimizerArgumentError(f"{cls}: {name} must be True or False, got {value!r}")
            h[name] = bool(value)
        elif name == "betas":
            if not (isinstance(value, (tuple, list)) and len(value) == 2):
                raise OptimizerArgumentError(
                    f"{cls}: betas must be a pair of floats, got {value!r}"
                )
            if not all(_is_real(b) for b in value):
                raise OptimizerArgumentError(
                    f"{cls}: betas must be a pair of floats, got {value!r}"
                )
            h[name] = (float(value[0]), float(value[1]))
        elif not _is_real(value):
            raise OptimizerArgumentError(f"{cls}: {name} must be a real number, got {value!r}")
    for ok, message in _CHECKS:
        try:
            passed = ok(h)
        except KeyError:  # not one of this optimiser's hyper-parameters
            continue
        if not passed:
            raise OptimizerArgumentError(f"{cls}: " + message.format(**h))
    return h


def _is_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


# --- pytrees of arrays ------------------------------------------------------------------------


def _leaves(tree: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, leaf) pairs of a dict/list/tuple tree, depth first, in key order."""
    if isinstance(tree, dict):
        for key, sub in tree.items():
            yield from _leaves(sub, (*path, key))
    elif isinstance(tree, (list, tuple)):
        for i, sub in enumerate(tree):
            yield from _leaves(sub, (*path, i))
    else:
        yield path, tree


def _structure(tree: Any, leaves: list) -> Any:
    """A hashable description of the tree's containers and keys (the leaves appended to
    `leaves` in `_leaves`' order): two trees with equal structures have the same paths."""
    if isinstance(tree, dict):
        return ("dict", tuple(tree), tuple(_structure(sub, leaves) for sub in tree.values()))
    if isinstance(tree, (list, tuple)):
        return ("seq", tuple(_structure(sub, leaves) for sub in tree))
    leaves.append(tree)
    return None


def _path_name(path: tuple) -> str:
    return "/".join(str(p) for p in path) if path else "<root>"


def _collect_params(cls: str, params: Any) -> dict[str, np.ndarray]:
    found: dict[str, np.ndarray] = {}
    for path, leaf in _leaves(params):
        name = _path_name(path)
        if not isinstance(leaf, np.ndarray):
            raise OptimizerArgumentError(
                f"{cls}: parameter {name!r} is a {type(leaf).__name__}, not a numpy array; "
                "the optimiser updates arrays in place, so pass np.ndarray leaves"
            )
        if not np.issubdtype(leaf.dtype, np.floating):
            raise OptimizerArgumentError(
                f"{cls}: parameter {name!r} has dtype {leaf.dtype}; only real floating-point "
                "arrays can be optimised"
            )
        if not leaf.flags.writeable:
            raise OptimizerArgumentError(f"{cls}: parameter {name!r} is read-only")
        if name in found:
            raise OptimizerArgumentError(f"{cls}: two parameters share the path {name!r}")
        twin = next((other for other, q in found.items() if q is leaf), None)
        if twin is not None:  # tied weights would be stepped twice (torch refuses them too)
            raise OptimizerArgumentError(f"{cls}: {name!r} is the same array as {twin!r}")
        found[name] = leaf
    if not found:
        raise OptimizerArgumentError(f"{cls}: got an empty parameter list")
    return found


# --- the optimisers -----------------------------------------------------------------------------


class _Optimizer:
    """Shared machinery: the parameter leaves, per-leaf state, step, state_dict."""

    def __init__(self, params: Any, hyperparams: dict[str, Any]):
        cls = type(self).__name__
        self.hyperparams: dict[str, Any] = _check_hyperparams(cls, hyperparams)
        self._params = _collect_params(cls, params)
        self._structure = _structure(params, [])
        self.state: dict[str, dict[str, Any]] = {
            name: self._init_state(p, self.hyperparams) for name, p in self._params.items()
        }

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.hyperparams.items())
        return f"{type(self).__name__}({len(self._params)} arrays, {args})"

    def step(self, grads: Any) -> None:
        """Update every parameter in place from ``grads``, a tree shaped like the parameters."""
        cls = type(self).__name__
        leaves: list = []
        if _structure(grads, leaves) != self._structure:  # (else: the same paths, in order)
            given = {_path_name(path): g for path, g in _leaves(grads)}
            if list(given) != list(self._params):
                missing = [n for n in self._params if n not in given]
                extra = [n for n in given if n not in self._params]
                raise OptimizerArgumentError(
                    f"{cls}.step: the gradients' structure differs from the parameters' "
                    f"(missing {missing}, unexpected {extra}); pass a tree shaped like the "
                    "parameters"
                )
            leaves = list(given.values())
        todo = []
        for (name, p), g in zip(self._params.items(), leaves):
            if g is None:
                continue
            g = np.asarray(g, dtype=p.dtype)
            if g.shape != p.shape:
                raise OptimizerArgumentError(
                    f"{cls}.step: gradient {name!r} has shape {g.shape}, parameter has {p.shape}"
                )
            todo.append((p, g, self.state[name]))
        self._update_all(todo, self.hyperparams)

    def _update_all(self, todo: list, h: dict) -> None:
        """Every (parameter, gradient, state) of one step, shapes checked."""
        for p, g, st in todo:
            self._update(p, g, st, h)

    def state_dict(self) -> dict[str, Any]:
        """A copy of the state: ``{"optimizer", "hyperparams", "state": {path: {...}}}``."""
        return {
            "optimizer": type(self).__name__,
            "hyperparams": dict(self.hyperparams),
            "state": {
                name: {k: _copy(v) for k, v in st.items()} for name, st in self.state.items()
            },
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a ``state_dict()`` (copied in, so the argument is not aliased)."""
        cls = type(self).__name__
        try:
            kind, hyper, state = (state_dict[k] for k in ("optimizer", "hyperparams", "state"))
        except (KeyError, TypeError):
            raise OptimizerArgumentError(
                f"{cls}.load_state_dict: expected a dict with keys 'optimizer', 'hyperparams' "
                "and 'state' (what state_dict() returns)"
            ) from None
        if kind != cls:
            raise OptimizerArgumentError(f"{cls}.load_state_dict: this state is from {kind}")
        if set(hyper) != set(self.hyperparams):
            raise OptimizerArgumentError(
                f"{cls}.load_state_dict: hyper-parameters {sorted(hyper)} do not match "
                f"{sorted(self.hyperparams)}"
            )
        if list(state) != list(self._params):
            raise OptimizerArgumentError(
                f"{cls}.load_state_dict: the state is for parameters {list(state)}, "
                f"this optimiser has {list(self._params)}"
            )
        new_hyper = _check_hyperparams(cls, hyper)
        new_state = {}
        for name, p in self._params.items():
            fresh = self._init_state(p, new_hyper)
            loaded = state[name]
            if set(loaded) != set(fresh):
                raise OptimizerArgumentError(
                    f"{cls}.load_state_dict: state of {name!r} has entries {sorted(loaded)}, "
                    f"expected {sorted(fresh)}"
                )
            for key, value in loaded.items():
                if isinstance(fresh[key], int):
                    fresh[key] = int(value)
                elif value is not None:
                    value = np.asarray(value)
                    if value.shape != p.shape:
                        raise OptimizerArgumentError(
                            f"{cls}.load_state_dict: {name}/{key} has shape {value.shape}, "
                            f"parameter has {p.shape}"
                        )
                    fresh[key] = value.astype(p.dtype, copy=True)
            new_state[name] = fresh
        self.hyperparams, self.state = new_hyper, new_state

    # Subclasses: the state of one leaf before its first step, and one leaf's update.
    def _init_state(self, p: np.ndarray, h: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _update(self, p: np.ndarray, g: np.ndarray, st: dict, h: dict) -> None:
        raise NotImplementedError


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


class SGD(_Optimizer):
    """Stochastic gradient descent with momentum, as ``torch.optim.SGD``.

    Per leaf, with ``g`` the gradient: ``g = -g`` if maximize; ``g += weight_decay * p``;
    with momentum, ``buf = g`` on the first step, else ``buf = momentum*buf + (1-dampening)*g``,
    and ``g = g + momentum*buf`` (nesterov) or ``g = buf``; finally ``p -= lr * g``.

    >>> import numpy as np, srcad
    >>> w = np.array([1.0, 2.0], dtype=np.float32)
    >>> opt = srcad.optim.SGD([w], lr=0.5, weight_decay=0.1)
    >>> opt.step([np.array([1.0, 1.0], dtype=np.float32)])
    >>> w
    array([0.45, 1.4 ], dtype=float32)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ):
        super().__init__(
            params,
            {
                "lr": lr,
                "momentum": momentum,
                "dampening": dampening,
                "weight_decay": weight_decay,
                "nesterov": nesterov,
                "maximize": maximize,
            },
        )

    def _init_state(self, p, h):
        return {"momentum_buffer": None}

    def _update(self, p, g, st, h):
        # torch/optim/sgd.py::_single_tensor_sgd, line for line.
        if h["maximize"]:
            g = -g
        if h["weight_decay"] != 0:
            g = g + h["weight_decay"] * p  # grad.add(param, alpha=weight_decay)
        momentum = h["momentum"]
        if momentum != 0:
            buf = st["momentum_buffer"]
            if buf is None:
                buf = st["momentum_buffer"] = g.copy()
            else:
                buf *= momentum  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                buf += (1 - h["dampening"]) * g
            g = g + momentum * buf if h["nesterov"] else buf
        p += -h["lr"] * g  # param.add_(grad, alpha=-lr)


class Adam(_Optimizer):
    """Adam (and AMSGrad), as ``torch.optim.Adam``; weight decay is added to the gradient.

    Per leaf, at step ``t``: ``g = -g`` if maximize; ``g += weight_decay * p``;
    ``m = lerp(m, g, 1-beta1)``; ``v = beta2*v + (1-beta2)*g*g``; with amsgrad ``v_max =
    max(v_max, v)`` replaces ``v`` below; ``p -= lr/(1-beta1**t) * m / (sqrt(v)/sqrt(1-beta2**t)
    + eps)``.

    >>> import numpy as np, srcad
    >>> params = {"w": np.zeros(2)}
    >>> opt = srcad.optim.Adam(params, lr=0.1)
    >>> opt.step({"w": np.array([3.0, -0.5])})
    >>> params["w"]                      # the first Adam step moves each entry by lr
    array([-0.1,  0.1])
    >>> opt.state["w"]["step"]
    1
    """

    _decoupled = False  # AdamW: decay the parameter, not the gradient

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ):
        super().__init__(
            params,
            {
                "lr": lr,
                "betas": betas,
                "eps": eps,
                "weight_decay": weight_decay,
                "amsgrad": amsgrad,
                "maximize": maximize,
            },
        )

    def _init_state(self, p, h):
        st = {"step": 0, "exp_avg": np.zeros_like(p), "exp_avg_sq": np.zeros_like(p)}
        if h["amsgrad"]:
            st["max_exp_avg_sq"] = np.zeros_like(p)
        return st

    def _update_all(self, todo, h):
        """Every leaf through the C runtime's `adam_steps` (kernels_c/srcad_optim.h: the same
        statements as `_update`, bit for bit, in one pass per leaf and one call per step);
        `_update` for a leaf it does not handle, and for all of them without the runtime."""
        adam_steps = build.c_helper("adam_steps")
        lr, (beta1, beta2), eps, weight_decay = h["lr"], h["betas"], h["eps"], h["weight_decay"]
        if (adam_steps is None or h["amsgrad"] or
                any(type(x) not in (float, int) for x in (lr, beta1, beta2, eps, weight_decay))):
            # (a numpy scalar is not NEP 50's weak scalar: numpy rounds with it otherwise)
            return super()._update_all(todo, h)
        weight = 1 - beta1
        high = math.fabs(weight) >= 0.5  # the lerp's other formula
        flags = (_MAXIMIZE if h["maximize"] else 0) | (_LERP_HIGH if high else 0)
        if weight_decay != 0:
            flags |= _DECAY if self._decoupled else _WEIGHT_DECAY
        by_step: dict = {}
        items = []
        for p, g, st in todo:
            step = float(st["step"] + 1)
            c = by_step.get(step)
            if c is None:  # the scalars of `_update`, computed as it computes them
                c = by_step[step] = tuple(float(x) for x in (
                    1 - lr * weight_decay, weight_decay, 1 - weight if high else weight, beta2,
                    1 - beta2, -(lr / (1 - beta1**step)), (1 - beta2**step) ** 0.5, eps))
            items.append((p, g, st["exp_avg"], st["exp_avg_sq"], c))
        left = set(adam_steps(items, flags))
        for i, (p, g, st) in enumerate(todo):
            if i in left:
                self._update(p, g, st, h)
            else:
                st["step"] += 1

    def _update(self, p, g, st, h):
        # torch/optim/adam.py::_single_tensor_adam (capturable=False), line for line.
        lr, (beta1, beta2), eps, weight_decay = h["lr"], h["betas"], h["eps"], h["weight_decay"]
        if h["maximize"]:
            g = -g
        st["step"] += 1
        if weight_decay != 0:
            if self._decoupled:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p  # grad.add(param, alpha=weight_decay)
        _lerp_(st["exp_avg"], g, 1 - beta1)
        exp_avg_sq = st["exp_avg_sq"]
        exp_avg_sq *= beta2  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        exp_avg_sq += (1 - beta2) * g * g

        step = float(st["step"])  # torch keeps the count in a float tensor and takes .item()
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        if h["amsgrad"]:
            max_exp_avg_sq = st.setdefault("max_exp_avg_sq", np.zeros_like(p))
            np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = np.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
        else:
            denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        p += -step_size * st["exp_avg"] / denom  # param.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW``: ``p *= 1 - lr*weight_decay``
    before the Adam step, and the gradient is left alone.

    >>> import numpy as np, srcad
    >>> params = {"w": np.array([1.0])}
    >>> opt = srcad.optim.AdamW(params, lr=0.1, weight_decay=0.5)
    >>> opt.step({"w": np.array([0.0])})  # a zero gradient: only the decay acts
    >>> params["w"]
    array([0.95])
    """

    _decoupled = True

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


# adam_step's flags (kernels_c/srcad_optim.h)
_MAXIMIZE, _DECAY, _WEIGHT_DECAY, _LERP_HIGH = 1, 2, 4, 8


def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``start.lerp_(end, weight)`` with torch's two-sided formula (aten/src/ATen/native/Lerp.h):
    ``start + w*(end-start)`` for ``|w| < 0.5``, else ``end - (end-start)*(1-w)``."""
    if math.fabs(weight) < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)
