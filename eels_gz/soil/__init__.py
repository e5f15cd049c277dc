"""Terramechanics of rigid wheels on soft soil (issue 34): Bekker pressure-sinkage,
the Wong-Reece stress distribution, Janosi-Hanamoto shear, Ishigami's lateral
force and bulldozing, grousers (issue 44: the lugs' passive thrust, the shear at the lug tips or
the wheel-grain interface) and slip-sinkage. Pure numpy/numba; no engine imports."""
