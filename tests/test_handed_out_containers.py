"""A list or dict a call hands out, changed with a differentiated value (issue 25's session of
2026-12-06, fourth: found by a front-door probe of a course-style layer library).

`model.parameters()` returning the layers' own dicts, then `for d, p in zip(model.parameters(),
params): d.update(p)` before `model.forward(X)`: Python changes the layers' dicts and the
forward reads the new arrays; srcad's source mode knew the list only as the call's result
and returned **zeros** for every parameter, silently (so did `d = net.first_params(); d["W"] =
W` and `ps[0]["W"] = W`). Now refused (refusals.py `_handed_out_by`) with a route srcad
follows in the hint -- the dict stored whole into its layer -- and tape mode, whose containers
are Python's own, differentiates them. A container the called method makes itself (`return
{"scale": 1.0}`), stored into and read through the local name, is followed as before.

The same with no call at all (session of 2026-12-06, fifth): `p = NET.layers[0].params;
p["W"] = W` -- the dict read from the attribute of a layer srcad reached as a constant (an
item of a list, a local bound to one, a loop's variable), or the layer's `__dict__` -- gave
**zeros**, silently, where `p = net.params` of a global object is followed; read only through
the alias, the gradient was right but the layer kept its old dict after the call (Python's
holds the new array). Refused too (`_handed_out_by`); the hint's route (a new dict stored
whole) works."""

from __future__ import annotations

import numpy as np
import pytest

import srcad


class Lin:
    def __init__(self, W):
        self.params = {"W": W}

    def attributes(self):
        return self.__dict__

    def forward(self, x):
        return x @ self.params["W"]


class Net:
    def __init__(self, layers):
        self.layers = layers

    def parameters(self):
        return [layer.params for layer in self.layers]

    def first_params(self):
        return self.layers[0].params

    def new_dict(self):
        return {"scale": 1.5}

    def forward(self, x):
        for layer in self.layers:
            x = np.tanh(layer.forward(x))
        return x


RNG = np.random.default_rng(0)
NET = Net([Lin(RNG.standard_normal((3, 3))), Lin(RNG.standard_normal((3, 3)))])
X = RNG.standard_normal((4, 3))
CFG = {"scale": 0.5}
LAYER0 = NET.layers[0]


def by_update_in_a_loop(params, X):
    for d, p in zip(NET.parameters(), params):
        d.update(p)
    return np.sum(NET.forward(X) ** 2)


def by_update_of_an_item(params, X):
    ps = NET.parameters()
    ps[0].update(params[0])
    ps[1].update(params[1])
    return np.sum(NET.forward(X) ** 2)


def by_store_into_an_item(params, X):
    ps = NET.parameters()
    ps[0]["W"] = params[0]["W"]
    ps[1]["W"] = params[1]["W"]
    return np.sum(NET.forward(X) ** 2)


def by_store_in_a_loop(params, X):
    for d, p in zip(NET.parameters(), params):
        d["W"] = p["W"]
    return np.sum(NET.forward(X) ** 2)


def by_store_into_a_held_dict(params, X):
    d = NET.first_params()
    d["W"] = params[0]["W"]
    return np.sum(NET.forward(X) ** 2)


def by_update_of_a_held_dict(params, X):
    d = NET.first_params()
    d.update(params[0])
    return np.sum(NET.forward(X) ** 2)


def by_its_own_dict(params, X):  # (the layer reached by the output only through NET)
    LAYER0.attributes().update(params=params[0])
    return np.sum(NET.forward(X) ** 2)


def _install(params):
    ps = NET.parameters()
    ps[0]["W"] = params[0]["W"]


def by_a_helpers_store(params, X):  # (the store in a function it calls)
    _install(params)
    return np.sum(NET.forward(X) ** 2)


def stored_whole(params, X):  # (the route the hint gives: followed)
    for layer, p in zip(NET.layers, params):
        layer.params = p
    return np.sum(NET.forward(X) ** 2)


def into_a_fresh_dict(params, X):  # (the method's own new dict, read through the name)
    for layer, p in zip(NET.layers, params):
        layer.params = p
    d = NET.new_dict()
    d["h"] = np.tanh(X @ params[0]["W"])
    return np.sum(NET.forward(X) ** 2) + np.sum(d["h"] * d["scale"])


def defaults(cfg):
    return dict(cfg)


def into_a_helpers_dict(params, X):  # (made from a config the output reads through it alone)
    d = defaults(CFG)
    d["W"] = params[0]["W"]
    return np.sum(np.tanh(X @ d["W"]) * d["scale"])


def by_an_alias_of_an_items_dict(params, X):
    p = NET.layers[0].params
    p["W"] = params[0]["W"]
    return np.sum(NET.forward(X) ** 2)


def by_an_alias_through_a_local_layer(params, X):
    layer = NET.layers[-1]
    p = layer.params
    p["W"] = params[1]["W"]
    return np.sum(NET.forward(X) ** 2)


