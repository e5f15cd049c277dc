"""Joint control models: PID/PI with saturation and anti-windup, set-point schedules."""
