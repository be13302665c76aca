"""srcad.optim against torch.optim: 100-step trajectories, resume bit-exactness, in-place updates.

Each case runs the same optimiser with the same options on both sides and compares every
parameter after every step with the seed's metric max|a-b| / (max|b| + eps).
"""

import doctest

import numpy as np
import pytest
import torch

import srcad
import srcad.optim
from tests import fixtures_optim as F

STEPS = 100
TOL = 1e-6

# --- the grid: (optimiser, options) -----------------------------------------------------------

CASES = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.5}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1}),
    (
        "SGD",
        {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01, "maximize": True},
    ),
    ("SGD", {"lr": 0.01, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "betas": (0.5, 0.9), "eps": 1e-3}),  # 1-beta1 = 0.5: lerp's other branch
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.99), "amsgrad": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01, "maximize": True, "amsgrad": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.0}),
    ("AdamW", {"lr": 0.01, "maximize": True, "betas": (0.4, 0.9)}),
]
IDS = [f"{name}-" + ",".join(f"{k}={v}" for k, v in opts.items()) for name, opts in CASES]


def rel_err(a, b, eps=1e-30):
    return float(np.max(np.abs(a - b)) / (np.max(np.abs(b)) + eps))


def torch_opt(name, tensors, opts):
    return getattr(torch.optim, name)(tensors, foreach=False, **opts)


# --- (a) an MLP trained by srcad.grad vs torch autograd -----------------------------------------


