"""Frontend: from a Python function to its normalised IR.

parse (getsource -> gast, name resolution) -> fence (reject unsupported syntax) ->
normalize (desugar + A-normal form, see normalize.py for the output grammar).
"""

from .normalize import normalize
from .parse import ParsedFunction, parse_function, star_params_as_containers

__all__ = ["ParsedFunction", "normalize", "parse_function", "star_params_as_containers"]
