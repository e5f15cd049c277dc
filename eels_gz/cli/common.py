"""What every ``eels-gz`` command shares: exit codes, error messages, progress
and the ``--overwrite`` flag.

Exit codes: 0 the command did its work (a scenario may still report its own
ending, e.g. ``mobility_failure``, in the summary); 2 bad input or an
unusable output (found before any model is built); 3 the run failed
physically (``diverged``, ``fell_through_terrain``, ``left_world``), a
plugin raised (``plugin_error``; under ``--host gazebo``, a system gz-sim
disabled), or gz-sim's server or the listener failed (``server_failed``,
``listener_failed``); 4 a
write failed while running (e.g. a full disk); 128 + N the run was stopped by
signal N (130 SIGINT, 143 SIGTERM). In every case after the run began, its
folder holds the log and a summary whose status says what happened.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Callable

import click

from eels_gz.errors import (EelsError, GazeboRunFailed, PluginCallbackError, RobotLost, RunInterrupted,
                            SimulationDiverged, WriteFailed)

EXIT_INPUT, EXIT_FAILED, EXIT_WRITE = 2, 3, 4
PROGRESS_PERIOD = 10.0  # s between progress lines when stderr is not a terminal
PROGRESS_FRACTION = 0.1  # and at every tenth of the run


def fail(exc: Exception | str, code: int = EXIT_INPUT) -> None:
    click.echo(f"eels-gz: error: {exc}", err=True)
    sys.exit(code)


def exit_for(exc: EelsError, out: str | Path | None = None, what: str = "run") -> None:
    """Print the message of a run that ended early and exit with its code (module docstring)."""
    where = f" in {out}" if out is not None else ""
    if isinstance(exc, RunInterrupted):
        if getattr(exc, "written", None) is not None:  # the command says what it wrote (a partial file)
            click.echo(f"eels-gz: {exc}", err=True)
        elif exc.started:
            click.echo(f"eels-gz: {exc}; what the {what} wrote up to then (status 'interrupted') is{where}", err=True)
        else:
            click.echo(f"eels-gz: {exc}; nothing was written", err=True)
        sys.exit(exc.exit_code)
    if isinstance(exc, (SimulationDiverged, PluginCallbackError)):
        what = "a plugin failed" if isinstance(exc, PluginCallbackError) else "simulation diverged"
        click.echo(f"eels-gz: {what}: {exc}", err=True)
        click.echo(f"eels-gz: the log up to the last good state is{where}", err=True)
        sys.exit(EXIT_FAILED)
    if isinstance(exc, GazeboRunFailed):
        click.echo(f"eels-gz: gz-sim: {exc.status.replace('_', ' ')}: {exc}", err=True)
        click.echo(f"eels-gz: the log, gz-sim's server.log and summary (status '{exc.status}') are{where}", err=True)
        sys.exit(EXIT_FAILED)
    if isinstance(exc, RobotLost):
        click.echo(f"eels-gz: {exc.status.replace('_', ' ')}: {exc}", err=True)
        click.echo(f"eels-gz: the log and summary (status '{exc.status}') are{where}", err=True)
        sys.exit(EXIT_FAILED)
    if isinstance(exc, WriteFailed):
        click.echo(f"eels-gz: error: {exc}", err=True)
        if out is not None:
            click.echo(f"eels-gz: what could be written is in {out}", err=True)
        sys.exit(EXIT_WRITE)
    fail(exc)


def echo_result(path: str | Path, as_json: bool) -> None:
    """With ``--json``, print the result file a run that ended early wrote (its summary.json,
    compare.json...), so that a script gets the JSON whatever the status; nothing if it was not written."""
    if not as_json:
        return
    try:
        text = Path(path).read_text()
    except OSError:
        return
    click.echo(text.rstrip())


def overwrite_option(f):
    return click.option("--overwrite", is_flag=True,
                        help="Replace the output already there (refused if it holds files this command did not "
                             "write; the old files are removed once the new output is in place).")(f)


class Number(click.ParamType):
    """A finite number (``kind`` int or float) in a range, checked by click when the command line is
    parsed: out of range, NaN or infinite is a usage error (exit 2) naming the option and the range.

    A bound may be a function (called when a value is checked) so that a limit defined by a model
    module stays there without that module being imported for ``eels-gz --help``; ``above``
    overrides the message for a value over the maximum ("{value}" and "{max}" are filled in)."""

    def __init__(self, kind: type = float, min: float | Callable[[], float] | None = None,
                 max: float | Callable[[], float] | None = None, *, min_open: bool = False,
                 max_open: bool = False, above: str | None = None):
        self.kind, self._min, self._max = kind, min, max
        self.min_open, self.max_open, self.above = min_open, max_open, above
        self.name = "integer" if kind is int else "float"

    @staticmethod
    def _get(bound):
        return bound() if callable(bound) else bound

    def describe(self) -> str:
        """'a whole number >= 1', 'a number > 0 and <= 35'..."""
        lo, hi = self._get(self._min), self._get(self._max)
        parts = []
        if lo is not None:
            parts.append(f"{'>' if self.min_open else '>='} {lo:g}")
        if hi is not None:
            parts.append(f"{'<' if self.max_open else '<='} {hi:g}")
        return ("a whole number" if self.kind is int else "a finite number") + (" " + " and ".join(parts) if parts
                                                                                  else "")

    def convert(self, value, param, ctx):
        if isinstance(value, bool):
            self.fail(f"'{value}' is not a number", param, ctx)
        if self.kind is int:
            number = click.INT.convert(value, param, ctx)
        else:
            number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"must be {self.describe()}, got {value}", param, ctx)
        lo, hi = self._get(self._min), self._get(self._max)
        if hi is not None and (number >= hi if self.max_open else number > hi) and self.above:
            self.fail(self.above.format(value=number, max=hi), param, ctx)
        if (lo is not None and (number <= lo if self.min_open else number < lo)) or \
                (hi is not None and (number >= hi if self.max_open else number > hi)):
            self.fail(f"must be {self.describe()}, got {number:g}", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"Number({self.describe()})"

    @classmethod
    def of(cls, key: str, kind: type = float) -> Number:
        """The option type of a configuration key's documented range (eels_gz.ranges.CONFIG_RANGES),
        so that a flag and the key it sets share one range."""
        from eels_gz.ranges import CONFIG_RANGES

        rng = CONFIG_RANGES[key]
        return cls(kind, rng.low, rng.high, min_open=rng.low_open)


POSITIVE = Number(float, 0, min_open=True)  # a length, a duration, a rate, a scale
DURATION = Number.of("duration")  # simulated seconds (eels_gz.ranges: > 0 and <= 1e6)
STEP = Number.of("physics.dt")
PACE = Number.of("ros.rate")
PATH_SCALE = Number(float, 0, 10, min_open=True)  # a rover path's scale: its lengths and turns (1 = the paper's)
WHEEL_RATE = Number(float, 0, 100, min_open=True)  # rad/s, a rover's mean wheel rate
NON_NEGATIVE = Number(float, 0)
FINITE = Number(float)  # a coordinate
SEED = Number(int, 0, 2**32 - 1)  # numpy's seeds are non-negative; 32 bits stay portable


def _clock(seconds: float) -> str:
    """'0:42', '1:05:09': a time left, as click's progress bar writes it."""
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """A progress bar on a terminal; elsewhere (``make``, CI, job logs) a line on stderr at every
    tenth of the run or every PROGRESS_PERIOD s, whichever comes first. ``update(delta, total)``
    counts steps; ``setup(sim_time)`` reports a scenario's setup (placement); :attr:`note`, when set,
    is shown after the count (e.g. a campaign's failures)."""

    def __init__(self, label: str, file=None, show_pos: bool = False):
        self.label = label
        self.show_pos = show_pos
        self.file = file or sys.stderr
        self.tty = bool(getattr(self.file, "isatty", lambda: False)())
        self.bar = None
        self.done = 0
        self.t0 = time.monotonic()
        self.last_line = self.t0
        self.last_fraction = 0.0
        self.note = ""

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.render_finish()
            self.bar = None

    def _line(self, text: str) -> None:
        click.echo(f"{self.label}: {text} ({time.monotonic() - self.t0:.0f} s)", file=self.file)
        self.last_line = time.monotonic()

    def setup(self, sim_time: float) -> None:
        now = time.monotonic()
        if now - self.last_line >= (2.0 if self.tty else PROGRESS_PERIOD):
            self._line(f"setting up the scenario (placement): {sim_time:.2f} s simulated")

    def update(self, delta: int, total: int) -> None:
        self.done += delta
        if self.tty:
            if self.bar is None:
                self.bar = click.progressbar(length=total, label=self.label, file=self.file,
                                             show_eta=True, show_percent=True, show_pos=self.show_pos,
                                             item_show_func=lambda note: note or None)
                self.bar.render_progress()
            self.bar.length = total
            self.bar.update(delta, self.note)
            return
        fraction = self.done / total if total else 1.0
        now = time.monotonic()
        if fraction - self.last_fraction >= PROGRESS_FRACTION or now - self.last_line >= PROGRESS_PERIOD \
                or (fraction >= 1.0 > self.last_fraction):
            self.last_fraction = fraction
            eta = ""
            if 0.0 < fraction < 1.0:  # as the terminal's bar shows it: the pace so far, carried on
                eta = f", ETA {_clock((now - self.t0) * (1.0 - fraction) / fraction)}"
            self._line(f"{100 * fraction:3.0f} % ({self.done}/{total}){eta}" + (f", {self.note}" if self.note else ""))
