"""Snake locomotion models (pure: numpy/scipy only): kinematic chain, serpenoid
gaits, screw motion control, leader-follower shape control, path tracking,
placement and the mobility-failure check (NEO §III, EELS-DARTS §2.2.6, §4.3)."""
