"""Draws with differentiated parameters: `np.random.normal(mu, sigma)`, `np.random.uniform(lo,
hi)`, `np.random.exponential(scale)` (a VAE's reparameterised sample, noise scaled by a
learned width). numpy's own draw is `loc + scale * z` of its standard normal (`low + (high -
low) * u`, `scale * e`), so srcad calls those in their place (srcad/pyfuncs.py) -- the very
numbers calling the function gives, with the gradient reaching the parameters. Refused in
both modes until 2026-12-04 (fourth session): "`np.random.normal` has no derivative rule".
"""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = ["source", "tape"]
R = np.random.default_rng(21)


def normal_draw(mu, log_sigma, size=None):
    np.random.seed(3)
    z = np.random.normal(mu, np.exp(log_sigma), size)
    return np.sum(np.tanh(z) ** 2)


def normal_by_keywords(mu, log_sigma):
    np.random.seed(4)
    z = np.random.normal(loc=mu, scale=np.exp(log_sigma), size=(3,) + np.shape(mu))
    return np.sum(z * z)


def uniform_draw(lo, width):
    np.random.seed(5)
    u = np.random.uniform(lo, lo + width * width)
    return np.sum(np.sin(u))


def exponential_draw(mu, log_scale):
    np.random.seed(6)
    e = np.random.exponential(np.exp(log_scale))
    return np.sum(mu * e)


def two_draws_in_a_loop(mu, log_sigma):
    """Two draws per trip: the same stream as numpy's, trip by trip."""
    np.random.seed(7)
    total = 0.0
    for _ in range(3):
        z = np.random.normal(mu, np.exp(log_sigma))
        u = np.random.uniform(0.0, np.exp(log_sigma))
        total = total + np.sum(z * u)
    return total


# (loc's shape, scale's shape, size): broadcast both ways, a size over them, scalars
SHAPES = [((4,), (4,), None), ((4,), (), None), ((), (4,), None), ((2, 1), (3,), None),
          ((), (), None), ((3,), (3,), (2, 3)), ((), (), (5,))]


def _args(a_shape, b_shape):
    a = R.standard_normal(a_shape) if a_shape else float(R.standard_normal())
    b = R.standard_normal(b_shape) * 0.3 if b_shape else float(R.standard_normal() * 0.3)
    return a, b


def _check(fn, args, mode, **kw):
    value, grad = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode)(*args, **kw)
    assert value == fn(*args, **kw)  # (the same draws, bit for bit)
    want = numerical_grad(lambda a, b: fn(a, b, **kw), args, wrt=(0, 1))
    for g, w in zip(grad, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("a_shape, b_shape, size", SHAPES)
def test_normal_draw(a_shape, b_shape, size, mode):
    _check(normal_draw, _args(a_shape, b_shape), mode, size=size)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [normal_by_keywords, uniform_draw, exponential_draw,
                                two_draws_in_a_loop])
def test_other_draws(fn, mode):
    _check(fn, _args((4,), (4,)), mode)


def test_the_draws_are_numpys():
    """The stand-ins draw what numpy's functions draw (the premise of the rows)."""
    from srcad import pyfuncs
    mu, sigma = np.linspace(-1, 1, 7), np.linspace(0.1, 2, 7)
    for ours, theirs, args in [(pyfuncs.random_normal, np.random.normal, (mu, sigma)),
                               (pyfuncs.random_uniform, np.random.uniform, (mu, mu + sigma)),
                               (pyfuncs.random_exponential, np.random.exponential, (sigma,))]:
        for size in (None, (3, 7)):
            np.random.seed(11)
            want = theirs(*args, size=size)
            np.random.seed(11)
            assert np.array_equal(ours(*args, size=size), want)


def negative_scale(mu):
    return np.sum(np.random.normal(mu, -1.0))


