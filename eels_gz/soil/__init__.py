"""Terramechanics of rigid wheels on soft soil (issue 34): Bekker pressure-sinkage,
the Wong-Reece stress distribution, Janosi-Hanamoto shear, Ishigami's lateral
force and bulldozing, grousers. Pure numpy/numba; no engine imports."""
