"""Transforms from the normalised IR to generated code: reverse (adjoint) and forward."""