@pytest.mark.parametrize("mode", MODES)
def test_a_negative_scale_raises_as_numpy_does(mode):
    with pytest.raises(ValueError, match="scale < 0"):
        negative_scale(np.ones(3))
    with pytest.raises(ValueError, match="scale < 0"):
        srcad.grad(negative_scale, mode=mode)(np.ones(3))


# -- a numpy Generator's (or RandomState's) draws ------------------------------------------
# (`rng.normal(mu, sigma)` was refused; and a module's generator drawn from by the function
# moved twice in source mode's first call -- the shape probe drew from it too -- so the value
# was not the function's, silently, until 2026-12-04, fourth session)

RNG = np.random.default_rng(5)


def generator_made_here(mu, log_sigma):
    rng = np.random.default_rng(3)
    z = rng.normal(mu, np.exp(log_sigma))
    u = rng.uniform(mu, mu + 1.0, size=(2,) + np.shape(mu))
    e = rng.exponential(np.exp(log_sigma))
    return np.sum(z ** 2) + np.sum(np.sin(u)) + np.sum(e * mu)


def generator_passed(mu, log_sigma, rng):
    return np.sum(rng.normal(loc=mu, scale=np.exp(log_sigma)) ** 2)


def module_generator_drawn(mu, log_sigma):
    noise = RNG.standard_normal(np.shape(mu))
    return np.sum(RNG.normal(mu, np.exp(log_sigma)) ** 2) + np.sum(mu * noise)


class NoisyLayer:
    def __init__(self, W, seed):
        self.W = W
        self.rng = np.random.default_rng(seed)

    def __call__(self, x):
        return np.tanh(x @ self.W) + self.rng.normal(0.0, 0.1, size=(x.shape[0], 1))


def layer_holding_a_generator(W, x):
    return np.sum(NoisyLayer(W, 4)(x) ** 2)


def _fresh(fn):
    """fn called with a fresh module generator each time (the value is then a function of
    the arguments, for central differences)."""
    def call(*args):
        global RNG
        RNG = np.random.default_rng(5)
        return fn(*args)
    return call


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [generator_made_here, module_generator_drawn])
def test_generator_draws(fn, mode):
    global RNG
    args = _args((4,), (4,))
    t = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode)
    for _ in range(2):  # (the first call, which probes shapes, and a later one)
        RNG = np.random.default_rng(5)
        value, grad = t(*args)
        state = RNG.bit_generator.state
        assert value == _fresh(fn)(*args)
        assert state == RNG.bit_generator.state  # (the module's generator moved as by one call)
    want = numerical_grad(_fresh(fn), args, wrt=(0, 1))
    for g, w in zip(grad, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
def test_generator_passed_in(mode):
    args = _args((3,), (3,))
    value, grad = srcad.value_and_grad(generator_passed, wrt=(0, 1), mode=mode)(
        *args, np.random.default_rng(9))
    assert value == generator_passed(*args, np.random.default_rng(9))
    want = numerical_grad(lambda a, b: generator_passed(a, b, np.random.default_rng(9)), args,
                          wrt=(0, 1))
    for g, w in zip(grad, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
def test_a_layer_holding_a_generator(mode):
    W, x = R.standard_normal((3, 2)), R.standard_normal((5, 3))
    value, grad = srcad.value_and_grad(layer_holding_a_generator, mode=mode)(W, x)
    assert value == layer_holding_a_generator(W, x)
    np.testing.assert_allclose(grad, numerical_grad(layer_holding_a_generator, (W, x)),
                               rtol=1e-6, atol=1e-8)


def random_state_drawn(mu, log_sigma):
    rs = np.random.RandomState(2)
    return np.sum(rs.normal(mu, np.exp(log_sigma)) ** 2) + np.sum(rs.uniform(mu, 2.0))


def test_a_random_states_draws():
    """Source mode; tape mode refuses (its legacy generator is not shown as a Generator)."""
    _check(random_state_drawn, _args((4,), (4,)), "source")
    with pytest.raises(srcad.SrcadError):
        srcad.grad(random_state_drawn, mode="tape")(*_args((4,), (4,)))