def by_an_alias_in_a_loop(params, X):
    for layer, q in zip(NET.layers, params):
        p = layer.params
        p["W"] = q["W"]
    return np.sum(NET.forward(X) ** 2)


def by_update_of_an_alias(params, X):
    p = NET.layers[0].params
    p.update(params[0])
    return np.sum(NET.forward(X) ** 2)


def by_its_dunder_dict(params, X):
    d = NET.layers[0].__dict__
    d["params"] = params[0]
    return np.sum(NET.forward(X) ** 2)


def stored_whole_from_a_copy(params, X):  # (this group's hint: followed)
    layer = NET.layers[0]
    d = dict(layer.params)
    d["W"] = params[0]["W"]
    layer.params = d
    return np.sum(NET.forward(X) ** 2)


def through_the_alias_alone(params, X):  # (read through the alias only: the layer's dict
    # changes in Python, not in srcad's copy)
    p = NET.layers[0].params
    p["W"] = params[0]["W"]
    return np.sum(np.tanh(X @ p["W"]) ** 2)


def _params(seed=1):
    rng = np.random.default_rng(seed)
    return [{"W": rng.standard_normal((3, 3))} for _ in range(2)]


def _fd(f, params, i, key, idx, eps=1e-6):
    def at(delta):
        p = [dict(q) for q in params]
        p[i][key] = p[i][key].copy()
        p[i][key][idx] += delta
        return f(p, X)
    return (at(eps) - at(-eps)) / (2 * eps)


HANDED_OUT = [by_update_in_a_loop, by_update_of_an_item, by_store_into_an_item,
              by_store_in_a_loop, by_store_into_a_held_dict, by_update_of_a_held_dict,
              by_its_own_dict, by_a_helpers_store]
READ_FROM_AN_ATTRIBUTE = [by_an_alias_of_an_items_dict, by_an_alias_through_a_local_layer,
                          by_an_alias_in_a_loop, by_update_of_an_alias, by_its_dunder_dict,
                          through_the_alias_alone]


@pytest.mark.parametrize("f", HANDED_OUT + READ_FROM_AN_ATTRIBUTE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("fuse", [False, True])
def test_a_store_into_a_handed_out_container_is_refused_not_zero(f, fuse):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(f, fuse=fuse)(_params(), X)
    assert e.value.filename.endswith("test_handed_out_containers.py") and e.value.lineno
    assert "handed out" in str(e.value) or "walked container" in str(e.value) or \
        "read from the attribute" in str(e.value)
    if f in READ_FROM_AN_ATTRIBUTE:  # (the line of the store, and the hint's route)
        assert f.__code__.co_firstlineno + 1 < e.value.lineno
        assert "layer.params = d" in str(e.value)


@pytest.mark.parametrize("f", [f for f in HANDED_OUT + READ_FROM_AN_ATTRIBUTE
                               if f not in (by_store_in_a_loop, by_update_of_an_alias)],
                         ids=lambda f: f.__name__)  # (those: refused in tape mode too)
def test_tape_mode_follows_pythons_own_containers(f):
    params = _params(2)
    g = srcad.grad(f, mode="tape")(params, X)
    for i in (0, 1) if f in (by_update_in_a_loop, by_update_of_an_item, by_store_into_an_item,
                             by_an_alias_in_a_loop) else \
            (1,) if f is by_an_alias_through_a_local_layer else (0,):
        for idx in ((0, 1), (2, 0)):
            assert g[i]["W"][idx] == pytest.approx(_fd(f, params, i, "W", idx), rel=1e-5,
                                                   abs=1e-7)


@pytest.mark.parametrize("f", [stored_whole, into_a_fresh_dict, into_a_helpers_dict,
                               stored_whole_from_a_copy],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_the_routes_srcad_follows(f, mode):
    params = _params(3)
    value, g = srcad.value_and_grad(f, mode=mode)(params, X)
    assert value == pytest.approx(f(params, X), rel=1e-12)
    for i in (0, 1) if f is stored_whole else (0,):
        for idx in ((0, 1), (1, 2)):
            assert g[i]["W"][idx] == pytest.approx(_fd(f, params, i, "W", idx), rel=1e-5,
                                                   abs=1e-7)


def in_one_line(params, X):
    NET.layers[0].params["W"] = params[0]["W"]
    return np.sum(NET.forward(X) ** 2)


def test_a_store_through_an_item_in_one_line_names_a_route():
    """`NET.layers[0].params["W"] = W`: refused as before (it was "assignment into something
    other than a local array", with a hint about arrays); now the message names the
    container and the hint a route srcad follows (`stored_whole_from_a_copy`)."""
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(in_one_line)(_params(), X)
    assert "`NET.layers[0].params[...]`" in str(e.value)
    assert "layer = NET.layers[0]; d = dict(layer.params)" in str(e.value)
    assert e.value.lineno == in_one_line.__code__.co_firstlineno + 1
