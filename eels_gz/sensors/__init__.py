"""Sensor models, engine-free: noise, IMU, force-torque frames, lidar beam
patterns and ray casting against distance fields and primitive shapes."""
