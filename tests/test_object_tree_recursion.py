"""Recursion over a tree of user objects: recursive neural networks over parse trees.

Socher-style recursive networks (cs224d's RNN / RNTN assignments and their many copies) walk
a parse tree of node objects -- ``node.isLeaf``, ``node.word``, ``node.left`` /
``node.right`` or ``node.children`` -- by a function or a method that calls itself on each
child. srcad follows recursion one level per call, specialised on what the call knows (its
ints, list lengths, tuple trees: frontend/recursion.py). On main at 986323c (front-door
probes of the session of 2026-12-06, seventh) a tree of *objects* was refused ("how deep it
goes is not known"), and so were a recursive method reading ``self.L`` after the function
stored it (``model.L = L``: the recursion then normalised srcad's own state wrapper,
state.py `state_given`, instead of the method) and a method whose leaf test is a flag
(``if node.isLeaf:``: the arm Python never takes at a leaf was followed, into a call on
``node.left`` -- None).

Now a node object the call is given is a static argument (its identity: one subroutine per
node, the tree's attributes read and guarded while the code is built), a function that
calls itself by name is known recursive from its first call, ``node.left is None``,
``node.is_leaf()`` (a method only returning such a test) and ``for c in node.children`` of
a leaf are decided per node, and the recursion restarts with the function itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(11)
D, V, C = 3, 4, 3


class Node:
    def __init__(self, label, word=None, left=None, right=None):
        self.label, self.word, self.left, self.right = label, word, left, right
        self.isLeaf = left is None
        self.children = [] if left is None else [left, right]

    def is_leaf(self):
        return self.left is None


def _leaf(word, label=0):
    return Node(label, word=word)


T1 = Node(1, left=_leaf(0), right=Node(0, left=_leaf(2, 1), right=_leaf(1, 2)))
T2 = Node(2, left=Node(1, left=_leaf(3), right=_leaf(0, 1)), right=_leaf(1))
TREES = [T1, T2]
L0 = RNG.standard_normal((D, V))
W0 = RNG.standard_normal((D, 2 * D)) * 0.5
WS0 = RNG.standard_normal((C, D))


# ---- module functions ----------------------------------------------------------------------
def encode(node, L, W):
    if node.left is None:
        return L[:, node.word]
    return np.tanh(W @ np.concatenate([encode(node.left, L, W), encode(node.right, L, W)]))


def encode_by_method_test(node, L, W):
    if node.is_leaf():
        return L[:, node.word]
    h = np.concatenate([encode_by_method_test(node.left, L, W),
                        encode_by_method_test(node.right, L, W)])
    return np.tanh(W @ h)


def encode_children(node, L, W):
    if not node.children:
        return L[:, node.word]
    return np.tanh(W @ np.concatenate([encode_children(c, L, W) for c in node.children]))


def tree_loss(L, W):
    return np.sum(encode(T1, L, W) ** 2)


def tree_loss_method_test(L, W):
    return np.sum(encode_by_method_test(T2, L, W) ** 2)


def tree_loss_children(L, W):
    return np.sum(encode_children(T1, L, W) ** 2)


def forest_loss(L, W):
    total = 0.0
    for t in TREES:
        total = total + np.sum(encode(t, L, W) ** 2)
    return total


def tree_loss_given(L, W, tree):
    return np.sum(encode(tree, L, W) ** 2)


# ---- a model's methods, as the cs224d RNTN -------------------------------------------------
class RNN:
    def __init__(self, L, W, Ws):
        self.L, self.W, self.Ws = L, W, Ws

    def forward(self, node):
        if node.isLeaf:
            h = self.L[:, node.word]
        else:
            h = np.maximum(self.W @ np.hstack([self.forward(node.left),
                                               self.forward(node.right)]), 0)
        return h

    def node_cost(self, node):
        s = self.Ws @ self.forward(node)
        s = s - np.max(s)
        p = np.exp(s) / np.sum(np.exp(s))
        cost = -np.log(p[node.label])
        for c in node.children:
            cost = cost + self.node_cost(c)
        return cost


MODEL = RNN(L0.copy(), W0.copy(), WS0.copy())


def model_forward(L, W):
    MODEL.L = L
    MODEL.W = W
    return np.sum(MODEL.forward(T1) ** 2)


def model_cost(L, W):
    MODEL.L, MODEL.W = L, W
    return sum(MODEL.node_cost(t) for t in TREES)


PROGRAMS = [tree_loss, tree_loss_method_test, tree_loss_children, forest_loss,
            model_forward, model_cost]


@pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_recursion_over_a_tree_of_objects(f, kw):
    args = (L0.copy(), W0.copy())
    g = srcad.grad(f, wrt=(0, 1), **kw)(*args)
    want = numerical_grad(f, args, wrt=(0, 1))
    for gi, wi in zip(g, want):
        np.testing.assert_allclose(gi, wi, rtol=1e-6, atol=1e-8)
    if f.__name__.startswith("model"):  # (the model keeps what the call stored)
        assert MODEL.L is args[0] or np.array_equal(MODEL.L, args[0])


def test_a_tree_given_as_an_argument_specialises_per_tree():
    g = srcad.grad(tree_loss_given, wrt=(0, 1))
    for tree in (T1, T2, T1):
        got = g(L0.copy(), W0.copy(), tree)
        want = numerical_grad(tree_loss_given, (L0.copy(), W0.copy(), tree), wrt=(0, 1))
        for gi, wi in zip(got, want):
            np.testing.assert_allclose(gi, wi, rtol=1e-6, atol=1e-8)


def test_a_tree_changed_between_calls_rebuilds_the_code():
    t = Node(0, left=_leaf(0), right=_leaf(1))

    def loss(L, W):
        return np.sum(encode(t, L, W) ** 2)

    g = srcad.grad(loss, wrt=(0, 1))
    g(L0.copy(), W0.copy())
    t.right = Node(1, left=_leaf(2), right=_leaf(3))  # (a deeper tree: the guards see it)
    got = g(L0.copy(), W0.copy())
    want = numerical_grad(loss, (L0.copy(), W0.copy()), wrt=(0, 1))
    for gi, wi in zip(got, want):
        np.testing.assert_allclose(gi, wi, rtol=1e-6, atol=1e-8)


def _random_tree(rng, depth):
    """A binary tree of `Node`s, leaves at most `depth` levels down (each inner node's
    children drawn as leaves or subtrees at random)."""
    if depth == 0 or rng.random() < 0.3:
        return _leaf(int(rng.integers(V)), int(rng.integers(C)))
    return Node(int(rng.integers(C)), left=_random_tree(rng, depth - 1),
                right=_random_tree(rng, depth - 1))


@pytest.mark.parametrize("seed", range(6))
def test_random_trees(seed):
    """Trees of other shapes and depths (a leaf alone, lopsided, full): each a
    specialisation of its own, its gradient against central differences."""
    rng = np.random.default_rng(seed)
    tree = _random_tree(rng, int(rng.integers(0, 5)))
    g = srcad.grad(tree_loss_given, wrt=(0, 1))(L0.copy(), W0.copy(), tree)
    want = numerical_grad(tree_loss_given, (L0.copy(), W0.copy(), tree), wrt=(0, 1))
    for gi, wi in zip(g, want):  # (central differences with h = 1e-4 through deep trees:
        np.testing.assert_allclose(gi, wi, rtol=1e-5, atol=1e-6)  # their own error ~1e-8)
    model = RNN(L0.copy(), W0.copy(), WS0.copy())

    def cost(L, W):
        model.L, model.W = L, W
        return model.node_cost(tree)

    got = srcad.grad(cost, wrt=(0, 1))(L0.copy(), W0.copy())
    want = numerical_grad(cost, (L0.copy(), W0.copy()), wrt=(0, 1))
    for gi, wi in zip(got, want):
        np.testing.assert_allclose(gi, wi, rtol=1e-5, atol=1e-6)
