"""Shared statistics: pure functions on numpy arrays and pandas tables."""
