"""Programs for tests/test_agfix.py: container outputs of srcad.vjp, transforms inside
transforms, and the other cases autograd answers (issue 23)."""

import operator

import numpy as np

import srcad


def tuple_out(x, w):
    return np.sum(np.tanh(x * w)), x ** 2 * w


def list_out(x):
    return [np.sin(x), x * 3.0]


def dict_out(x, w):
    return {"loss": np.sum(x * w), "aux": {"sq": x * x, "pair": (w, np.cos(x))}}


def uses_two_keys(d):
    return np.sum(np.sin(d["a"])) + np.sum(d["b"] ** 3)


def grad_of_dict_inside(d):
    g = srcad.grad(uses_two_keys)(d)
    return np.sum(np.sin(g["a"])) + np.sum(g["b"] ** 2)


def uses_two_items(s):
    return np.sum(np.sin(s[0]) * s[1])


def grad_of_list_inside(s):
    g = srcad.grad(uses_two_items)(s)
    return np.sum(g[0] ** 2) + np.sum(np.cos(g[1]))


def energy(x):
    return np.sum(np.sin(x) * x ** 2)


def value_and_grad_inside(x):
    v, g = srcad.value_and_grad(energy)(x)
    return v * np.sum(g ** 2)


def cube(y):
    return y ** 3 * 0.5


def calls_grad_of_scalar(x):
    return np.sin(srcad.grad(cube)(x)) * x


def grad_of_a_closure(w, b):
    def loss(x):
        return np.sum(np.tanh(x * w + b) ** 2)
    g = srcad.grad(loss)(np.linspace(-1.0, 1.0, 4))
    return np.sum(g * w) + np.sum(np.cos(g))


def grad_of_a_closure_two_args(w):
    scale = np.sum(w ** 2)

    def pair(a, c):
        return np.sum(np.sin(a * w) * c) * scale
    ga, gc = srcad.grad(pair, wrt=(0, 1))(0.5, 2.0)
    return ga * gc


def closure_called_with_a_keyword(w):
    def inner(y):
        return y * np.sum(w)
    return srcad.grad(inner)(y=2.0)


def reads_a_tree(p, x):
    return x * 2.0 + np.sum(p.get("a", 0.0)) * x


def sums_a_list(xs, x):
    total = x ** 2
    for v in xs:
        total = total + np.sum(v) * x
    return total


def items_sorted_by_itemgetter(d):
    t = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=operator.itemgetter(0), reverse=True)):
        t = t + np.sum(np.sin(v)) * (i + 2.0)
    return t


def items_and_values_as_lists(d):
    items = list(d.items())
    vals = list(d.values())
    return np.sum(items[0][1] * 2.0) + np.sum(vals[-1] ** 2) + np.sum(
        np.cos(d[sorted(d.keys())[1]]))


def dict_from_pairs(x):
    return dict([("p", x * 2.0), ("r", np.sin(x)), ("p", x ** 3)], q=np.cos(x))


def literal_with_a_key_twice(x):
    d = {"p": x * 2.0, "r": x, "p": x ** 3}  # noqa: F601 (the case: the later value wins)
    return np.sum(d["p"]) + np.sum(np.sin(d["r"])) * len(d)


def three(a, b, c, scale=1.0):
    return np.sum(np.sin(a) * b ** 2) * c * scale


def compares(p, x):
    return np.sum(p["w"] * x) > 0.5  # the return line the warning names


MASK = np.array([True, False, True, False])


def inverted_mask(x):
    keep = ~(x > 0.0)
    return np.sum(np.where(~MASK, x ** 2, 0.0)) + np.sum(np.where(keep, np.sin(x), x)) + (~3)


VAR_KW = {"axis": 1, "keepdims": True}


def spread_display(x):
    return np.sum(np.cross(x, x[::-1] * 2.0 + 1.0, **{"axis": 1}) ** 2) + np.sum(  # noqa: PIE804
        np.std(x, **{"axis": 0, "ddof": 1}))  # noqa: PIE804 (the case)


def spread_global(x):
    return np.sum(np.var(x, **VAR_KW))


def spread_global_as_hinted(x):
    return np.sum(np.var(x, axis=VAR_KW['axis'], keepdims=VAR_KW['keepdims']))


SCALE = 2.0


def scaled_cube(y):
    return SCALE * y ** 3


def calls_scaled(x):
    return np.sin(srcad.grad(scaled_cube)(x)) * x
