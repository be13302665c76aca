"""The command line: `python -m srcad show|demo|regen`.

    python -m srcad show examples/mlp.py:loss --wrt W,b [--out DIR]
    python -m srcad demo
    python -m srcad regen            # docs/ops.md and generated/, from the code as it is
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

from . import api
from .errors import SrcadError

ROOT = Path(__file__).resolve().parent.parent

# What `regen` writes into generated/: (file, function, wrt, kind, output name).
GENERATED = [
    ("examples/mlp.py", "loss", ("W", "b"), "grad", "examples_mlp_loss_grad.py"),
    ("srcad/zoo/mlp.py", "loss", ("W1", "b1", "W2", "b2"), "grad", "zoo_mlp_loss_grad.py"),
    ("srcad/zoo/mlp.py", "loss", None, "vjp", "zoo_mlp_loss_vjp.py"),
    ("examples/rnn.py", "rnn_loss", ("W", "U", "b"), "grad", "examples_rnn_loss_grad.py"),
    ("examples/rnn.py", "grow", ("x", "w"), "grad", "examples_rnn_grow_grad.py"),
]


def GENERATED_NAMES() -> list[str]:
    """The file names `regen` writes into generated/."""
    return [target for *_, target in GENERATED]


def load_module(path: str | Path):
    """Import a .py file by path (registered in sys.modules so its source can be read)."""
    path = Path(path).resolve()
    if not path.exists():
        raise SrcadError(f"no such file: {path}")
    name = "srcad_user_" + "_".join(path.with_suffix("").parts[-3:]).replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _example_args(module, func: str):
    examples = getattr(module, "EXAMPLES", {})
    make = examples.get(func)
    return None if make is None else make()


def transformed_source(path, func: str, wrt, kind: str = "grad") -> str:
    """Generated source for `path:func`, specialised to the module's EXAMPLES if any."""
    module = load_module(path)
    fn = getattr(module, func, None)
    if fn is None:
        raise SrcadError(f"{path} has no function {func!r}")
    args = _example_args(module, func)
    if kind == "vjp":
        if args is None:
            return api._vjp_transformed(fn, {}).source
        _, pullback = api.vjp(fn, *args)
        return pullback.source
    wrt_value = tuple(wrt) if wrt is not None and len(wrt) > 1 else (wrt[0] if wrt else 0)
    t = api.Transformed(fn, kind, wrt_value, {})
    if args is not None:
        t.compiled(t.bind(args, {}))
    return t.source


@contextlib.contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def generated_files() -> dict[str, str]:
    """What `regen` writes: {relative path: text}. Paths in headers are relative to the repo."""
    from .ops.docs import render_ops_md

    out = {"docs/ops.md": render_ops_md()}
    with _cwd(ROOT):
        for path, func, wrt, kind, target in GENERATED:
            out[f"generated/{target}"] = transformed_source(path, func, wrt, kind)
    return out


def regen(root: Path = ROOT) -> list[str]:
    written = []
    for rel, text in generated_files().items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists() or p.read_text() != text:
            p.write_text(text)
            written.append(rel)
    return written


def demo() -> int:
    from .testing import check_grads
    from .zoo import mlp

    rng = np.random.default_rng(0)
    params = mlp.init(rng, 16, 32, 10)
    x, y = mlp.batch(rng, 8, 16, 10)
    wrt = ("W1", "b1", "W2", "b2")
    grad_fn = api.grad(mlp.loss, wrt=wrt)
    grads = grad_fn(*params, x, y)
    print("srcad demo: a two-layer tanh MLP with a softmax cross-entropy loss\n")
    print(api.source(grad_fn))
    errors = check_grads(mlp.loss, (*params, x, y), wrt=wrt)
    print("gradient check against central differences (float64, max|g - fd| / max|fd|):")
    for name, g in zip(wrt, grads):
        print(f"  d{name:<3} shape {str(g.shape):<9} rel. error {errors[name]:.2e}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m srcad", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated source of FILE.py:FUNC")
    show.add_argument("target", help="FILE.py:FUNC")
    show.add_argument("--wrt", default=None, help="comma-separated argument names or positions")
    show.add_argument("--vjp", action="store_true", help="show the split forward/backward pair")
    show.add_argument("--out", default=None, help="write the source into this directory")
    sub.add_parser("demo", help="differentiate a bundled model and check its gradients")
    sub.add_parser("regen", help="rewrite docs/ops.md and generated/ from the code")
    args = parser.parse_args(argv)
    try:
        if args.command == "show":
            path, _, func = args.target.rpartition(":")
            if not path or not func:
                parser.error("the target must look like FILE.py:FUNC")
            wrt = None
            if args.wrt:
                wrt = [int(w) if w.lstrip("-").isdigit() else w for w in args.wrt.split(",")]
            text = transformed_source(path, func, wrt, "vjp" if args.vjp else "grad")
            if args.out:
                out = Path(args.out)
                out.mkdir(parents=True, exist_ok=True)
                target = out / f"{Path(path).stem}_{func}_{'vjp' if args.vjp else 'grad'}.py"
                target.write_text(text)
                print(f"wrote {target}")
            else:
                print(text, end="")
            return 0
        if args.command == "demo":
            return demo()
        if args.command == "regen":
            written = regen()
            print("regenerated: " + (", ".join(written) if written else "nothing changed"))
            return 0
    except SrcadError as e:
        print(f"srcad: {e}", file=sys.stderr)
        return 2
    return 1
