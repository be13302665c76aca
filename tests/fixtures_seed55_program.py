"""The object-state fuzzer's program that found tape mode leaving its Tensor in a module's
list (seed 55, its third program, as tests/fuzz_object_state.py drew it on 2026-12-06): kept
here as it was drawn (its three longest lines wrapped), so that test_held_container_stores.py
checks this very program however the generator's draws move since. The program, like every
one the generator writes, is this project's own."""

SOURCE = """
class p2_Base:
    kind = "layer"

    def __init__(self):
        self.output = None
        self.prev = None
        self.trainable = not isinstance(self, p2_Act)

    def attributes(self):
        return self.__dict__

    def layer_name(self):
        return self.__class__.__name__


class p2_DenseA(p2_Base):
    kind = "dense"

    def __init__(self, W, b, squash):
        super().__init__()
        self.W = W
        self.b = b
        self.squash = squash
        self.cache = []
        self.saved = {}
        self.cfg = {"mode": "test"}

    def forward(self, x):
        self.inputs = x
        z = x @ self.W + self.b
        if self.squash:
            self.output = np.tanh(z)
        else:
            self.output = z * 0.5

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


class p2_DenseB(p2_Base):
    kind = "dense"

    def __init__(self, W, b, squash):
        super().__init__()
        self.W = W
        self.b = b
        self.squash = squash
        self.cache = []
        self.saved = {}
        self.cfg = {"mode": "test"}

    def forward(self, x):
        self.inputs = x
        z = np.tanh(x @ self.W)
        p2_LOG.append(z)
        self.output = z * 0.5 + self.b

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


class p2_Act(p2_Base):
    def forward(self, x):
        self.inputs = x
        self.output = np.sin(x) + x * 0.5


class p2_Net:
    def __init__(self, layers):
        self.layers = layers
        self.named = {f"l{i}": layer for i, layer in enumerate(layers)}
        for i, layer in enumerate(layers):
            layer.prev = layers[i - 1] if i > 0 else None
            setattr(self, f"l{i}", layer)

    def __getitem__(self, i):
        return self.layers[i]

    def parameters(self):
        for layer in self.layers:
            if isinstance(layer, (p2_DenseA, p2_DenseB)):
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

    def iterate(self, x):
        self.layers[0].forward(x)
        for _ in range(2):
            self.layers[0].forward(self.layers[0].output * 0.5)
        return self.layers[0].output

    def forward_getattr(self, x):
        h = x
        for i in range(len(self.layers)):
            layer = getattr(self, f"l{i}")
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


p2_L1 = p2_DenseA(np.array([[ 0.189,  0.166, -0.009],
        [ 0.062,  0.792, -0.032],
        [-0.573, -0.269, -0.765]]),
    np.array([ 0.370, -0.039, -0.311]), True)
p2_A1 = p2_Act()
p2_L2 = p2_DenseB(np.array([[-0.503,  0.551,  0.128],
        [-0.495,  0.129,  0.369],
        [ 0.352, -0.039,  0.617]]),
    np.array([ 0.321, -0.093, -0.333]), True)
p2_NET = p2_Net([p2_L1, p2_A1, p2_L2])
p2_L3 = p2_DenseA(np.array([[-0.229, -0.124,  0.798],
        [ 0.604, -0.419,  0.445],
        [ 0.625, -0.754,  0.214]]),
    np.array([-0.275,  0.414,  0.084]), False)
p2_L3.prev = p2_L1
p2_LOG = []
p2_SAVED = {}
p2_GH = np.zeros(3)


def p2_read_gh():
    return np.sin(p2_GH) * 2.0


p2_CFGS = [p2_L1.cfg, p2_L2.cfg, p2_L3.cfg]
p2_PAIR_L1_L2 = [p2_L1, p2_L2]
p2_PAIR_L2_L1 = [p2_L2, p2_L1]
p2_PAIR_L1_L3 = [p2_L1, p2_L3]
p2_PAIR_L3_L2 = [p2_L3, p2_L2]


def p2_f(x, W1):
    p2_L1.W = W1
    for c in p2_CFGS:
        c['mode'] = 'train'
    h1 = x
    for layer in [*p2_NET.layers]:
        layer.forward(h1)
        h1 = layer.output
    h2 = p2_NET.layers[0].output + h1
    getattr(p2_NET, 'l0').stash()
    h3 = p2_L1.saved['out'] * 0.75
    p2_NET.layers[0].remember()
    h4 = p2_NET.layers[-3].cache[-1] * 0.75
    return np.sum(np.tanh(h3) * x) + np.sum(h4 * h4)
"""
N_WEIGHTS = 1
NAME = "p2_f"
FEATURES = frozenset({"A branch_const", "B global_log", "modes dicts", "net filter_here",
                      "remember", "stash", "via layers", "weights"})