def mlp_problem(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    params = {
        "W1": rng.standard_normal((3, 8)) * 0.5,
        "b1": rng.standard_normal(8) * 0.1,
        "W2": rng.standard_normal((8, 2)) * 0.5,
        "b2": np.zeros(2),
    }
    batches = [(rng.standard_normal((16, 3)), rng.standard_normal((16, 2))) for _ in range(8)]
    cast = lambda a: a.astype(dtype)
    return {k: cast(v) for k, v in params.items()}, [(cast(x), cast(y)) for x, y in batches]


def torch_mlp_loss(t, x, y, sign=1.0):
    h = torch.tanh(x @ t["W1"] + t["b1"])
    out = h @ t["W2"] + t["b2"]
    return sign * torch.mean((out - y) ** 2)


# maximize=True climbs the negated loss, so every case fits the data instead of diverging
GRADS = {
    False: srcad.grad(F.mlp_loss, wrt="params"),
    True: srcad.grad(F.neg_mlp_loss, wrt="params"),
}


def run_mlp_srcad(name, opts, params, batches, steps, start=0, opt=None):
    opt = opt or getattr(srcad.optim, name)(params, **opts)
    grad_mlp = GRADS[opts.get("maximize", False)]
    trajectory = []
    for i in range(start, steps):
        x, y = batches[i % len(batches)]
        opt.step(grad_mlp(params, x, y))
        trajectory.append({k: v.copy() for k, v in params.items()})
    return trajectory, opt


def run_mlp_torch(name, opts, params, batches, steps):
    t = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    opt = torch_opt(name, list(t.values()), opts)
    trajectory = []
    for i in range(steps):
        x, y = (torch.tensor(a) for a in batches[i % len(batches)])
        opt.zero_grad()
        torch_mlp_loss(t, x, y, -1.0 if opts.get("maximize") else 1.0).backward()
        opt.step()
        trajectory.append({k: v.detach().numpy().copy() for k, v in t.items()})
    return trajectory


def max_traj_err(ours, theirs):
    assert len(ours) == len(theirs)
    return max(rel_err(a[k], b[k]) for a, b in zip(ours, theirs) for k in b)


@pytest.mark.parametrize("name,opts", CASES, ids=IDS)
def test_mlp_trajectory_matches_torch(name, opts):
    params, batches = mlp_problem()
    theirs = run_mlp_torch(name, opts, params, batches, STEPS)
    ours, _ = run_mlp_srcad(name, opts, {k: v.copy() for k, v in params.items()}, batches, STEPS)
    err = max_traj_err(ours, theirs)
    assert err < TOL, f"{name}{opts}: max relative error {err:.3g} over {STEPS} steps"
    # the problem is not trivial: the parameters really moved
    assert rel_err(ours[-1]["W1"], mlp_problem()[0]["W1"]) > 1e-3


# --- (b) a quadratic with given gradients ------------------------------------------------------


def quadratic(seed=1, n=6):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    a = m @ m.T / n + np.eye(n)  # symmetric positive definite
    return a, rng.standard_normal(n), {"p": rng.standard_normal(n), "q": rng.standard_normal(n)}


def quad_grads(a, b, p, q):
    # f = 1/2 p'Ap - b'p + 1/2 |q|^2 * 3: two leaves with different curvature
    return a @ p - b, 3.0 * q


@pytest.mark.parametrize("name,opts", CASES, ids=IDS)
def test_quadratic_trajectory_matches_torch(name, opts):
    a, b, init = quadratic()
    params = {k: v.copy() for k, v in init.items()}
    opt = getattr(srcad.optim, name)(params, **opts)
    tp = {k: torch.tensor(v) for k, v in init.items()}
    topt = torch_opt(name, list(tp.values()), opts)
    err = 0.0
    for _ in range(STEPS):
        gp, gq = quad_grads(a, b, params["p"], params["q"])
        opt.step({"p": gp, "q": gq})
        tgp, tgq = quad_grads(a, b, tp["p"].numpy(), tp["q"].numpy())
        tp["p"].grad, tp["q"].grad = torch.tensor(tgp), torch.tensor(tgq)
        topt.step()
        err = max(err, *(rel_err(params[k], tp[k].numpy()) for k in params))
    assert err < TOL, f"{name}{opts}: max relative error {err:.3g} over {STEPS} steps"


@pytest.mark.parametrize(
    "name,opts", [CASES[1], CASES[8], CASES[15]], ids=[IDS[1], IDS[8], IDS[15]]
)
def test_float32_trajectory_close_to_torch(name, opts):
    params, batches = mlp_problem(np.float32)
    theirs = run_mlp_torch(name, opts, params, batches, 30)
    ours, _ = run_mlp_srcad(name, opts, {k: v.copy() for k, v in params.items()}, batches, 30)
    assert all(v.dtype == np.float32 for step in ours for v in step.values())
    assert max_traj_err(ours, theirs) < 1e-5  # measured ~7e-7


# --- resume: save the state mid-training, load it, continue: bitwise equal ---------------------


@pytest.mark.parametrize(
    "name,opts",
    [CASES[3], CASES[2], CASES[11], CASES[15], ("SGD", {"lr": 0.05})],
    ids=[IDS[3], IDS[2], IDS[11], IDS[15], "SGD-plain"],
)
def test_resume_from_saved_state_is_bit_identical(tmp_path, name, opts):
    params, batches = mlp_problem()
    straight, _ = run_mlp_srcad(name, opts, {k: v.copy() for k, v in params.items()}, batches, 60)

    first = {k: v.copy() for k, v in params.items()}
    _, opt = run_mlp_srcad(name, opts, first, batches, 25)
    srcad.save(tmp_path / "ckpt", {"params": first, "opt": opt.state_dict()})
    opt.step({k: np.ones_like(v) for k, v in first.items()})  # later steps don't touch the file

    ckpt = srcad.load(tmp_path / "ckpt")
    resumed_params = {k: v.copy() for k, v in ckpt["params"].items()}
    fresh = getattr(srcad.optim, name)(resumed_params, lr=123.0)  # hyper-params come from ckpt
    fresh.load_state_dict(ckpt["opt"])
    assert fresh.hyperparams == opt.hyperparams
    resumed, _ = run_mlp_srcad(name, opts, resumed_params, batches, 60, start=25, opt=fresh)
    for a, b in zip(straight[25:], resumed):
        for k in a:
            assert np.array_equal(a[k], b[k]), k


def test_state_dict_contents_and_copies():
    params = {"w": np.ones(3)}
    opt = srcad.optim.Adam(params, lr=0.1, amsgrad=True)
    opt.step({"w": np.array([1.0, 2.0, 3.0])})
    sd = opt.state_dict()
    assert sd["optimizer"] == "Adam"
    assert sd["hyperparams"] == {
        "lr": 0.1,
        "betas": (0.9, 0.999),
        "eps": 1e-8,
        "weight_decay": 0,
        "amsgrad": True,
        "maximize": False,
    }
    assert set(sd["state"]["w"]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["state"]["w"]["step"] == 1
    before = sd["state"]["w"]["exp_avg"].copy()
    opt.step({"w": np.array([1.0, 2.0, 3.0])})
    assert np.array_equal(sd["state"]["w"]["exp_avg"], before)  # a snapshot, not a view
    sgd = srcad.optim.SGD({"w": np.ones(2)}, momentum=0.9)
    assert sgd.state_dict()["state"]["w"]["momentum_buffer"] is None


# --- in place, dtype, structure --------------------------------------------------------------


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_updates_in_place_keeping_dtype(name):
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    b = np.zeros(3, dtype=np.float32)
    nested = {"layer": [w, b], "scale": (np.ones(1, dtype=np.float64),)}
    opt = getattr(srcad.optim, name)(nested, lr=0.1, weight_decay=0.1)
    grads = {"layer": [np.ones_like(w), np.full(3, 2.0, np.float32)], "scale": (np.ones(1),)}
    kept = [g.copy() for g in (grads["layer"][0], grads["layer"][1], grads["scale"][0])]
    start = w.copy()
    opt.step(grads)
    assert nested["layer"][0] is w and nested["layer"][1] is b
    assert w.dtype == np.float32 and b.dtype == np.float32
    assert nested["scale"][0].dtype == np.float64
    assert not np.array_equal(w, start)
    # gradients are values: the optimiser never writes into them
    for g, k in zip((grads["layer"][0], grads["layer"][1], grads["scale"][0]), kept):
        assert np.array_equal(g, k)
    assert list(opt.state) == ["layer/0", "layer/1", "scale/0"]


def test_single_array_and_none_gradient():
    w = np.array([1.0, 2.0])
    opt = srcad.optim.SGD(w, lr=0.5)
    opt.step(np.array([1.0, 1.0]))
    assert np.array_equal(w, [0.5, 1.5])
    params = {"a": np.ones(2), "b": np.ones(2)}
    opt = srcad.optim.Adam(params)
    opt.step({"a": np.ones(2), "b": None})  # like a torch parameter whose .grad is None
    assert np.array_equal(params["b"], np.ones(2)) and opt.state["b"]["step"] == 0


def test_defaults_match_torch():
    import inspect

    for name in ("SGD", "Adam", "AdamW"):
        ours = inspect.signature(getattr(srcad.optim, name)).parameters
        theirs = inspect.signature(getattr(torch.optim, name)).parameters
        for arg, p in ours.items():
            assert arg in theirs, (name, arg)
            if arg != "params":
                assert p.default == theirs[arg].default, (name, arg)
                assert p.kind == theirs[arg].kind, (name, arg)


# --- argument validation ------------------------------------------------------------------------

BAD = [
    ("SGD", {"lr": -0.1}, "Invalid learning rate"),
    ("SGD", {"momentum": -0.5}, "Invalid momentum value"),
    ("SGD", {"weight_decay": -1.0}, "Invalid weight_decay value"),
    ("SGD", {"nesterov": True}, "Nesterov momentum requires"),
    ("SGD", {"momentum": 0.9, "dampening": 0.1, "nesterov": True}, "Nesterov momentum requires"),
    ("SGD", {"lr": "0.1"}, "lr must be a real number"),
    ("SGD", {"maximize": 1}, "maximize must be True or False"),
    ("Adam", {"lr": -1e-3}, "Invalid learning rate"),
    ("Adam", {"lr": float("nan")}, "Invalid learning rate"),
    ("Adam", {"eps": -1e-8}, "Invalid epsilon value"),
    ("Adam", {"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0"),
    ("Adam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1"),
    ("Adam", {"betas": 0.9}, "betas must be a pair"),
    ("Adam", {"weight_decay": -0.1}, "Invalid weight_decay value"),
    ("AdamW", {"amsgrad": "yes"}, "amsgrad must be True or False"),
    ("AdamW", {"betas": (0.9, 1.5)}, "Invalid beta parameter at index 1"),
]


@pytest.mark.parametrize("name,opts,message", BAD, ids=[f"{n}-{m}" for n, _, m in BAD])
def test_invalid_hyperparameters(name, opts, message):
    with pytest.raises(ValueError, match=message) as info:
        getattr(srcad.optim, name)({"w": np.ones(2)}, **opts)
    assert isinstance(info.value, srcad.SrcadError)
    if message.startswith(("Invalid", "Nesterov")):
        with pytest.raises(ValueError, match=message):  # torch says the same
            torch_opt(name, [torch.ones(2)], opts)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"w": [1.0, 2.0]}, "not a numpy array"),
        ({"w": np.arange(3)}, "only real floating-point"),
        ({}, "empty parameter list"),
        ({"a/b": np.ones(1), "a": {"b": np.ones(1)}}, "share the path"),
        ({"w": (shared := np.ones(2)), "v": [shared]}, "'v/0' is the same array as 'w'"),
    ],
)
def test_invalid_params(params, message):
    with pytest.raises(srcad.SrcadError, match=message):
        srcad.optim.SGD(params)


