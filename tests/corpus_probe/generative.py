"""From-scratch generative models: a VAE with the reparameterisation noise drawn inside
(np.random.seed + np.random.randn, and a Generator), mu/logvar split by slicing, a GAN's
generator loss through a frozen discriminator held in a dict, a tied-weight autoencoder, a
planar flow's log-determinant, a mixture density network's log-sum-exp."""

import numpy as np

from . import Probe, rng
from .helpers import leaky_relu, sigmoid

LATENT = 2


def encoder(x, We, be):
    h = np.tanh(x @ We + be)
    mu, logvar = h[:, :LATENT], h[:, LATENT:]
    return mu, logvar


def decoder(z, Wd, bd):
    return sigmoid(z @ Wd + bd)


def vae_global_seed(We, be, Wd, bd, x):
    mu, logvar = encoder(x, We, be)
    np.random.seed(0)
    eps = np.random.randn(*mu.shape)
    z = mu + np.exp(0.5 * logvar) * eps
    x_hat = decoder(z, Wd, bd)
    recon = -np.sum(x * np.log(x_hat + 1e-8) + (1 - x) * np.log(1 - x_hat + 1e-8))
    kl = -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar))
    return (recon + kl) / x.shape[0]


class VAE:
    def __init__(self, We, be, Wd, bd, seed=1):
        self.We, self.be, self.Wd, self.bd = We, be, Wd, bd
        self.rng = np.random.default_rng(seed)

    def reparameterize(self, mu, logvar):
        std = np.exp(0.5 * logvar)
        eps = self.rng.standard_normal(std.shape)
        return mu + eps * std

    def forward(self, x):
        mu, logvar = encoder(x, self.We, self.be)
        z = self.reparameterize(mu, logvar)
        return decoder(z, self.Wd, self.bd), mu, logvar

    def loss(self, x):
        x_hat, mu, logvar = self.forward(x)
        mse = np.sum((x_hat - x) ** 2, axis=1)
        kld = -0.5 * np.sum(1 + logvar - np.square(mu) - np.exp(logvar), axis=1)
        return np.mean(mse + kld)


def vae_class_generator(We, be, Wd, bd, x):
    model = VAE(We, be, Wd, bd)
    return model.loss(x)


def discriminator(x, D):
    h = leaky_relu(x @ D["W1"] + D["b1"], 0.2)
    return sigmoid(h @ D["W2"] + D["b2"])


def generator(z, G):
    h = np.maximum(z @ G["W1"] + G["b1"], 0)
    return np.tanh(h @ G["W2"] + G["b2"])


def gan_generator_loss(G, D, z):
    fake = generator(z, G)
    d_fake = discriminator(fake, D)
    return -np.mean(np.log(d_fake + 1e-8))


def gan_discriminator_loss(D, G, z, real):
    fake = generator(z, G)
    d_real = discriminator(real, D)
    d_fake = discriminator(fake, D)
    return -np.mean(np.log(d_real + 1e-8) + np.log(1.0 - d_fake + 1e-8))


def tied_autoencoder(W, b_enc, b_dec, x, noise_level=0.1):
    r = np.random.RandomState(3)
    corrupted = x * r.binomial(1, 1 - noise_level, size=x.shape)
    h = sigmoid(corrupted @ W + b_enc)
    rec = sigmoid(h @ W.T + b_dec)
    return np.mean(np.sum((rec - x) ** 2, axis=1))


def planar_flow(u, w, b, z):
    lin = z @ w + b                                # (N,)
    f = z + np.outer(np.tanh(lin), u)
    psi = np.outer(1 - np.tanh(lin) ** 2, w)       # (N, D)
    logdet = np.log(np.abs(1 + psi @ u))
    logp = -0.5 * np.sum(f ** 2, axis=1) - 0.5 * f.shape[1] * np.log(2 * np.pi)
    return -np.mean(logp + logdet)


def mdn_nll(W, x, y, K=3):
    out = x @ W
    logits, mu, log_sigma = out[:, :K], out[:, K:2 * K], out[:, 2 * K:]
    sigma = np.exp(log_sigma)
    log_pi = logits - logits.max(axis=1, keepdims=True)
    log_pi = log_pi - np.log(np.exp(log_pi).sum(axis=1, keepdims=True))
    comp = -0.5 * ((y[:, None] - mu) / sigma) ** 2 - log_sigma - 0.5 * np.log(2 * np.pi)
    a = log_pi + comp
    m = np.max(a, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(a - m), axis=1, keepdims=True))
    return -np.mean(lse)


def _vae(seed=60, N=4, D=3):
    r = rng(seed)
    return (r.standard_normal((D, 2 * LATENT)) * 0.5, r.standard_normal(2 * LATENT) * 0.1,
            r.standard_normal((LATENT, D)) * 0.5, r.standard_normal(D) * 0.1,
            r.random((N, D)))


def _gan(seed=61, Z=2, D=3, Hd=4, N=5):
    r = rng(seed)
    G = {"W1": r.standard_normal((Z, Hd)) * 0.5, "b1": r.standard_normal(Hd) * 0.1,
         "W2": r.standard_normal((Hd, D)) * 0.5, "b2": r.standard_normal(D) * 0.1}
    Dn = {"W1": r.standard_normal((D, Hd)) * 0.5, "b1": r.standard_normal(Hd) * 0.1,
          "W2": r.standard_normal((Hd, 1)) * 0.5, "b2": r.standard_normal(1) * 0.1}
    return G, Dn, r.standard_normal((N, Z))


def _ganD():
    G, Dn, z = _gan(62)
    return Dn, G, z, rng(63).standard_normal((5, 3))


def _ae():
    r = rng(64)
    return (r.standard_normal((4, 3)) * 0.5, np.zeros(3), np.zeros(4), r.random((5, 4)))


def _flow():
    r = rng(65)
    return r.standard_normal(3) * 0.5, r.standard_normal(3) * 0.5, 0.1, r.standard_normal((6, 3))


def _mdn():
    r = rng(66)
    return r.standard_normal((2, 9)) * 0.5, r.standard_normal((6, 2)), r.standard_normal(6)


PROGRAMS = [
    Probe("generative.vae_global_seed", vae_global_seed, _vae, ("We", "be", "Wd", "bd"), True),
    Probe("generative.vae_class_generator", vae_class_generator, _vae, ("We", "be", "Wd", "bd")),
    Probe("generative.gan_generator_loss", gan_generator_loss, _gan, "G"),
    Probe("generative.gan_discriminator_loss", gan_discriminator_loss, _ganD, "D"),
    Probe("generative.tied_autoencoder", tied_autoencoder, _ae, ("W", "b_enc", "b_dec")),
    Probe("generative.planar_flow", planar_flow, _flow, ("u", "w", "b")),
    Probe("generative.mdn_nll", mdn_nll, _mdn, "W"),
]
