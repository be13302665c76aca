"""Policy gradient in numpy: Karpathy's pong-style two-layer policy with discounted rewards
computed in a reversed loop (reset at a nonzero reward) and standardised; REINFORCE with a
softmax policy and returns built with ``returns.insert(0, G)``; a value baseline; GAE in a
reversed loop; episodes as a list of tuples; a Gaussian policy's log-likelihood."""

import numpy as np

from . import Program, rng


def discount_rewards(r, gamma=0.99):
    discounted_r = np.zeros_like(r)
    running_add = 0
    for t in reversed(range(0, r.size)):
        if r[t] != 0:
            running_add = 0
        running_add = running_add * gamma + r[t]
        discounted_r[t] = running_add
    return discounted_r


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def pong_policy_loss(W1, W2, epx, epy, epr):
    h = np.dot(epx, W1.T)
    h[h < 0] = 0
    logp = np.dot(h, W2)
    p = sigmoid(logp)
    discounted_epr = discount_rewards(epr)
    discounted_epr -= np.mean(discounted_epr)
    discounted_epr /= np.std(discounted_epr)
    loglik = epy * np.log(p) + (1 - epy) * np.log(1 - p)
    return -np.sum(loglik * discounted_epr)


def pong_policy_loss_backward(W1, W2, epx, epy, epr):
    eph = np.maximum(np.dot(epx, W1.T), 0)
    p = sigmoid(np.dot(eph, W2))
    adv = discount_rewards(epr)
    adv = (adv - np.mean(adv)) / np.std(adv)
    epdlogp = -(epy - p) * adv
    dW2 = np.dot(eph.T, epdlogp)
    dh = np.outer(epdlogp, W2)
    dh[eph <= 0] = 0
    dW1 = np.dot(dh.T, epx)
    return dW1, dW2


def softmax(z):
    z = z - np.max(z)
    e = np.exp(z)
    return e / np.sum(e)


def reinforce_insert(theta, states, actions, rewards, gamma=0.9):
    G = 0.0
    returns = []
    for r in reversed(rewards):
        G = r + gamma * G
        returns.insert(0, G)
    loss = 0.0
    for s, a, G in zip(states, actions, returns):
        probs = softmax(s @ theta)
        loss = loss - np.log(probs[a]) * G
    return loss


def reinforce_insert_backward(theta, states, actions, rewards, gamma=0.9):
    G, returns = 0.0, []
    for r in reversed(rewards):
        G = r + gamma * G
        returns.insert(0, G)
    dtheta = np.zeros_like(theta)
    for s, a, G in zip(states, actions, returns):
        probs = softmax(s @ theta)
        dlogits = probs.copy()
        dlogits[a] -= 1
        dtheta += np.outer(s, dlogits) * G
    return (dtheta,)


def baseline_actor_critic(theta, w, states, actions, rewards, gamma=0.95):
    T = len(rewards)
    returns = np.zeros(T)
    G = 0.0
    for t in range(T - 1, -1, -1):
        G = rewards[t] + gamma * G
        returns[t] = G
    values = states @ w
    logits = states @ theta
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    adv = returns - values
    policy_loss = -np.mean(logp[np.arange(T), actions] * adv)
    value_loss = 0.5 * np.mean(adv ** 2)
    return policy_loss + value_loss


def baseline_actor_critic_backward(theta, w, states, actions, rewards, gamma=0.95):
    T = len(rewards)
    returns = np.zeros(T)
    G = 0.0
    for t in range(T - 1, -1, -1):
        G = rewards[t] + gamma * G
        returns[t] = G
    values = states @ w
    logits = states @ theta
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    logp_a = np.log(p[np.arange(T), actions])
    adv = returns - values
    dlogits = p.copy()
    dlogits[np.arange(T), actions] -= 1
    dtheta = states.T @ (dlogits * adv[:, None]) / T
    dadv = -logp_a / T + adv / T
    dw = states.T @ (-dadv)
    return dtheta, dw


def gae_reversed(w, states, rewards, dones, gamma=0.9, lam=0.8):
    values = np.tanh(states @ w)
    T = len(rewards)
    adv = np.zeros(T)
    gae = 0.0
    for t in reversed(range(T)):
        next_value = values[t + 1] if t + 1 < T else 0.0
        delta = rewards[t] + gamma * next_value * (1 - dones[t]) - values[t]
        gae = delta + gamma * lam * (1 - dones[t]) * gae
        adv[t] = gae
    return np.sum(adv ** 2)