def test_read_only_params_rejected():
    w = np.ones(2)
    w.setflags(write=False)
    with pytest.raises(srcad.SrcadError, match="read-only"):
        srcad.optim.Adam({"w": w})


def test_step_checks_gradient_structure_and_shape():
    opt = srcad.optim.Adam({"w": np.ones(2), "b": np.ones(1)})
    with pytest.raises(srcad.SrcadError, match="missing \\['b'\\]"):
        opt.step({"w": np.ones(2)})
    with pytest.raises(srcad.SrcadError, match="unexpected \\['c'\\]"):
        opt.step({"w": np.ones(2), "b": np.ones(1), "c": np.ones(1)})
    with pytest.raises(srcad.SrcadError, match="has shape \\(3,\\)"):
        opt.step({"w": np.ones(3), "b": np.ones(1)})


def test_load_state_dict_checks():
    params = {"w": np.ones(2)}
    adam = srcad.optim.Adam(params)
    with pytest.raises(srcad.SrcadError, match="from SGD"):
        adam.load_state_dict(srcad.optim.SGD(params).state_dict())
    with pytest.raises(srcad.SrcadError, match="this state is from Adam"):
        srcad.optim.AdamW(params).load_state_dict(adam.state_dict())
    with pytest.raises(srcad.SrcadError, match="for parameters \\['v'\\]"):
        adam.load_state_dict(srcad.optim.Adam({"v": np.ones(2)}).state_dict())
    with pytest.raises(srcad.SrcadError, match="has shape \\(3,\\)"):
        adam.load_state_dict(srcad.optim.Adam({"w": np.ones(3)}).state_dict())
    ams = srcad.optim.Adam(params, amsgrad=True).state_dict()
    adam.load_state_dict(ams)  # the hyper-parameters come with the state, as in torch
    assert adam.hyperparams["amsgrad"] and "max_exp_avg_sq" in adam.state["w"]
    del ams["state"]["w"]["max_exp_avg_sq"]
    with pytest.raises(srcad.SrcadError, match="entries"):
        adam.load_state_dict(ams)
    bad = adam.state_dict()
    bad["hyperparams"]["lr"] = -1.0
    with pytest.raises(srcad.SrcadError, match="Invalid learning rate"):
        adam.load_state_dict(bad)
    with pytest.raises(srcad.SrcadError, match="expected a dict"):
        adam.load_state_dict([1, 2])


def test_docstring_examples():
    result = doctest.testmod(srcad.optim, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
