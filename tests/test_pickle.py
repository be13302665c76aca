"""Transformed functions pickle by reference (issue 26): the user function's module and
qualified name, the kind, `wrt` and the options travel; the receiving process builds its own
code and kernels. Round trips go through a fresh Python process (tests/pickle_worker.py)."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import parallel_models as pm
import pytest

import srcad

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "pickle_worker.py"


def _in_fresh_process(fn, args, pythonpath=None):
    path = pythonpath if pythonpath is not None else [ROOT / "tests", ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))}
    p = subprocess.run([sys.executable, str(WORKER)], input=pickle.dumps((fn, args)), check=False,
                       capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    return pickle.loads(p.stdout)


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, type(a)) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    else:
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.array_equal(a, b), (a, b)


@pytest.mark.parametrize("make", [
    lambda: srcad.grad(pm.mse, wrt=("W", "b")),
    lambda: srcad.grad(pm.mse, wrt="W"),
    lambda: srcad.value_and_grad(pm.mse, wrt=(0, 2), memory_plan=False),
    lambda: srcad.grad(pm.mse, wrt=1, mode="tape"),
    lambda: pm.mse_grad,  # (the module's name holds the transform, not the function)
], ids=["grad-tuple", "grad-one", "value_and_grad-options", "tape", "decorated"])
def test_a_fresh_process_computes_the_same_gradient(make):
    g = make()
    args = pm.example(dtype=np.float32)
    status, got, kind, rebuilt = _in_fresh_process(g, args)
    assert status == "ok", got
    assert kind == "Transformed" and rebuilt == 1
    _same(got, g(*args))


def test_what_travels_is_the_reference_and_options_not_code():
    g = srcad.value_and_grad(pm.mse, wrt=("W", "b"), fuse=True, memory_plan=False)
    before = pickle.dumps(g)
    g(*pm.example())  # builds a specialisation (and kernels)
    after = pickle.dumps(g)
    assert before == after and len(after) < 400
    assert b"parallel_models" in after and b"mse" in after
    back = pickle.loads(after)
    assert back is not g and back.fn is pm.mse and back.kind == "value_and_grad"
    assert back.wrt == ["W", "b"] and not back.single
    assert back.options.fuse and not back.options.memory_plan
    assert back._cache == {}  # (its own specialisations, built on its first call)
    # unpickled again in the same process: the same rebuilt transform, its code kept
    assert pickle.loads(after) is back


def test_a_transform_of_a_transform_travels_by_reference_too():
    gg = srcad.grad(srcad.grad(pm.cubic))
    back = pickle.loads(pickle.dumps(gg))
    assert back.inner is not None and back.inner.fn is pm.cubic
    assert back(1.5) == gg(1.5) == 3 * 1.5


def test_a_local_function_is_refused_when_pickled():
    g = srcad.grad(pm.make_local())
    with pytest.raises(srcad.SrcadError, match=r"make_local.<locals>.inner cannot be sent"):
        pickle.dumps(g)


def test_a_rebound_name_is_refused_when_pickled(monkeypatch):
    g = srcad.grad(pm.mse)
    monkeypatch.setattr(pm, "mse", pm.slow_mse)
    with pytest.raises(srcad.SrcadError, match=r"parallel_models.mse is now bound to"):
        pickle.dumps(g)


def test_a_module_the_receiver_cannot_import_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "only_here.py").write_text(
        "import numpy as np\n\ndef f(x):\n    return np.sum(x * x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import only_here

    status, message, _, _ = _in_fresh_process(srcad.grad(only_here.f), (np.ones(3),),
                                              pythonpath=[ROOT])
    assert status == "error"
    assert "cannot rebuild srcad.grad of only_here.f in this process" in message
    assert "importable" in message


def test_a_pullback_does_not_travel():
    _, pullback = srcad.vjp(pm.mse, *pm.example())
    with pytest.raises(srcad.SrcadError, match="pullback of mse cannot be sent"):
        pickle.dumps(pullback)
