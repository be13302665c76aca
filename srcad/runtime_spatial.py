"""scipy.spatial.distance's ``cdist`` under a name generated code can import (``from
srcad.runtime import spatial_cdist``), for the row of srcad/ops/spatial.py.

scipy is optional: this module does not import it until the first call. ``spatial_cdist``
calls ``scipy.spatial.distance.cdist`` itself, with the same arguments, so source mode (which
calls it) and tape mode (which calls the scipy function the row is registered for) compute
the same values bit for bit. `cdist_metric` is the row's check: the metrics whose derivative
the row's rules write (the rest are refused at the user's line, never given zeros).
"""

from __future__ import annotations

import importlib

from .errors import SrcadError

# the metrics the rules of srcad/ops/spatial.py differentiate
CDIST_METRICS = ("euclidean", "sqeuclidean", "cityblock")


def spatial_cdist(XA, XB, metric="euclidean"):
    return importlib.import_module("scipy.spatial.distance").cdist(XA, XB, metric)


def cdist_metric(XA, XB, metric="euclidean"):
    """Refuse a metric the rules do not differentiate (or one given as a callable)."""
    if not (isinstance(metric, str) and metric in CDIST_METRICS):
        raise SrcadError(f"cdist with metric={metric!r} has no derivative rule in srcad (its "
                         f"rules cover {', '.join(CDIST_METRICS)})")
