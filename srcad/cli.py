"""The command line: `python -m srcad show|demo|regen`.

    python -m srcad show examples/mlp.py:loss --wrt W,b [--out DIR] [--order 2] [--fuse]
    python -m srcad show examples/mlp.py:loss --wrt W,b --stage normalize|activity|reverse|
                                                                optimize|lower|final
    python -m srcad demo [--steps N] [--workers N|ADDRESS]
    python -m srcad regen            # docs/ops.md and generated/, from the code as it is
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import api, parallel
from .errors import SrcadError
from .analysis.docs import render_ops_md
from .optim import Adam
from .zoo import data, gpt
from .lower import text_only
from .stages import STAGES, stage_text

ROOT = Path(__file__).resolve().parent.parent

# What `regen` writes into generated/: (file, function, wrt, kind, output name).
GENERATED = [
    ("examples/mlp.py", "loss", ("W", "b"), "grad", "examples_mlp_loss_grad.py"),
    ("srcad/zoo/mlp.py", "loss", ("W1", "b1", "W2", "b2"), "grad", "zoo_mlp_loss_grad.py"),
    ("srcad/zoo/mlp.py", "loss", None, "vjp", "zoo_mlp_loss_vjp.py"),
    ("examples/rnn.py", "rnn_loss", ("W", "U", "b"), "grad", "examples_rnn_loss_grad.py"),
    ("examples/rnn.py", "grow", ("x", "w"), "grad", "examples_rnn_grow_grad.py"),
    ("examples/deep.py", "loss", ("h", "Ws"), "grad", "examples_deep_loss_grad.py"),
    ("srcad/zoo/transformer.py", "block_loss", ("p",), "grad",
     "zoo_transformer_block_loss_grad.py"),
    ("srcad/zoo/gpt.py", "loss", ("params",), "grad", "zoo_gpt_loss_grad.py"),
    ("examples/second_order.py", "spring", ("k",), "grad_grad",
     "examples_second_order_spring_grad_grad.py"),
]


# ... and the same, lowered (fuse=True): (file, function, wrt, kind, stem) -> stem.py, stem.c
FUSED = [
    ("examples/mlp.py", "loss", ("W", "b"), "grad", "examples_mlp_loss_grad_fused"),
    ("srcad/zoo/transformer.py", "block_loss", ("p",), "grad",
     "zoo_transformer_block_loss_grad_fused"),
]


def GENERATED_NAMES() -> list[str]:
    """The Python file names `regen` writes into generated/."""
    return [target for *_, target in GENERATED] + [f"{stem}.py" for *_, stem in FUSED]


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


def _target(path, func: str, wrt, kind: str, options: dict | None = None):
    """(the transformed `path:func`, the module's EXAMPLES arguments for it or None).
    kind "grad_grad": the gradient of the gradient (reverse over reverse; needs EXAMPLES,
    since it transforms the gradient's code for those arguments). `options`: the user's
    keywords (fuse=True)."""
    options = dict(options or {})
    module = load_module(path)
    fn = getattr(module, func, None)
    if fn is None:
        raise SrcadError(f"{path} has no function {func!r}")
    args = _example_args(module, func)
    if kind == "vjp":
        return api._vjp_transformed(fn, options, len(args or ())), args
    wrt_value = tuple(wrt) if wrt is not None and len(wrt) > 1 else (wrt[0] if wrt else 0)
    if kind == "grad_grad":
        if args is None or isinstance(wrt_value, tuple):
            raise SrcadError(f"a second derivative of {func} needs one wrt and example "
                             f"arguments (EXAMPLES[{func!r}] in {path})")
        return api.Transformed(api.Transformed(fn, "grad", wrt_value, {}), "grad", wrt_value,
                               options), args
    return api.Transformed(fn, kind, wrt_value, options), args


def transformed_source(path, func: str, wrt, kind: str = "grad") -> str:
    """Generated source for `path:func`, specialised to the module's EXAMPLES if any."""
    t, args = _target(path, func, wrt, kind)
    if kind == "vjp":
        if args is None:
            return t.source
        _, pullback = api.vjp(t.fn, *args)
        return pullback.source
    if args is not None:
        t.compiled(t.bind(args, {}))
    return t.source


def fused_sources(path, func: str, wrt, kind: str = "grad") -> tuple[str, str | None]:
    """(lowered Python, its kernels' C) for `path:func` with fuse=True, specialised to the
    module's EXAMPLES. The text is planned, not built: it is the same with or without a
    compiler. The C is None when nothing fuses (or with no EXAMPLES to specialise on)."""
    with text_only():
        t, args = _target(path, func, wrt, kind, {"fuse": True})
        if args is None:
            return t.source, None
        c = t.compiled(t.bind(args, {}), given=len(args) if kind == "vjp" else None)
    return c.source, (c.kernels.c_source if c.kernels is not None else None)


def stage_source(path, func: str, wrt, kind: str, stage: str, options=None) -> str:
    """`path:func`'s program after one stage of the pipeline (srcad/stages.py); with
    fuse=True, planned (the C is written, not built)."""
    t, args = _target(path, func, wrt, kind, options)
    with text_only():
        return stage_text(t, stage, None if args is None else t.bind(args, {}))


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
    out = {"docs/ops.md": render_ops_md()}
    with _cwd(ROOT):
        for path, func, wrt, kind, target in GENERATED:
            out[f"generated/{target}"] = transformed_source(path, func, wrt, kind)
        for path, func, wrt, kind, stem in FUSED:
            py, c = fused_sources(path, func, wrt, kind)
            out[f"generated/{stem}.py"] = py
            if c is not None:
                out[f"generated/{stem}.c"] = c
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


def demo(steps: int = 1500, out_dir: str | Path | None = None, workers=None) -> int:
    """Train a tiny GPT on eleven Shakespeare sonnets with srcad gradients and Adam.

    Character-level, 2 layers, width 64, 4 heads, context 32, batch 16, float32: ~1500 steps in
    well under a minute on 2 cores. The gradient is fused (fuse=True: its elementwise chains
    run as C kernels; without a C compiler, one warning and the same code unfused). Prints
    progress, a greedy and a sampled continuation, and the paths of the generated backward
    source and of its kernels' C.

    `workers`: shard each batch over Dask worker processes (srcad.parallel): a number starts a
    local cluster of that many, an address ("tcp://host:8786") joins a running one (a
    distributed.Client is used as it is); the
    gradient is reduced in a fixed shard order, equal to one process's within the bound
    srcad/parallel.py states (the first step prints the difference)."""
    width, heads, layers, context, batch, lr = 64, 4, 2, 32, 16, 4e-3
    tok = data.CharTokenizer(data.TEXT)
    ids = tok.encode(data.TEXT)
    rng = np.random.default_rng(0)
    params = gpt.init(rng, tok.vocab_size, width, heads, layers, context, dtype=np.float32)
    n_params = sum(a.size for a in [params["wte"], params["wpe"], params["lnf_g"],
                                    params["lnf_b"]] + [a for b in params["blocks"]
                                                        for a in b.values()])
    print(f"srcad demo: a {layers}-layer GPT (width {width}, {heads} heads, context {context}, "
          f"{n_params:,} float32 parameters)\ntrained on {len(ids):,} characters of Shakespeare's "
          f"sonnets (vocabulary {tok.vocab_size}), batch {batch}, {steps} steps of "
          f"Adam (lr {lr}, linear decay over the second half).\n")

    grad_fn = api.value_and_grad(gpt.loss, wrt="params", fuse=True)
    step_fn = grad_fn
    if workers:
        spec = int(workers) if isinstance(workers, str) and workers.isdigit() else workers
        step_fn = parallel.value_and_grad(grad_fn, batch={"tokens": 0, "targets": 0},
                                          client=spec)
        n_workers = len(step_fn.client.scheduler_info()["workers"])
        print(f"data-parallel: each batch split into {n_workers} shards over {n_workers} Dask "
              f"worker processes ({step_fn.client.scheduler.address}), reduced in shard "
              f"order\n")
    opt = Adam(params, lr=lr)
    stream = data.batches(rng, ids, batch, context)
    losses, first = [], None
    start = last = time.perf_counter()
    report_every = 100
    for step in range(1, steps + 1):
        tokens, targets = next(stream)
        loss, grads = step_fn(params, tokens, targets, heads)
        if step == 1 and step_fn is not grad_fn:
            one_loss, one = grad_fn(params, tokens, targets, heads)
            diff = max(float(np.max(np.abs(a - b))) for a, b in zip(_leaves(grads),
                                                                     _leaves(one)))
            print(f"step 1: sharded vs one process: loss differs by {abs(loss - one_loss):.1e}, "
                  f"the gradient by at most {diff:.1e} (reassociation of the batch sum)")
        rate = lr * min(1.0, 2.0 * (1.0 - (step - 1) / steps))
        opt.hyperparams["lr"] = rate
        opt.step(grads)
        losses.append(float(loss))
        if first is None:
            first = float(loss)
            print(f"step {step:5d}  loss {first:.3f}  (first step, includes generating the "
                  f"backward: {time.perf_counter() - start:.2f} s)")
        if step % report_every == 0 or step == steps:
            now = time.perf_counter()
            n = (step - 1) % report_every + 1
            print(f"step {step:5d}  loss {np.mean(losses[-n:]):.3f}  "
                  f"{n * batch * context / (now - last):8,.0f} tokens/s  "
                  f"{now - start:5.1f} s", flush=True)
            last = now
    elapsed = time.perf_counter() - start
    print(f"\nloss {first:.3f} -> {np.mean(losses[-report_every:]):.3f} (mean of the last "
          f"{report_every} steps) in {elapsed:.1f} s\n")

    prompt = "Shall I compare thee"
    greedy = gpt.generate(params, tok.encode(prompt), 150, heads)
    sampled = gpt.generate(params, tok.encode(prompt), 150, heads,
                           rng=np.random.default_rng(1), temperature=0.8)
    print("greedy:\n  " + tok.decode(greedy).replace("\n", "\n  "))
    print("sampled (temperature 0.8):\n  " + tok.decode(sampled).replace("\n", "\n  "))

    out = Path(out_dir) if out_dir else Path(tempfile.gettempdir()) / "srcad_demo"
    out.mkdir(parents=True, exist_ok=True)
    path = out / "gpt_loss_grad.py"
    path.write_text(api.source(grad_fn))
    print(f"\nthe generated backward of gpt.loss ({len(api.source(grad_fn).splitlines())} "
          f"lines): {path}")
    kernels = grad_fn._last.kernels if grad_fn._last is not None else None
    if kernels is not None and kernels.c_source:
        c_path = out / "gpt_loss_grad.c"
        c_path.write_text(kernels.c_source)
        print(f"its {len(kernels.kernels)} fused C kernels: {c_path}")
    if step_fn is not grad_fn:
        step_fn.close()
    return 0


def _leaves(tree):
    """The arrays of a pytree of gradients, in a fixed order."""
    if isinstance(tree, dict):
        for k in sorted(tree):
            yield from _leaves(tree[k])
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from _leaves(v)
    else:
        yield tree


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m srcad", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated source of FILE.py:FUNC")
    show.add_argument("target", help="FILE.py:FUNC")
    show.add_argument("--wrt", default=None, help="comma-separated argument names or positions")
    show.add_argument("--vjp", action="store_true", help="show the split forward/backward pair")
    show.add_argument("--out", default=None, help="write the source into this directory")
    show.add_argument("--stage", default=None, choices=STAGES,
                      help="print the program after this stage of the pipeline instead")
    show.add_argument("--order", type=int, choices=(1, 2), default=1,
                      help="2: the gradient of the gradient (reverse over reverse)")
    show.add_argument("--fuse", action="store_true",
                      help="lower elementwise chains to C kernels: the lowered Python and, "
                      "with --out, its C beside it")
    demo_p = sub.add_parser("demo", help="train a tiny GPT with srcad gradients and Adam")
    demo_p.add_argument("--steps", type=int, default=1500, help="training steps (1500)")
    demo_p.add_argument("--workers", default=None, metavar="N|ADDRESS",
                        help="shard each batch over N local Dask worker processes, or over "
                        "the workers of the cluster at ADDRESS (the distributed extra)")
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
            kind = "vjp" if args.vjp else ("grad_grad" if args.order == 2 else "grad")
            if args.stage:
                print(stage_source(path, func, wrt, kind, args.stage,
                                   {"fuse": True} if args.fuse else None), end="")
                return 0
            c_text = None
            if args.fuse:
                text, c_text = fused_sources(path, func, wrt, kind)
            else:
                text = transformed_source(path, func, wrt, kind)
            if args.out:
                out = Path(args.out)
                out.mkdir(parents=True, exist_ok=True)
                stem = f"{Path(path).stem}_{func}_{kind}" + ("_fused" if args.fuse else "")
                target = out / f"{stem}.py"
                target.write_text(text)
                print(f"wrote {target}")
                if c_text is not None:
                    (out / f"{stem}.c").write_text(c_text)
                    print(f"wrote {out / f'{stem}.c'}")
                elif args.fuse:
                    print("(nothing to fuse: no C)")
            else:
                print(text, end="")
                if c_text is not None:
                    print(f"\n/* ---- the kernels' C ({len(c_text.splitlines())} lines) ---- */\n"
                          + c_text, end="")
            return 0
        if args.command == "demo":
            return demo(steps=args.steps, workers=args.workers)
        if args.command == "regen":
            written = regen()
            print("regenerated: " + (", ".join(written) if written else "nothing changed"))
            return 0
    except SrcadError as e:
        print(f"srcad: {e}", file=sys.stderr)
        return 2
    return 1
