"""Robot descriptions: xacro processing and URDF handling (pure: no engine imports)."""
