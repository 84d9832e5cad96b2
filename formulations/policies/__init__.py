"""Policies that solve an optimisation model in the loop (formulation side of the layering): they
may import ``formulations``; heuristics may not. Registered in ``formulations.POLICIES``."""
