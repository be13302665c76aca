"""An object's state read in a loop and set again there by a call, the object reached
through another one (``self.p.pos`` in a method's loop calling ``self.p.step(...)``).

A differentiable-physics world (`World.run`: particles stepped in a loop, each step setting
``self.vel`` and ``self.pos`` on the particle) gave **a wrong gradient, silently** on main at
986323c (relative error 0.66-0.75 against central differences, /tmp/probe/s15/p60.py and
p63.py of the session of 2026-12-06, seventh): srcad normalises a loop's body once, and the
particle's state carried out of `step` (state.py) was read, at the top of the body, as the
value from before the loop -- in every trip. A particle named by a global or a parameter
(``P.step(-0.5 * P.pos, dt)``) lives in a local of the loop (attrstate.py) and was, and is,
right. Now the pattern is refused at the loop, in source and tape mode (frontend/normalize.py
`carried_around`); the object-state fuzzer draws it (Net.iterate).
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad


class Particle:
    def __init__(self, pos, vel):
        self.pos, self.vel = pos, vel

    def step(self, force, dt):
        self.vel = self.vel + force * dt
        self.pos = self.pos + self.vel * dt


P = Particle(np.zeros(2), np.zeros(2))


class World:
    def __init__(self):
        self.p = P
        self.particles = [Particle(np.zeros(2), np.zeros(2)) for _ in range(2)]

    def run(self, n):
        for _ in range(n):
            self.p.step(-0.5 * self.p.pos, 0.1)
        return np.sum(self.p.pos)

    def run_local(self, n):
        p = self.p
        for _ in range(n):
            p.step(-0.5 * p.pos, 0.1)
        return np.sum(p.pos)

    def run_all(self, n):
        for _ in range(n):
            for p in self.particles:
                p.step(-0.5 * p.pos, 0.1)
        return np.sum([np.sum(p.pos) for p in self.particles])

    def run_global(self, n):
        for _ in range(n):
            P.step(-0.5 * P.pos, 0.1)
        return np.sum(P.pos)

    def run_twice(self):
        self.p.step(-0.5 * self.p.pos, 0.1)
        self.p.step(-0.5 * self.p.pos, 0.1)
        return np.sum(self.p.pos)


WORLD = World()


def through_self_p(v0):
    P.vel, P.pos = v0, np.zeros(2)
    return WORLD.run(3)


def through_a_local(v0):
    P.vel, P.pos = v0, np.zeros(2)
    return WORLD.run_local(3)


def every_particle(v0):
    for p, v in zip(WORLD.particles, v0):
        p.vel = v
        p.pos = np.zeros(2)
    return WORLD.run_all(4)


def named_by_its_global(v0):
    P.vel, P.pos = v0, np.zeros(2)
    return WORLD.run_global(3)


def written_out(v0):
    P.vel, P.pos = v0, np.zeros(2)
    return WORLD.run_twice()


V0 = np.array([0.7, -1.3])


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("f, v0", [(through_self_p, V0), (through_a_local, V0),
                                   (every_particle, np.array([[0.7, -1.3], [0.2, 0.5]]))],
                         ids=["self_p", "local", "every_particle"])
def test_state_read_around_a_loop_through_another_object_is_refused(f, v0, fuse):
    for mode in ("source", "tape"):  # (tape mode normalises the function the same way)
        with pytest.raises(srcad.SrcadError, match="read in this loop and set again") as e:
            srcad.grad(f, fuse=fuse, mode=mode)(v0.copy())
        assert "test_state_around_loops.py" in str(e.value)


@pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("f", [named_by_its_global, written_out], ids=lambda f: f.__name__)
def test_the_forms_srcad_follows(f, kw):
    g = srcad.grad(f, **kw)(V0.copy())
    np.testing.assert_allclose(g, numerical_grad(f, (V0.copy(),)), rtol=1e-6, atol=1e-8)
    assert np.array_equal(P.vel + 0.0, P.vel)  # (the particle keeps arrays, no Tensor)
