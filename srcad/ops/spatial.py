"""scipy.spatial.distance.cdist: the distance between every row of XA and every row of XB,
for the metrics kernel and nearest-neighbour code uses ('euclidean', 'sqeuclidean',
'cityblock'); any other metric is refused at the call (the row's check), never given zeros.

Like srcad/ops/special.py, scipy is optional: the row is registered (`table.optional_rows`)
once the user's code imports scipy.spatial.distance. It is registered for scipy's cdist
itself (tape mode calls it); generated code spells it ``spatial_cdist`` (the same call,
srcad/runtime_spatial.py). Its rules are numpy expressions over ``D = XA_i - XB_j`` (a
pairwise difference, built by broadcasting), so the second derivative goes through numpy's
own rows:

    sqeuclidean  out_ij = |D_ij|^2    dXA_i = sum_j 2 g_ij D_ij
    euclidean    out_ij = |D_ij|      dXA_i = sum_j g_ij / out_ij D_ij   (0 where out is 0)
    cityblock    out_ij = |D_ij|_1    dXA_i = sum_j g_ij sign(D_ij)

and dXB_j is minus the same sum over i. Before/after (source mode):
    d = cdist(X, C)            ->  d = spatial_cdist(X, C, 'euclidean') ...
                                   dX = np.einsum('ij,ijk->ik', <weights>, X[:, None] - C[None])
"""

import numpy as np

from .. import runtime_spatial as rsp
from .table import Param, defjvp, defvjp, optional_rows

_F = "scipy.spatial"


def _register_rows() -> None:
    """The row (run by `table.optional_rows`, once scipy.spatial.distance is imported)."""
    import scipy.spatial.distance as ssd  # (an optional library: imported only here)

    # w: each pair's weight (g's share); d: the pair's difference (its sign for cityblock)
    defvjp(ssd.cdist,
           lambda g, out, XA, XB, metric="euclidean": np.einsum(
               "ij,ijk->ik",
               2.0 * g if metric == "sqeuclidean" else g if metric == "cityblock" else
               g * (out > 0) / np.where(out > 0, out, 1.0),
               np.sign(XA[:, None, :] - XB[None, :, :]) if metric == "cityblock" else
               XA[:, None, :] - XB[None, :, :]),
           lambda g, out, XA, XB, metric="euclidean": -np.einsum(
               "ij,ijk->jk",
               2.0 * g if metric == "sqeuclidean" else g if metric == "cityblock" else
               g * (out > 0) / np.where(out > 0, out, 1.0),
               np.sign(XA[:, None, :] - XB[None, :, :]) if metric == "cityblock" else
               XA[:, None, :] - XB[None, :, :]),
           None,
           name="spatial_cdist", family=_F, aliases=(rsp.spatial_cdist,),
           params=(Param("XA"), Param("XB"), Param("metric", "euclidean")),
           spelling="spatial_cdist(XA, XB, metric)", check=rsp.cdist_metric,
           dtypes=("float64",),
           derivation="out_ij = dist(XA_i, XB_j): dXA_i = sum_j w_ij D_ij with D = XA_i - "
           "XB_j and w = 2g (sqeuclidean), g / out (euclidean), or g times sign(D) "
           "(cityblock); dXB_j = -sum_i of the same",
           test_cases=(("OP(a, b)", [(3, 2), (4, 2)]),
                       ("OP(a, b, 'sqeuclidean')", [(3, 2), (4, 2)]),
                       ("OP(a, b, metric='cityblock')", [(2, 3), (3, 3)])))
    defjvp(ssd.cdist,
           lambda g, out, XA, XB, metric="euclidean": np.einsum(
               "ijk,ik->ij",
               np.sign(XA[:, None, :] - XB[None, :, :]) if metric == "cityblock" else
               (2.0 if metric == "sqeuclidean" else (out > 0)[:, :, None]
                / np.where(out > 0, out, 1.0)[:, :, None]) * (XA[:, None, :] - XB[None, :, :]),
               g),
           lambda g, out, XA, XB, metric="euclidean": -np.einsum(
               "ijk,jk->ij",
               np.sign(XA[:, None, :] - XB[None, :, :]) if metric == "cityblock" else
               (2.0 if metric == "sqeuclidean" else (out > 0)[:, :, None]
                / np.where(out > 0, out, 1.0)[:, :, None]) * (XA[:, None, :] - XB[None, :, :]),
               g),
           None)


optional_rows("scipy.spatial.distance", _register_rows, helpers=rsp.__name__)
