"""Analytical references: exact results, bounds, asymptotics and approximations from the queueing literature."""
