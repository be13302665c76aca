"""Random programs that keep their state on objects ("forward stores, the caller reads").

Layer classes in Neural Networks from Scratch's style return nothing from ``forward`` and
keep the result on the object (``self.output = ...``); the caller reads ``dense1.output``
afterwards, or ``layer.prev.output``, or ``self.layers[-1].output``; the differentiated
function sets weights on a layer (``dense1.W = W1``) that its methods then read. Before
b2a4a18 / 330f56f / e3e1bd8 srcad's source mode read such an attribute as the value an
*earlier plain call* had left on the object: a stale value and a zero or wrong gradient,
silently. This generator writes modules of small layer-like classes and a function
``f(x, ...)`` driving them; tests/test_fuzz_object_state.py checks srcad against the plain
function (see its docstring for the counts before and after those commits).

Each program (every name prefixed ``p<i>_``) has:

* ``Base`` (``__init__`` sets ``self.output = None`` and ``self.prev = None``) and two
  subclasses ``DenseA`` / ``DenseB`` of it, each ``forward(self, x)`` drawn from `FORWARDS`
  (weighted by `WEIGHTS`): storing ``self.output`` at top level, two attributes, twice
  (reading its own attribute back), through a local set in a branch on a constant
  (``self.squash``) or in a loop, in a branch on a constant or on the data, in a loop, or
  appending to ``self.cache`` and reading ``self.cache[-1]``, making ``self.cache`` again and
  appending in a loop, storing in a ``while`` loop, calling a helper method that stores
  ``self.z`` and ``self.output`` (after its own store, or alone); ``score(self)`` reads
  ``self.output`` that ``forward`` set, ``forward_prev(self)`` reads ``self.prev.output``,
  ``remember(self)`` appends ``self.output`` to the cache;
* ``Act(Base)`` storing ``self.output = tanh(x) * 1.5`` (or a sine) and ``self.inputs``;
* ``Net`` holding a list of layers (linking ``prev`` in ``__init__``), with ``forward``
  (``self.layers[0].forward(x)``, then each ``layer.forward(layer.prev.output)``, returning
  ``self.layers[-1].output``) and ``forward_loop`` (a loop variable; it stores
  ``self.output``);
* module-level instances ``L1`` (DenseA), ``A1`` (Act), ``L2`` (DenseB), ``NET`` =
  Net([L1, A1, L2]) sharing them, and ``L3`` (DenseA, its ``prev`` set to ``L1``); the
  weights of the layers the function does not set are kept on them;
* ``f(x, [W1, [W2]])``: weights set from the arguments first (``L1.W = W1``,
  ``NET.layers[0].W = W1``, ``layer = NET.layers[2]; layer.W = W2``; both at once by a loop
  over a module's list of the two layers: ``for layer, W in zip(PAIR_L1_L2, (W1, W2))``,
  ``enumerate``, ``enumerate(zip(...))``, a zip with a longer list; through the layers'
  ``weight`` property, whose setter stores ``self.W``, read back by its getter in the sum
  now and then; ``setattr(L1, 'W', W1)``; and by routes srcad does not follow, which it must
  refuse -- ``L1.__dict__['W'] = W1``, ``L1.__dict__.update(W=W1)``, ``object.__setattr__``,
  ``np.copyto(L1.W, W1)``, ``setattr`` with a name a loop gives, the object's ``__dict__``
  handed out by its own method and stored into (``L1.attributes()['W'] = W1``, ``.update``),
  read by a second name from a layer reached as an item, a local or a loop's variable and
  stored into (``d = NET.layers[0].__dict__; d['W'] = W1``), the layer's array itself written
  in place through a second name (``w = L1.W; w[:] = W1``, ``w *= 0.0; w += W1``):
  a zero gradient, silently,
  before), then 1-4 steps in
  random order -- a layer's ``forward`` called and what it stored read back through the global
  name or ``NET.layers[i]`` (also ``.z``, ``.inputs``), ``L3.forward_prev()`` (and
  ``L3.prev.output``), ``NET.forward`` / ``NET.forward_loop`` / f's own loop over
  ``NET.layers`` (read through ``NET.output``, ``NET.layers[-1].output``, the loop variable),
  ``score()``, ``remember()`` and ``cache[-1]`` -- summed into a scalar.

Every read of an attribute in `f` reads what this call stored (or what ``__init__`` kept):
the plain function is a function of its arguments, whatever the objects held before.
`Prog.features` names the forms a program has (test_fuzz_object_state.KNOWN_OPEN reads them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tests import fuzz_programs as FP

# forward(self, x) bodies: (name, lines, attributes set besides output/inputs)
FORWARDS = {
    "top": ["self.output = np.tanh(x @ self.W + self.b)"],
    "top_two": ["z = x @ self.W", "self.z = z", "self.output = np.sin(z) + self.b"],
    "twice": ["self.output = x @ self.W", "self.output = np.tanh(self.output + self.b)"],
    "local_branch": ["z = x @ self.W + self.b", "if self.squash:", "    h = np.tanh(z)",
                     "else:", "    h = z * 0.5", "self.output = h"],
    "branch_const": ["z = x @ self.W + self.b", "if self.squash:",
                     "    self.output = np.tanh(z)", "else:", "    self.output = z * 0.5"],
    "branch_data": ["z = x @ self.W + self.b", "if np.sum(x) > 0.0:",
                    "    self.output = np.tanh(z)", "else:", "    self.output = np.sin(z)"],
    "loop": ["h = x", "for i in range(2):", "    self.output = np.tanh(h @ self.W) + self.b",
             "    h = self.output * 0.5"],
    "local_loop": ["h = x", "for i in range(2):", "    h = np.tanh(h @ self.W + self.b)",
                   "self.output = h"],
    "cache": ["z = np.tanh(x @ self.W)", "self.cache.append(z)",
              "self.output = self.cache[-1] * 0.5 + self.b"],
    # (session of 2026-12-03: a list made again per call, a while loop, a helper method
    # storing the output, the forward's own store then the helper's)
    "fresh_cache": ["self.cache = []", "h = x", "for i in range(2):",
                    "    h = np.tanh(h @ self.W)", "    self.cache.append(h)",
                    "self.output = self.cache[-1] + self.b"],
    "while": ["h = x", "i = 0", "while i < 2:", "    self.output = np.tanh(h @ self.W) + self.b",
              "    h = self.output * 0.5", "    i += 1"],
    "helper": ["self._finish(x @ self.W)"],
    "own_then_helper": ["self.output = x @ self.W", "self._finish(self.output * 0.5)"],
    # (session of 2026-12-03, later: a dict kept on the object, stored into by key -- a
    # layer's cache of its forward values; through a second name; by .update; read by .get)
    "dict_cache": ["self.saved['z'] = x @ self.W + self.b",
                   "self.output = np.tanh(self.saved['z'])"],
    "dict_alias": ["s = self.saved", "s['x'] = x", "s['z'] = np.tanh(x @ self.W)",
                   "self.output = s['z'] + self.b"],
    "dict_update": ["self.saved.update({'z': np.tanh(x @ self.W)})",
                    "self.output = self.saved.get('z') * 0.5 + self.b"],
    # (session of 2026-12-03, third: a list and a dict the *module* keeps, stored into by the
    # forward -- `history.append(h)`, `CACHE['z'] = z`: frontend/kept_globals.py)
    "global_log": ["z = np.tanh(x @ self.W)", "LOG.append(z)", "self.output = z * 0.5 + self.b"],
    "global_saved": ["SAVED['z'] = x @ self.W", "self.output = np.tanh(x @ self.W) + self.b"],
    # (session of 2026-12-06, ninth: a mode a dict the layer keeps says, which the function
    # sets first -- cs231n's `bn_param["mode"] = mode` -- through the layer, a loop's
    # variable, a second name or a module's list of the dicts: `set_modes`)
    "moded": ["z = x @ self.W + self.b", "if self.cfg['mode'] == 'train':",
              "    self.output = np.tanh(z)", "else:", "    self.output = z * 0.5"],
    # (session of 2026-12-07, thirteenth: an array made on the object and filled in place --
    # a from-scratch RNN's `self.states[:, t] = ...` --, by rows in a loop, through a local
    # name holding it too, and held by a second attribute, which srcad must refuse or follow)
    "filled": ["self.rows = np.zeros((2, 3))", "for i in range(2):",
               "    self.rows[i] = np.tanh(x @ self.W) * (i + 1.0)",
               "self.output = self.rows[0] + self.rows[1] * 0.5 + self.b"],
    "filled_alias": ["h = np.zeros(3)", "self.z = h", "self.z[0] = np.sum(x @ self.W)",
                     "self.z[1:] += np.tanh(x[1:])",
                     "self.output = h * 0.5 + np.sin(x @ self.W) + self.b"],
    "filled_shared": ["self.rows = np.zeros(3)", "self.last = self.rows",
                      "self.rows[2] = np.sum(x * x)",
                      "self.output = self.last + np.tanh(x @ self.W) + self.b"],
}
Z_SET = {"top_two", "helper", "own_then_helper", "filled_alias"}  # forwards that also set .z
CACHES = {"cache", "fresh_cache"}  # forwards that append to self.cache
SAVES = {"dict_cache", "dict_alias", "dict_update"}  # forwards that store self.saved['z']
# how often each is drawn
WEIGHTS = {"top": 6, "top_two": 2, "twice": 2, "local_branch": 2, "branch_const": 1,
           "branch_data": 1, "loop": 1, "local_loop": 1, "cache": 2, "fresh_cache": 1,
           "while": 1, "helper": 1, "own_then_helper": 1, "dict_cache": 2, "dict_alias": 1,
           "dict_update": 1, "global_log": 1, "global_saved": 1, "moded": 2, "filled": 2,
           "filled_alias": 1, "filled_shared": 1}
KEPT = ("LOG", "SAVED")  # the module-level list and dict (prefixed like every name)


def _fmt(a) -> str:
    return "np.array(" + np.array2string(np.asarray(a), precision=3, separator=", ",
                                          floatmode="fixed").replace("\n", "") + ")"


@dataclass
class Prog:
    name: str
    source: str
    n_weights: int  # W arguments after x
    objects: tuple = ("L1", "A1", "L2", "L3", "NET", "TALLY") + KEPT
    forwards: tuple = ()
    steps: list = field(default_factory=list)
    features: frozenset = frozenset()

    def make_args(self, seed):
        rng = np.random.default_rng(seed)
        args = [rng.uniform(-1.0, 1.0, 3)]
        args += [rng.uniform(-0.8, 0.8, (3, 3)) for _ in range(self.n_weights)]
        return tuple(args)


class Gen:
    def __init__(self, ch, index):
        self.ch, self.p = ch, f"p{index}_"
        self.lines: list[str] = []
        self.terms: list[str] = []
        self.called: set[str] = set()  # objects whose forward ran in this call of f
        self.cached: set[str] = set()  # layers whose cache got an item in this call
        self.n = 0
        self.steps: list[str] = []
        self.features: set[str] = set()  # (test_fuzz_object_state.KNOWN_OPEN reads them)

    def fresh(self, stem="h"):
        self.n += 1
        return f"{stem}{self.n}"

    def emit(self, text):
        self.lines.append("    " + text)

    # -- the classes ---------------------------------------------------------------------------
    def classes(self) -> str:
        p, ch = self.p, self.ch
        options = [(w, k) for k, w in WEIGHTS.items()]
        fa, fb = ch.weighted(options), ch.weighted(options)
        self.fwd = {"A": fa, "B": fb}
        self.sets_z = {"L1": fa in Z_SET, "L3": fa in Z_SET, "L2": fb in Z_SET}
        self.caches = {"L1": fa in CACHES, "L3": fa in CACHES, "L2": fb in CACHES}
        self.saves = {"L1": fa in SAVES, "L3": fa in SAVES, "L2": fb in SAVES}

        def dense(cls, body):
            inner = "\n".join("        " + s for s in ["self.inputs = x"] + FORWARDS[body])
            inner = inner.replace("LOG.", f"{p}LOG.").replace("SAVED[", f"{p}SAVED[")
            return f'''
class {p}{cls}({p}Base):
    kind = "dense"

    def __init__(self, W, b, squash):
        super().__init__()
        self.W = W
        self.b = b
        self.squash = squash
        self.cache = []
        self.saved = {{}}
        self.cfg = {{"mode": "test"}}

    def forward(self, x):
{inner}

    @property
    def weight(self):
        return self.W

    @weight.setter
    def weight(self, v):
        self.W = v

    def stash(self):
        self.saved['out'] = self.output * 1.0

    def forward_prev(self):
        self.forward(self.prev.output)

    def score(self):
        return np.sum(np.tanh(self.output) * self.b)

    def remember(self):
        self.cache.append(self.output * 1.0)

    def _finish(self, z):
        self.z = z
        self.output = np.tanh(z) + self.b
'''
        rng = np.random.default_rng(ch.int(0, 10 ** 6))

        def w():
            return _fmt(rng.uniform(-0.8, 0.8, (3, 3)))

        def b():
            return _fmt(rng.uniform(-0.5, 0.5, 3))

        act = ch.pick(("np.tanh(x) * 1.5", "np.sin(x) + x * 0.5"))
        return f'''
class {p}Base:
    kind = "layer"

    def __init__(self):
        self.output = None
        self.prev = None
        self.trainable = not isinstance(self, {p}Act)

    def attributes(self):
        return self.__dict__

    def layer_name(self):
        return self.__class__.__name__

{dense("DenseA", fa)}
{dense("DenseB", fb)}

class {p}Act({p}Base):
    def forward(self, x):
        self.inputs = x
        self.output = {act}

    def forward_gain(self, x, gain):
        self.inputs = x
        self.output = {act} * gain


class {p}Net:
    def __init__(self, layers):
        self.layers = layers
        self.named = {{f"l{{i}}": layer for i, layer in enumerate(layers)}}
        for i, layer in enumerate(layers):
            layer.prev = layers[i - 1] if i > 0 else None
            setattr(self, f"l{{i}}", layer)

    def __getitem__(self, i):
        return self.layers[i]

    def parameters(self):
        for layer in self.layers:
            if isinstance(layer, ({p}DenseA, {p}DenseB)):
                yield layer

    def __iter__(self):
        return iter(self.layers)

    def __len__(self):
        return len(self.layers)

    def forward_iter(self, x):
        h = x
        for layer in self:
            layer.forward(h)
            h = layer.output
        return h

    def forward_named(self, x):
        h = x
        for name, layer in self.named.items():
            layer.forward(h)
            h = layer.output
        return h

    def forward_keyed(self, x):
        h = x
        for name, layer in self.named.items():
            if "1" in name or name.startswith("act"):
                layer.forward_gain(h, 0.5)
            else:
                layer.forward(h)
            h = layer.output
        return h

    def iterate(self, x):
        self.layers[0].forward(x)
        for _ in range(2):
            self.layers[0].forward(self.layers[0].output * 0.5)
        return self.layers[0].output

    def forward_getattr(self, x):
        h = x
        for i in range(len(self.layers)):
            layer = getattr(self, f"l{{i}}")
            layer.forward(h)
            h = layer.output
        return h

    def forward(self, x):
        self.layers[0].forward(x)
        for layer in self.layers[1:]:
            layer.forward(layer.prev.output)
        return self.layers[-1].output

    def forward_loop(self, x):
        h = x
        for layer in self.layers:
            layer.forward(h)
            h = layer.output
        self.output = h

    def set_weights(self, Wa, Wb):
        self.layers[0].W = Wa
        self.layers[2].W = Wb

    def set_weights_loop(self, Ws):
        for layer, W in zip([self.layers[0], self.layers[-1]], Ws):
            layer.W = W

    def set_first(self, W):
        self.layers[0].W = W

    def set_last(self, W):
        layer = self.layers[-1]
        layer.W = W


{p}L1 = {p}DenseA({w()}, {b()}, {ch.pick(("True", "False"))})
{p}A1 = {p}Act()
{p}L2 = {p}DenseB({w()}, {b()}, {ch.pick(("True", "False"))})
{p}NET = {p}Net([{p}L1, {p}A1, {p}L2])
{p}L3 = {p}DenseA({w()}, {b()}, {ch.pick(("True", "False"))})
{p}L3.prev = {p}L1
{p}LOG = []
{p}SAVED = {{}}
{p}GH = np.zeros(3)


class {p}Counter:
    made = 0

    def __init__(self, scale):
        {p}Counter.made += 1
        self.scale = scale * {p}Counter.made

    def __call__(self, v):
        {p}Counter.made += 1
        return np.tanh(v) * self.scale


class {p}Tally:
    def __init__(self):
        self.total = 0.0
        self.stats = {{"n": 0.0}}

    def add(self, v):
        self.stats["n"] += np.sum(np.tanh(v)) * 0.5


{p}TALLY = {p}Tally()


def {p}read_gh():
    return np.sin({p}GH) * 2.0


{p}MODEL = {{"net": {p}NET, "layers": [{p}L1, {p}A1, {p}L2], "lr": 0.1, "name": "tiny"}}
{p}CFGS = [{p}L1.cfg, {p}L2.cfg, {p}L3.cfg]
{p}PAIR_L1_L2 = [{p}L1, {p}L2]
{p}PAIR_L2_L1 = [{p}L2, {p}L1]
{p}PAIR_L1_L3 = [{p}L1, {p}L3]
{p}PAIR_L3_L2 = [{p}L3, {p}L2]
'''

    # -- the function's steps ------------------------------------------------------------------
    def obj(self, name) -> str:
        return self.p + name

    def via(self, name) -> str:
        """An expression for the layer `name`: its global, or through NET.layers (or NET's
        `__getitem__`, or its dict of named layers)."""
        index = {"L1": 0, "A1": 1, "L2": 2}.get(name)
        if index is not None and self.ch.flag(0.25):
            self.features.add("via layers")
            at = self.ch.pick((index, index - 3))
            # (session of 2026-12-06, seventh: `NET[i]` of a __getitem__ handing over to the
            # list, `NET.named['l0']` of a dict of the layers)
            # (session of 2026-12-07: a module's dict holding the net and its layers beside
            # a number and a string, `.get` of the dict of named layers -- refused before)
            e = self.ch.weighted([(4, f"{self.p}NET.layers[{at}]"),
                                  (1, f"{self.p}NET[{at}]"),
                                  (1, f"{self.p}NET.named['l{index}']"),
                                  (1, f"getattr({self.p}NET, 'l{index}')"),
                                  (1, f"{self.p}MODEL['layers'][{at}]"),
                                  (1, f"{self.p}MODEL['net'].layers[{at}]"),
                                  (1, f"{self.p}NET.named.get('l{index}')")])
            if "MODEL" in e or ".get(" in e:
                self.features.add("via model dict")
            return e
        return self.obj(name)

    def read_back(self, name) -> str:
        """A read of what layer `name` just stored (and maybe more of it)."""
        ch = self.ch
        e = f"{self.via(name)}.output"
        if name != "A1" and self.sets_z[name] and ch.flag(0.3):
            e = f"({e} + np.tanh({self.via(name)}.z) * 0.5)"
        if ch.flag(0.25):
            self.terms.append(f"np.sum({self.via(name)}.inputs * 0.25)")
        if name != "A1" and self.saves[name] and ch.flag(0.4):
            self.features.add("read saved")
            e = f"({e} * {self.via(name)}.saved['z'])"
        return e

    def step_call(self, cur):
        ch = self.ch
        name = ch.pick(("L1", "A1", "L2", "L3"))
        self.emit(f"{self.via(name)}.forward({cur})")
        self.called.add(name)
        if name != "A1" and self.caches[name]:
            self.cached.add(name)
        self.steps.append(f"call {name}")
        return self.read_back(name)

    def step_prev(self, cur):
        """L3.forward_prev() reads L1.output: L1 must have run in this call."""
        if "L1" not in self.called:
            self.emit(f"{self.via('L1')}.forward({cur})")
            self.called.add("L1")
        self.emit(f"{self.obj('L3')}.forward_prev()")
        self.features.add("prev")
        self.called.add("L3")
        if self.caches["L3"]:
            self.cached.add("L3")
        self.steps.append("prev")
        return self.ch.pick((f"{self.obj('L3')}.output", f"{self.obj('L3')}.prev.output * "
                             f"0.5 + {self.obj('L3')}.output"))

    def step_net(self, cur):
        ch = self.ch
        form = ch.weighted([(2, "forward"), (2, "loop_method"), (2, "loop_here"),
                            # (session of 2026-12-06, seventh: the layers walked through
                            # Net's __iter__ / __getitem__ / __len__, a dict of them, a copy
                            # of the list, a filter of it -- zeros, silently, where a weight
                            # was set on a layer first)
                            (1, "iter_method"), (1, "named_method"), (1, "getattr_method"),
                            # (session of 2026-12-07: the call picked by a test on the key --
                            # both were code for every layer, refused, before)
                            (1, "keyed_method"),
                            (1, "iterate_method"),
                            (1, "iter_here"),
                            (1, "index_here"), (1, "copy_here"), (1, "named_here"),
                            (1, "filter_here")])
        net = self.obj("NET")
        # (Net's `iterate` runs its first layer alone: only L1 has an output after it -- a
        # `score L2` after it was a program Python itself fails, slow seed 114)
        ran = ("L1",) if form == "iterate_method" else ("L1", "A1", "L2")
        self.called.update(ran)
        for name in ("L1", "L2"):
            if name in ran and self.caches[name]:
                self.cached.add(name)
        self.steps.append(f"net {form}")
        self.features.add(f"net {form}")
        if form == "forward":
            h = self.fresh()
            self.emit(f"{h} = {net}.forward({cur})")
            return ch.pick((h, f"{net}.layers[-1].output", f"{self.obj('L2')}.output"))
        if form == "loop_method":
            self.emit(f"{net}.forward_loop({cur})")
            return ch.pick((f"{net}.output", f"{net}.layers[-1].output * {net}.output"))
        if form == "iterate_method":  # (session of 2026-12-06, seventh: a layer's state read
            # in a loop of Net's method, reached as `self.layers[0]`, set again by its
            # forward -- the value from before the loop in every trip, silently, before)
            h = self.fresh()
            self.emit(f"{h} = {net}.iterate({cur})")
            self.called.add("L1")
            return ch.pick((h, f"{net}.layers[0].output * {h}"))
        if form in ("iter_method", "named_method", "getattr_method", "keyed_method"):
            h = self.fresh()
            self.emit(f"{h} = {net}.forward_{form.split('_')[0]}({cur})")
            return ch.pick((h, f"{net}.layers[-1].output + {h}"))
        h = self.fresh()
        self.emit(f"{h} = {cur}")
        if form == "index_here":
            i = self.fresh("i")
            self.emit(f"for {i} in range(len({ch.pick((net, f'{net}.layers'))})):")
            layer = ch.pick((f"{net}[{i}]", f"{net}.layers[{i}]"))
            self.emit(f"    {layer}.forward({h})")
            self.emit(f"    {h} = {layer}.output")
            return ch.pick((h, f"{net}.layers[{ch.int(0, 2)}].output + {h}"))
        self.emit({"loop_here": f"for layer in {net}.layers:",
                   "iter_here": f"for layer in {net}:",
                   "copy_here": "for layer in " + ch.pick((
                       f"list({net}.layers)", f"tuple({net}.layers)", f"{net}.layers.copy()",
                       f"list({net})")) + ":",
                   "named_here": ch.pick((f"for name, layer in {net}.named.items():",
                                          f"for layer in {net}.named.values():")),
                   "filter_here": "for layer in " + ch.pick((
                       f"filter(None, {net}.layers)", f"[*{net}.layers]",
                       f"sorted({net}.layers, key=id)")) + ":"}[form])
        self.emit(f"    layer.forward({h})")
        self.emit(f"    {h} = layer.output")
        return ch.pick((h, f"{net}.layers[{ch.int(0, 2)}].output + {h}"))

    def step_score(self, cur):
        done = sorted(n for n in self.called if n != "A1")
        if not done:
            return self.step_call(cur)
        name = self.ch.pick(done)
        self.terms.append(f"{self.via(name)}.score()")
        self.steps.append(f"score {name}")
        return None

    def step_remember(self, cur):
        done = sorted(n for n in self.called if n != "A1")
        if not done:
            return self.step_call(cur)
        name = self.ch.pick(done)
        self.emit(f"{self.via(name)}.remember()")
        self.steps.append(f"remember {name}")
        self.features.add("remember")
        self.cached.add(name)
        return f"{self.via(name)}.cache[-1] * 0.75"

    def step_stash(self, cur):
        done = sorted(n for n in self.called if n != "A1")
        if not done:
            return self.step_call(cur)
        name = self.ch.pick(done)
        self.emit(f"{self.via(name)}.stash()")
        self.steps.append(f"stash {name}")
        self.features.add("stash")
        return f"{self.via(name)}.saved['out'] * 0.75"

    def step_kept(self, cur):
        """A store into the module's list or dict (`LOG.append(h)`, `SAVED['h'] = h`,
        `.update`, `.extend`, or by a second name: `k = SAVED; k['h'] = h`, `k = LOG; k +=
        [h]`), once in a while read back in the same call -- which srcad refuses at the read
        (frontend/kept_globals.py; it gave a zero gradient before)."""
        ch = self.ch
        log, saved = self.p + "LOG", self.p + "SAVED"
        form = ch.pick(("append", "setitem", "update", "extend", "alias setitem",
                        "alias append", "alias extend"))
        alias = self.fresh("kept")  # (session of 2026-12-06, fifth: by a second name, the
        # module's container itself -- zeros where it was read back, before)
        self.emit({"append": f"{log}.append({cur} * 0.5)",
                   "setitem": f"{saved}['h'] = {cur}",
                   "update": f"{saved}.update(h={cur} * 2.0)",
                   "extend": f"{log}.extend([{cur}, np.tanh({cur})])",
                   "alias setitem": f"{alias} = {saved}",
                   "alias append": f"{alias} = {log}",
                   "alias extend": f"{alias} = {log}"}[form])
        if form.startswith("alias"):
            # (`k = LOG; k += [n]`: Python's `+=` extends the module's list; srcad rebound k
            # to a new list -- the list left as it was, zeros where it was read back, before
            # the session of 2026-12-07, twelfth; a value with a gradient was refused)
            self.emit({"alias setitem": f"{alias}['h'] = {cur}",
                       "alias append": f"{alias}.append({cur} * 0.5)",
                       "alias extend": f"{alias} += [{cur}.shape[0] * 0.5]"}[form])
            if form == "alias extend":  # (a number in the list: no read of it as the next h)
                self.steps.append("kept extend by a second name")
                self.features.add("kept store")
                return None
            form = form.split()[1]
        self.steps.append(f"kept {form}")
        self.features.add("kept store")
        if ch.flag(0.15):
            self.features.add("kept read")
            return f"{log}[-1]" if form in ("append", "extend") else f"{saved}['h'] * 0.5"
        return None

    # -- the program -----------------------------------------------------------------------------
    def function(self):
        ch = self.ch
        n_w = ch.weighted([(3, 0), (2, 1), (1, 2)])
        params = ["x"] + [f"W{k + 1}" for k in range(n_w)]
        targets = ch.pick((("L1", "L2"), ("L2", "L1"), ("L1", "L3"), ("L3", "L2")))
        order = list(range(n_w))
        if n_w == 2 and ch.flag(0.5):
            order.reverse()
        if n_w == 2 and ch.flag(0.35):  # (both by one loop over a module's list of layers)
            self.set_weights_by_loop(targets)
        else:
            for k in order:  # weights set before any step (a step may reach any layer)
                self.set_weight(f"W{k + 1}", targets[k])
        if ch.flag(0.3):
            self.set_modes()
        cur = "x"
        for _ in range(ch.int(1, 3) + ch.flag(0.3)):
            step = ch.weighted([(8, self.step_call), (2, self.step_prev), (3, self.step_net),
                                (2, self.step_score), (1, self.step_remember),
                                (1, self.step_stash), (1, self.step_kept),
                                (1, self.step_global), (1, self.step_spliced)])
            if "net loop_here" in self.features:
                self.features.add("after loop_here")
            out = step(cur)
            if out is not None:
                h = self.fresh()
                self.emit(f"{h} = {out}")
                cur = h
                if ch.flag(0.5):
                    self.terms.append(f"np.sum(np.tanh({h}) * x)")
        self.terms.append(f"np.sum({cur} * {cur})")
        if ch.flag(0.3):  # (session of 2026-12-07, fifteenth: a weight read back by the
            # layer's global itself, at the top level -- after `object.__setattr__` or a loop
            # srcad runs as written, the value the call began with and a gradient of zeros
            # before: frontend/unknown_writes.py)
            layer = self.obj(ch.pick(targets[:n_w] or targets))
            self.terms.append(f"np.sum({layer}.W * {layer}.b)")
            self.features.add("weight read here")
        self.emit(f"return {' + '.join(self.terms)}")
        if "global" in self.features:  # (declared first: Python wants it before any use)
            self.lines.insert(0, f"    global {self.p}GH")
        return f"def {self.p}f({', '.join(params)}):\n" + "\n".join(self.lines), n_w

    def set_modes(self):
        """The layers' mode set to "train" before any step, as cs231n's `loss` sets each
        `bn_param["mode"]`: a store into a dict a layer keeps, by a loop over the layers or
        over a module's list of the dicts, by a second name, through the layer, or under a
        test of the layer's flag. Dropped by source mode (a silent wrong gradient, and the
        dict left "test" after the call) before the session of 2026-12-06, ninth."""
        p, form = self.p, self.ch.pick(("layers", "dicts", "alias", "attribute", "flag"))
        if form == "layers":
            self.emit(f"for layer in ({p}L1, {p}L2, {p}L3):")
            self.emit("    layer.cfg['mode'] = 'train'")
        elif form == "dicts":
            self.emit(f"for c in {p}CFGS:")
            self.emit("    c['mode'] = 'train'")
        elif form == "alias":
            c = self.fresh("c")
            self.emit(f"{c} = {p}{self.ch.pick(('L1', 'L2', 'L3'))}.cfg")
            self.emit(f"{c}['mode'] = 'train'")
        elif form == "attribute":
            self.emit(f"{p}{self.ch.pick(('L1', 'L2', 'L3'))}.cfg['mode'] = 'train'")
        else:
            self.emit(f"for layer in {p}NET.layers:")
            self.emit("    if layer.trainable:")
            self.emit("        layer.cfg['mode'] = 'train'")
        self.features.add(f"modes {form}")

    def step_spliced(self, cur):
        """State a spliced call leaves on an object the module keeps -- a class counter, a
        module object's running total -- read after it: a nested def (``Counter.made += 1``;
        ``TALLY.total += ...``) or a built object's ``__init__`` / ``__call__``. Source mode
        read the value from before every such call (two layers both named by the first
        count; a total of 0.0), silently, before the session of 2026-12-07, eleventh. Each
        counter is reset first, so `f` stays a function of its arguments."""
        p, ch = self.p, self.ch
        self.emit(f"{p}Counter.made = 0")
        self.features.add("spliced state")
        if ch.flag(0.5):
            fn, h = self.fresh("acc"), self.fresh()
            # (or a number in a dict the object keeps, `+=` by each call: the backward asked
            # the dict whether its slot still held the number read, which the next call's
            # `+=` had replaced -- no gradient through the first, silently, until the same
            # session)
            form = ch.pick(("total", "stats", "method"))
            total = f"{p}TALLY.total" if form == "total" else f"{p}TALLY.stats['n']"
            self.emit(f"{p}TALLY.total = 0.0" if form == "total" else
                      f"{p}TALLY.stats = {{'n': 0.0}}")
            self.emit(f"def {fn}(v):")
            self.emit(f"    {p}Counter.made += 1")
            self.emit(f"    {p}TALLY.add(v)" if form == "method" else
                      f"    {total} += np.sum(np.tanh(v)) * 0.5")
            self.emit(f"    return v * (0.5 + 0.25 * {p}Counter.made)")
            self.emit(f"{h} = {fn}({fn}({cur}))")
            self.steps.append("spliced def")
            return f"{h} + {total} * {p}Counter.made"
        c = self.fresh("ctr")
        self.emit(f"{c} = {p}Counter(0.5)")
        self.steps.append("spliced object")
        return f"({c}({cur}) + {c}({cur} * 0.5)) * {p}Counter.made"

    def step_global(self, cur):
        """`global GH; GH = h`, then read back here, or by a module function that reads the
        global (`read_gh()`) -- which srcad must refuse: it gave that function the value from
        before the call, and a zero gradient, before 2026-12-05."""
        gh = f"{self.p}GH"
        if self.ch.flag(0.3):  # (written in place through a second name, `g = GH; g[:] =
            # h`: Python writes the module's array -- zeros, and a stale value, before the
            # session of 2026-12-06, fifth: refused since, check_writes_into_held_values)
            g = self.fresh("g")
            self.emit(f"{g} = {gh}")
            self.emit(f"{g}[:] = np.tanh({cur}).sum(axis=0) * 0.5")
            self.features.add("global in place")
            self.steps.append("global in place")
            return f"{self.p}read_gh()" if self.ch.flag(0.5) else f"{g} * 0.5 + {cur}"
        self.emit(f"{gh} = np.tanh({cur}) * 1.5")
        self.features.add("global")
        self.steps.append("global")
        if self.ch.flag(0.5):
            self.features.add("global read in a callee")
            return f"{self.p}read_gh()"
        return f"{gh} * 0.5 + {cur}"

    def set_weights_by_loop(self, targets):
        """W1 and W2 set on the two target layers by one loop over the module's list of them
        (``PAIR_L1_L2 = [L1, L2]``): zip, enumerate, enumerate of zip, or zip with a longer
        sequence of weights (zip stops at the layers)."""
        pair = f"{self.p}PAIR_{targets[0]}_{targets[1]}"
        p, (a, b) = self.p, targets
        form = self.ch.pick(("zip", "enumerate", "enumerate_zip", "zip_longer", "display",
                             "filtered", "tested", "skipped", "indexed", "method",
                             "method_loop", "generator", "unpacked", "by_index"))
        if form.startswith("method") and set(targets) != {"L1", "L2"}:
            form = "zip"
        if form == "generator" and targets != ("L1", "L2"):
            form = "zip"
        if form == "generator":
            # (session of 2026-12-06, eighth: the layers a generator method hands out --
            # refused before; frontend/staticrun.py)
            self.emit(f"for layer, W in zip({p}NET.parameters(), (W1, W2)):")
            self.emit("    layer.W = W")
            self.steps.append("W1, W2 -> L1, L2 (loop generator)")
            self.features.update(("weights", "weights loop generator"))
            return
        if form.startswith("method"):  # (session of 2026-12-06, fourth: Net's own method
            # stores into its layers -- refused before: frontend/normalize.py
            # `_stored_on_known_objects`)
            ws = "W1, W2" if targets == ("L1", "L2") else "W2, W1"
            self.emit(f"{p}NET.set_weights({ws})" if form == "method" else
                      f"{p}NET.set_weights_loop(({ws}))")
            self.steps.append(f"W1, W2 -> {targets[0]}, {targets[1]} ({form})")
            self.features.update(("weights", f"weights {form}"))
            return
        if form == "by_index":
            # (session of 2026-12-06, ninth: the layer picked by the index of the weights'
            # sequence -- refused before, "assignment to an attribute of an expression":
            # loops.py `walked_by_index`)
            self.emit("for i, W in enumerate([W1, W2]):")
            self.emit(f"    {pair}[i].W = W")
            self.steps.append(f"W1, W2 -> {targets[0]}, {targets[1]} (loop by_index)")
            self.features.update(("weights", "weights loop by_index"))
            return
        if form == "unpacked":
            # (session of 2026-12-06, ninth: each layer's weights unpacked in the loop's
            # body, `W, V = p` -- one name for every layer's value: srcad gave every layer
            # the last one's, and the first a zero gradient, before; normalize.py
            # `held_value`)
            self.emit(f"for layer, p in zip({pair}, (np.stack([W1, W1 * 0.5]), "
                      "np.stack([W2, W2 * 0.5]))):")
            self.emit("    W, V = p")
            self.emit("    layer.W = W" if self.ch.flag(0.5) else "    layer.W = V")
            self.steps.append(f"W1, W2 -> {targets[0]}, {targets[1]} (loop unpacked)")
            self.features.update(("weights", "weights loop unpacked"))
            return
        kinds = f"({p}DenseA, {p}DenseB)"
        self.emit({"zip": f"for layer, W in zip({pair}, (W1, W2)):",
                   "enumerate": f"for i, layer in enumerate({pair}):",
                   "enumerate_zip": f"for i, (layer, W) in enumerate(zip({pair}, [W1, W2])):",
                   "zip_longer": f"for layer, W in zip({pair}, [W1, W2, W1 * 2.0]):",
                   # (session of 2026-12-06: a display of the layers, a comprehension that
                   # filters them by a test known when srcad builds the code, a test of the
                   # layer in the loop -- refused before: frontend/objcomps.py, calls.py
                   # `known_predicate`)
                   "display": f"for layer, W in zip([{p}{a}, {p}{b}], (W1, W2)):",
                   "filtered": f"for layer, W in zip([l for l in {pair} if " + self.ch.pick((
                       'hasattr(l, "W")', f"isinstance(l, {kinds})",
                       f"not isinstance(l, {p}Net)", *self.known_tests("l"))) +
                   "], (W1, W2)):",
                   "tested": f"for layer, W in zip({pair}, (W1, W2)):",
                   "skipped": f"for layer, W in zip({pair}, (W1, W2)):",
                   "indexed": f"for i in range(len({pair})):"}[form])
        if form == "indexed":  # (a store through the list's item by the loop's index)
            self.emit(f"    {pair}[i].W = (W1, W2)[i]")
        elif form == "skipped":  # (a `continue` under a test decided per layer:
            # refused before 2026-12-06, eighth -- normalize.py `literal_value`)
            self.emit("    if not (" + self.ch.pick(('hasattr(layer, "W")',
                                                     f"isinstance(layer, {kinds})",
                                                     *self.known_tests("layer"))) + "):")
            self.emit("        continue")
            self.emit("    layer.W = W")
        elif form == "tested":
            self.emit("    " + self.ch.pick(('if hasattr(layer, "W"):',
                                             f"if isinstance(layer, {kinds}):",
                                             *(f"if {t}:" for t in self.known_tests("layer")))))
            self.emit("        layer.W = W")
        else:
            self.emit("    layer.W = (W1, W2)[i]" if form == "enumerate" else "    layer.W = W")
        self.steps.append(f"W1, W2 -> {targets[0]}, {targets[1]} (loop {form})")
        self.features.update(("weights", f"weights loop {form}"))

    def known_tests(self, v: str) -> tuple:
        """Tests of a layer's class and plain attributes srcad decides when it builds the
        code (session of 2026-12-06, eighth: refused before -- frontend/knowntests.py
        `StaticTest`); each is true of the Dense layers the weights go to."""
        p = self.p
        return (f"{v}.trainable", f"{v}.kind == 'dense'", f"{v}.kind in ('dense', 'conv')",
                f"type({v}).__name__.startswith('{p}Dense')",
                f"{v}.__class__ is not {p}Act", f"{v}.layer_name() != '{p}Act'",
                f"{v}.trainable and hasattr({v}, 'b')")

    def set_weight(self, arg, name):
        ch = self.ch
        form = ch.weighted([(4, "global"), (1, "layers"), (1, "local"), (1, "property"),
                            (1, "setattr"), (1, "unfollowed"), (1, "method"), (1, "written")])
        index = {"L1": 0, "L2": 2}.get(name)
        if form == "method" and index is None:
            form = "global"
        if form == "setattr":
            self.emit(f"setattr({self.obj(name)}, 'W', {arg})")
        elif form == "unfollowed":  # (routes srcad does not follow: refused, never zeros)
            obj = self.obj(name)
            self.emit(ch.pick((f"{obj}.__dict__['W'] = {arg}",
                               f"{obj}.__dict__.update(W={arg})",
                               f"object.__setattr__({obj}, 'W', {arg})",
                               f"np.copyto({obj}.W, {arg})",
                               # (session of 2026-12-06, fourth: the object's own dict handed
                               # out by its method, stored into -- a zero gradient before)
                               f"{obj}.attributes()['W'] = {arg}",
                               f"{obj}.attributes().update(W={arg})")))
            if ch.flag(0.5):
                self.lines[-1:] = [f"    for key in ['W']:", f"        setattr({obj}, key, {arg})"]
            elif ch.flag(0.4):  # (session of 2026-12-06, fifth: the layer's dict read from an
                # attribute of a layer reached as an item, a local or a loop's variable, by a
                # second name, stored into -- a zero gradient before)
                d, layer = self.fresh("d"), self.fresh("layer")
                at = f"{self.p}NET.layers[{index}]" if index is not None else obj
                self.lines[-1:] = ch.pick((
                    [f"    {d} = {at}.__dict__", f"    {d}['W'] = {arg}"],
                    [f"    {layer} = {at}", f"    {d} = {layer}.__dict__",
                     f"    {d}['W'] = {arg}"],
                    [f"    for {layer} in [{at}]:", f"        {d} = {layer}.__dict__",
                     f"        {d}['W'] = {arg}"],
                    # (the layer's own array written in place through a second name -- zeros
                    # and a stale value before the same session's check_writes_into_held_values)
                    [f"    {d} = {at}.W", f"    {d}[:] = {arg}"],
                    [f"    {d} = {at}.W", f"    {d} *= 0.0", f"    {d} += {arg}"],
                    # (the layers' arrays gathered into a list built when the code runs --
                    # a comprehension, `extend` in a loop -- and one written in place: zeros
                    # before 2026-12-06, eighth -- refusals.py `_list_items`)
                    *([[f"    {d} = [{layer}.W for {layer} in {self.p}NET.layers "
                        f"if hasattr({layer}, 'W')]", f"    {d}[{index // 2}][...] = {arg}"],
                       [f"    {d} = []", f"    for {layer} in {self.p}NET.layers:",
                        f"        {d}.extend([{layer}.W] if hasattr({layer}, 'W') else [])",
                        f"    {d}[{index // 2}][:] = {arg}"],
                       [f"    {d} = [{layer}.W for {layer} in {self.p}NET.layers "
                        f"if hasattr({layer}, 'W')]", f"    {d}[{index // 2}] *= 0.0",
                        f"    {d}[{index // 2}] += {arg}"]] if index is not None else [])))
            self.features.add("weights unfollowed")
        elif form == "written":  # (stored, then written in place: Python's layer shows the
            # write -- a wrong value, silently, before 2026-12-06, fourth; refused since)
            v = self.fresh("Wc")
            self.emit(f"{v} = {arg} * 1.0")
            self.emit(f"{self.obj(name)}.W = {v}")
            self.emit(f"{v} *= 1.5")
            self.features.add("weights unfollowed")
        elif form == "method":  # (Net's own method stores into the layer: refused before
            # 2026-12-06, fourth -- frontend/normalize.py `_stored_on_known_objects`)
            self.emit(f"{self.p}NET.set_{'first' if index == 0 else 'last'}({arg})")
            self.features.add("weights method")
        elif form == "property":  # (its setter stores `self.W`; read back by the getter too)
            self.emit(f"{self.obj(name)}.weight = {arg}")
            if ch.flag(0.5):
                self.terms.append(f"np.sum({self.obj(name)}.weight * 0.25)")
        elif form == "global" or index is None:
            self.emit(f"{self.obj(name)}.W = {arg}")
        elif form == "layers":
            self.emit(ch.pick((f"{self.p}NET.layers[{index}].W = {arg}",
                               f"{self.p}MODEL['layers'][{index}].W = {arg}")))
        else:
            v = self.fresh("layer")
            self.emit(f"{v} = {self.p}NET.layers[{index}]")
            self.emit(f"{v}.W = {arg}")
        self.steps.append(f"{arg} -> {name} ({form})")
        self.features.add("weights")


def generate(ch, index) -> Prog:
    g = Gen(ch, index)
    classes = g.classes()
    fn, n_w = g.function()
    return Prog(f"p{index}_f", classes + "\n\n" + fn + "\n", n_w,
                forwards=(g.fwd["A"], g.fwd["B"]), steps=g.steps,
                features=frozenset(g.features | {"A " + g.fwd["A"], "B " + g.fwd["B"]}))


def batch_programs(seed, n):
    return [generate(FP.RandomChooser(seed * 7919 + i), i) for i in range(n)]


def import_programs(programs, tag):
    """A fresh module holding `programs` (its own objects: a cold start)."""
    return FP.import_source("import numpy as np\n\n" + "\n\n".join(p.source for p in programs),
                            tag)
