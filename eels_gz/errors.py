"""Exceptions with actionable messages: each names the file, element, key or
body at fault and what was expected."""

from __future__ import annotations


class EelsError(Exception):
    """Base class of every error eels_gz raises on bad input or a failed run."""


class ConfigError(EelsError):
    """A configuration file, key or value is wrong."""


class RegistryError(EelsError):
    """An unknown robot, world or scenario name."""


class DescriptionError(EelsError):
    """A robot description (xacro or URDF) cannot be processed."""


class SdfError(EelsError):
    """An SDF file is malformed or uses something the embedded host does not support."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        where = ""
        if file is not None:
            where = f"{file}:{line}: " if line is not None else f"{file}: "
        super().__init__(where + message)
        self.file = file
        self.line = line


class PluginError(EelsError):
    """A gz-sim system cannot be found, loaded or configured."""


class PluginCallbackError(PluginError):
    """A system's callback raised during the run (gz-sim would disable the
    system silently; the host stops and names it, unless ``sim.plugin_errors``
    is ``disable``)."""

    def __init__(self, plugin: str, callback: str, step: int, time: float, error: BaseException):
        super().__init__(f"plugin '{plugin}' raised in {callback}() at step {step} (t = {time:.6f} s): "
                         f"{type(error).__name__}: {error}")
        self.plugin = plugin
        self.callback = callback
        self.step = step
        self.time = time


class SimulationDiverged(EelsError):
    """The simulation blew up: a NaN or a velocity past the bound."""

    def __init__(self, step: int, time: float, body: str, detail: str):
        super().__init__(
            f"simulation diverged at step {step} (t = {time:.6f} s) in body '{body}': {detail}"
        )
        self.step = step
        self.time = time
        self.body = body


class TerrainError(EelsError, ValueError):
    """A terrain input (heights, mesh, distance-field file or query points) is
    malformed; the message names the file or argument and what was expected."""


class ContactError(EelsError):
    """Inputs to the screw contact model are inconsistent (array shapes, screw geometry)."""


class CalibrationError(EelsError):
    """A friction-calibration data file is malformed or cannot identify the parameters."""


class RoverError(ConfigError, ValueError):
    """Bad rover input: a wheel set, steering limits, drive mode, command or
    placement request; the message names the wheel, mode or value and what was
    expected."""


class PlacementError(RoverError):
    """No rover pose puts every wheel on the terrain within the joint limits."""


class SnakeModelError(EelsError, ValueError):
    """Inputs to a snake locomotion model (chain, gait, controller, placement) are
    inconsistent; the message names the joint, link, screw or parameter."""


class SingularContactError(SnakeModelError):
    """The screws in contact cannot produce the commanded body twist: the no-slip
    constraint matrix is rank deficient or ill-conditioned (NEO's "pencil")."""


class OutputError(EelsError):
    """An output folder or file cannot be used: it holds another run, another run is writing it,
    or it is not writable (permissions, read-only file system, a path under a file, a full disk).
    Raised before any model is built; the message names the path and the reason."""


class LogError(EelsError):
    """A file given as a run's log is not an MCAP log, or cannot be read."""


class WriteFailed(EelsError):
    """Writing a run's output failed while it ran (e.g. the disk filled up); what was written is
    kept and the run's status says so."""


class RunInterrupted(EelsError):
    """A run was stopped by SIGINT or SIGTERM; its folder holds what it wrote up to then, with
    status ``interrupted``."""

    def __init__(self, signum: int, message: str = "", started: bool = True):
        import signal

        self.signum = int(signum)
        self.signal_name = signal.Signals(self.signum).name
        self.started = started  # False: stopped while the model was being built, nothing written
        super().__init__(message or f"interrupted by {self.signal_name}")

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


class RobotLost(EelsError):
    """The robot passed through the terrain (status ``fell_through_terrain``) or left the world
    (``left_world``); the run stops there like a divergence, with its log and summary."""

    def __init__(self, status: str, message: str, time: float):
        super().__init__(message)
        self.status = status
        self.time = time


class GazeboNotFound(ConfigError):
    """``--host gazebo`` where no gz-sim 8 is installed; the message says where it was looked for."""


class GazeboRunFailed(EelsError):
    """A run in gz-sim ended badly: a Python system gz-sim disabled (``plugin_error``), the server or
    the listener failed (``server_failed``, ``listener_failed``). The run folder holds what was
    recorded, the server's log and a summary with that status."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
