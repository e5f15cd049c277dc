"""Granular media: resistive force theory on surface elements (screws in sand); numpy and numba only."""
