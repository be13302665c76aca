"""Models written as plain numpy functions over a params dict, differentiated like user code."""