def gae_reversed_backward(w, states, rewards, dones, gamma=0.9, lam=0.8):
    values = np.tanh(states @ w)
    T = len(rewards)
    # adv = M delta, delta = r + gamma * shift(v) * nd - v, all linear in v
    adv = np.zeros(T)
    deltas = np.zeros(T)
    gae = 0.0
    for t in reversed(range(T)):
        nv = values[t + 1] if t + 1 < T else 0.0
        deltas[t] = rewards[t] + gamma * nv * (1 - dones[t]) - values[t]
        gae = deltas[t] + gamma * lam * (1 - dones[t]) * gae
        adv[t] = gae
    dadv = 2 * adv
    ddelta = np.zeros(T)
    carry = 0.0
    for t in range(T):
        carry = dadv[t] + (gamma * lam * (1 - dones[t - 1]) * carry if t > 0 else 0.0)
        ddelta[t] = carry
    dvalues = -ddelta.copy()
    for t in range(T - 1):
        dvalues[t + 1] += ddelta[t] * gamma * (1 - dones[t])
    dz = dvalues * (1 - values ** 2)
    return (states.T @ dz,)


def episodes_list_of_tuples(W, episodes, gamma=0.99):
    total = 0.0
    for states, actions, rewards in episodes:
        R = 0.0
        disc = []
        for r in rewards[::-1]:
            R = r + gamma * R
            disc.append(R)
        disc = disc[::-1]
        for t in range(len(actions)):
            p = sigmoid(np.dot(W, states[t]))
            if actions[t] == 1:
                total = total - disc[t] * np.log(p)
            else:
                total = total - disc[t] * np.log(1 - p)
    return total / len(episodes)


def episodes_list_of_tuples_backward(W, episodes, gamma=0.99):
    dW = np.zeros_like(W)
    for states, actions, rewards in episodes:
        R, disc = 0.0, []
        for r in rewards[::-1]:
            R = r + gamma * R
            disc.append(R)
        disc = disc[::-1]
        for t in range(len(actions)):
            p = sigmoid(W @ states[t])
            dW += disc[t] * (p - actions[t]) * states[t]
    return (dW / len(episodes),)


def gaussian_policy(W, log_std, obs, acts, advs):
    mu = np.tanh(obs @ W)
    std = np.exp(log_std)
    logp = -0.5 * np.sum(((acts - mu) / std) ** 2 + 2 * log_std + np.log(2 * np.pi), axis=1)
    return -np.mean(logp * advs)


def gaussian_policy_backward(W, log_std, obs, acts, advs):
    N = obs.shape[0]
    mu = np.tanh(obs @ W)
    std = np.exp(log_std)
    z = (acts - mu) / std
    dlogp = -advs / N
    dmu = (dlogp[:, None] * z / std)
    dlog_std = np.sum(dlogp[:, None] * (z ** 2 - 1), axis=0)
    return obs.T @ (dmu * (1 - mu ** 2)), dlog_std


def _args_pong():
    r = rng(110)
    T, D, H = 8, 5, 4
    epr = np.zeros(T)
    epr[3], epr[7] = 1.0, -1.0
    return (r.standard_normal((H, D)) * 0.5, r.standard_normal(H) * 0.5,
            r.standard_normal((T, D)), (r.uniform(size=T) > 0.5).astype(float), epr)


def _args_reinforce():
    r = rng(111)
    T, D, A = 5, 3, 3
    return (r.standard_normal((D, A)) * 0.5, list(r.standard_normal((T, D))),
            list(r.integers(0, A, T)), list(r.standard_normal(T)))


def _args_ac():
    r = rng(112)
    T, D, A = 6, 3, 2
    return (r.standard_normal((D, A)) * 0.5, r.standard_normal(D) * 0.5,
            r.standard_normal((T, D)), r.integers(0, A, T), r.standard_normal(T))


def _args_gae():
    r = rng(113)
    T = 6
    dones = np.zeros(T)
    dones[2] = 1
    return r.standard_normal(3) * 0.5, r.standard_normal((T, 3)), r.standard_normal(T), dones


def _args_eps():
    r = rng(114)
    eps = []
    for T in (3, 4):
        eps.append((list(r.standard_normal((T, 3))), list(r.integers(0, 2, T)),
                    list(r.standard_normal(T))))
    return r.standard_normal(3) * 0.5, eps


def _args_gauss():
    r = rng(115)
    return (r.standard_normal((3, 2)) * 0.5, r.standard_normal(2) * 0.1,
            r.standard_normal((6, 3)), r.standard_normal((6, 2)), r.standard_normal(6))


PROGRAMS = [
    Program("policy.pong_policy_loss", pong_policy_loss, pong_policy_loss_backward,
            _args_pong, ("W1", "W2"), fuse=True),
    Program("policy.reinforce_insert", reinforce_insert, reinforce_insert_backward,
            _args_reinforce, ("theta",)),
    Program("policy.baseline_actor_critic", baseline_actor_critic,
            baseline_actor_critic_backward, _args_ac, ("theta", "w")),
    Program("policy.gae_reversed", gae_reversed, gae_reversed_backward, _args_gae, ("w",)),
    Program("policy.episodes_list_of_tuples", episodes_list_of_tuples,
            episodes_list_of_tuples_backward, _args_eps, ("W",)),
    Program("policy.gaussian_policy", gaussian_policy, gaussian_policy_backward,
            _args_gauss, ("W", "log_std")),
]
