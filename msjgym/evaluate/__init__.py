"""Evaluation: scenarios, statistics, replications, reports."""
