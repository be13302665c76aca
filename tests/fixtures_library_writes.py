"""Programs where a library call or an in-place method changes a differentiated array
through its argument, or through a view expression (tests/test_library_writes.py)."""

import random

import numpy as np


def sort_a_row_in_place(x):
    y = x * 1.0
    y[0].sort()
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def fill_a_row(x):
    y = x * 1.0
    y[0].fill(2.0)
    return np.sum(y * y)


def partition_a_row(x):
    y = x * 1.0
    y[1].partition(2)
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def sort_the_transpose(x):
    y = x * 1.0
    y.T.sort()
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def sort_a_fancy_copy(x):  # numpy sorts a copy, which is lost: y is unchanged
    y = x * 1.0
    y[[1, 0]].sort()
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def sort_a_column_of_a_view(x):
    y = np.tanh(x)
    v = y[1:]
    v[:, 2].sort()
    return np.sum(y * np.arange(y.size).reshape(y.shape)) + np.sum(v)


def generator_shuffle(x):
    y = x * 1.0
    rng = np.random.default_rng(3)
    rng.shuffle(y)  # ERR
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def generator_shuffle_of_a_row(x):
    y = x * 1.0
    rng = np.random.default_rng(3)
    rng.shuffle(y[0])  # ERR
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def legacy_shuffle_of_a_row(x):
    y = x * 1.0
    np.random.seed(0)
    np.random.shuffle(y[1])  # ERR
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def shuffled_by_an_index(x):  # the refusal's hint, written out: the same draws
    rng = np.random.default_rng(3)
    y = x * 1.0
    order = rng.permutation(len(y))
    y = y[order]
    return np.sum(y * np.arange(y.size).reshape(y.shape))


def shuffle_of_plain_indices(x):  # no gradient passes through the shuffled values
    idx = list(range(x.shape[0]))
    random.Random(4).shuffle(idx)
    order = np.arange(x.shape[1])
    np.random.default_rng(2).shuffle(order)
    return np.sum(x[idx][:, order] * np.arange(x.size).reshape(x.shape))


def print_and_sort_a_copy(x):
    y = np.sin(x)
    z = y.copy()
    z.sort(axis=1)
    print(y.shape)
    return np.sum(y * z)
