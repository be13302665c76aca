"""Analyses over the normalised IR: activity (which values need adjoints) and shapes."""
