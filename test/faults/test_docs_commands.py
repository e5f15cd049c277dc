"""The commands in README.md and docs/*.md run as written from a fresh clone (issue 17 §4).

Every line of a ```bash block is checked: an ``eels-gz`` command is parsed by the real CLI
(options, choices, types) and every input file it names exists in the repository or is written
by an earlier command of the same page; a ``make`` line names a Makefile target. The quick ones
(terrain from the sample inputs in examples/, describe, calibrate, --help) then actually run,
page by page in a fresh folder, in the order written; the simulations of 10 s and more are only
parsed, to keep the suite short."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import click
import pytest
from faults_cli import cli

from eels_gz.cli import main

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# commands that run in a second or two: everything but the simulations of 10 s and more (and
# `calibrate identify`, which reads what two identification sweeps of minutes wrote: only parsed)
QUICK = (("world",), ("describe",), ("calibrate", "friction"), ("calibrate", "simulate"), ("run", "--help"))
# how many quick commands each page has: a check that the loop below did run them
QUICK_COUNT = {"worlds.md": 8, "robots.md": 3, "contact.md": 2, "running.md": 1}
GAZEBO_SIDE = ("rosdep", "colcon", "ros2", "gz")  # the README's Gazebo steps: only parsed as text here


def page_commands(page: Path) -> list[tuple[int, list[str], dict[str, str]]]:
    """(line number, argv, environment assignments) of every command in the page's bash blocks, those
    indented in a list item too (the README's Gazebo steps)."""
    out, in_block = [], False
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        if line.lstrip().startswith("```"):
            in_block = line.strip() == "```bash"
            continue
        if not in_block:
            continue
        words = shlex.split(line, comments=True)
        env = {}
        while words and ASSIGNMENT.match(words[0]):
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        if words:
            out.append((number, words, env))
    return out


COMMANDS = [(page, number, words, env) for page in PAGES for number, words, env in page_commands(page)]


def parse(argv: list[str]) -> tuple[tuple[str, ...], dict]:
    """(command path, parameters) of ``eels-gz ARGV`` as the real CLI parses it; --help stops there."""
    path: list[str] = []
    ctx = main.make_context("eels-gz", list(argv))
    command, params = main, dict(ctx.params)
    while isinstance(command, click.Group):
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        if not rest:
            break
        name, command, rest = command.resolve_command(ctx, rest)
        path.append(name)
        ctx = command.make_context(name, rest, parent=ctx)
        params = dict(ctx.params)
    return tuple(path), params


def inputs(path: tuple[str, ...], params: dict) -> list[str]:
    """The input files a command reads."""
    names = []
    if path[:1] == ("world",) and path[1:] != ("primitive",):
        names.append(params["file"])
    if path == ("calibrate", "friction"):
        names.append(params["csv_file"])
    if path == ("recover",):
        names.append(params["log_file"])
    if path == ("sweep",):
        names.append(params["spec_file"])
    for key in ("config_file", "urdf_file"):
        if params.get(key):
            names.append(params[key])
    if str(params.get("world") or "").endswith(".sdf"):
        names.append(params["world"])
    return names


def outputs(path: tuple[str, ...], params: dict) -> list[str]:
    """The files a command writes that a later command may read."""
    if path[:1] == ("world",) and path[1:] in (("dem",), ("mesh",), ("pointcloud",), ("primitive",)):
        name = params.get("name") or (Path(params["file"]).stem if "file" in params else params["kind"])
        return [str(Path(params.get("out") or "results/worlds") / "worlds" / f"{name}.sdf")]
    if path == ("calibrate", "simulate"):
        return [params["out_file"]]
    return [params["save_config"]] if params.get("save_config") else []


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z_-]*):", (REPO / "Makefile").read_text(), re.M))


@pytest.mark.parametrize("page, number, words, env", COMMANDS,
                         ids=[f"{p.name}:{n}" for p, n, _, _ in COMMANDS])
def test_doc_command_parses_and_its_inputs_exist(page, number, words, env):
    where = f"{page.relative_to(REPO)}:{number}: {' '.join(words)}"
    if words[0] == "make":
        assert words[1] in makefile_targets(), f"{where}: no such Makefile target"
        return
    if words[0] == "source" and words[1:] != ["install/setup.bash"]:  # the venv `make venv` creates
        venv = re.search(r"^VENV\s*:=\s*(\S+)", (REPO / "Makefile").read_text(), re.M).group(1)
        assert words[1:] == [f"{venv}/bin/activate"], f"{where}: only the venv's activate script may be sourced"
        return
    if words[0] == "ray":  # Ray's own CLI (installed with eels_gz): `ray start`, `ray stop`, `ray status`
        assert words[1] in ("start", "stop", "status"), f"{where}: an unexpected ray command"
        return
    if words[0] in GAZEBO_SIDE or words == ["source", "install/setup.bash"]:
        return  # the ROS 2 + Gazebo user's steps (README, Running in Gazebo): not run here
    if words[0] == "python":  # a bench script (make docs-figures reruns them): it exists and takes these options
        script = REPO / words[1]
        assert words[1].startswith("bench/") and script.is_file(), f"{where}: not a script of bench/"
        for option in (w for w in words[2:] if w.startswith("--")):
            assert f'"{option}"' in script.read_text(), f"{where}: {words[1]} has no option {option}"
        return
    assert words[0] == "eels-gz", f"{where}: a command in a bash block must be eels-gz, make, ray, python bench/ " \
                                  f"or a Gazebo user's ({', '.join(GAZEBO_SIDE)})"
    try:
        path, params = parse(words[1:])
    except click.exceptions.Exit as exc:  # --help
        assert exc.exit_code == 0, where
        return
    except click.ClickException as exc:
        pytest.fail(f"{where}: {exc.format_message()}")
    produced = set()
    for p, n, w, _ in COMMANDS:  # earlier commands of the same page
        if p == page and n < number and w[0] == "eels-gz":
            try:
                produced.update(outputs(*parse(w[1:])))
            except click.exceptions.Exit:
                pass
    for name in inputs(path, params):
        assert (REPO / name).exists() or name in produced, f"{where}: input '{name}' is not in the repository " \
                                                           "and no earlier command of the page writes it"


@pytest.mark.parametrize("page", [p for p in PAGES if any(c[0] == p for c in COMMANDS)], ids=lambda p: p.name)
def test_quick_doc_commands_run_as_written(page, tmp_path, monkeypatch):
    (tmp_path / "examples").symlink_to(REPO / "examples")  # a fresh clone's examples/, and nothing else
    monkeypatch.chdir(tmp_path)
    ran = 0
    for number, words, env in page_commands(page):
        if words[0] != "eels-gz" or not any(tuple(words[1:1 + len(q)]) == q for q in QUICK):
            continue
        for key, value in env.items():
            monkeypatch.setenv(key, os.path.expandvars(value.replace("$PWD", str(tmp_path))))
        res = cli(*words[1:])
        assert res.exit_code == 0, f"{page.name}:{number}: {' '.join(words)}\n{res.output}"
        ran += 1
    assert ran == QUICK_COUNT.get(page.name, 0)
    # a clone's root is left as it was: every file the commands wrote is under results/
    assert sorted(p.name for p in tmp_path.iterdir()) in (["examples"], ["examples", "results"]), \
        sorted(p.name for p in tmp_path.iterdir())


def test_the_sample_inputs_are_what_make_examples_writes(tmp_path):
    """examples/ holds exactly what examples/make_examples.py writes (one source for the samples)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_examples", REPO / "examples" / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    shipped = sorted(p.name for p in (REPO / "examples").iterdir() if p.is_file() and p.name != "make_examples.py")
    assert written == shipped
    for name in written:
        assert (tmp_path / name).read_bytes() == (REPO / "examples" / name).read_bytes(), f"examples/{name} is stale"


def output_key(path: tuple[str, ...], params: dict) -> tuple | None:
    """What a command's output occupies, so that two commands of the docs never write the same thing:
    a run folder (run, compare, sweep, campaign, ...), a rover drive's file in its folder, a world's
    model and world names in its folder; None for a command that writes nothing to --out."""
    out = params.get("out_dir") or params.get("out")
    if path[:1] == ("world",):
        outs = outputs(path, params)
        return ("world", str(Path(outs[0]).parent.parent)) + tuple(outs) if outs else None
    if path == ("rover", "drive"):
        return ("rover drive", out, params["robot"], params["path_name"], params["rate"], params["world"])
    if not out or path[:1] in (("calibrate",), ("view",), ("recover",), ("describe",)):
        return None
    return ("folder", str(out))


def parsed_commands():
    """(page, line number, words, command path, parameters) of every eels-gz command of the docs that
    parses to a command (not --help), in the docs' order."""
    for page, number, words, _ in COMMANDS:
        if words[0] != "eels-gz":
            continue
        try:
            path, params = parse(words[1:])
        except click.exceptions.Exit:
            continue
        yield page, number, words, path, params


def test_every_docs_command_writes_to_its_own_folder():
    """Followed in order (README, then docs/ page by page), no command writes where an earlier one did
    (its run would be refused, or replace the other's), except ``--resume``, which finishes it (issue 31:
    robots.md and sweeps.md both wrote results/screw_contact)."""
    seen: dict[tuple, str] = {}
    for page, number, words, path, params in parsed_commands():
        key = output_key(path, params)
        if key is None or params.get("resume"):
            continue
        where = f"{page.relative_to(REPO)}:{number}"
        assert key not in seen, f"{where}: {' '.join(words)} writes where {seen[key]} did"
        seen[key] = where


def test_the_readme_says_how_to_put_eels_gz_on_path(tmp_path):
    """Issue 31 §7: every page calls `eels-gz`, which `make` installs into .venv/bin, off PATH. The
    quickstart names both ways (activate the venv, or `make shim`), and `make shim` links the
    command into BINDIR."""
    import subprocess

    readme = (REPO / "README.md").read_text()
    quick = readme[readme.index("## Quickstart"):readme.index("## What is exercised here")]
    assert "source .venv/bin/activate" in quick and "make shim" in quick
    done = subprocess.run(["make", "-o", "venv", "-o", ".venv.stamp", "shim", f"BINDIR={tmp_path}"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    link = tmp_path / "eels-gz"
    assert link.is_symlink() and Path(os.readlink(link)) == REPO / ".venv" / "bin" / "eels-gz"


def written_paths(path: tuple[str, ...], params: dict) -> list[str]:
    """Every path a docs command writes (its output folder or files), as given on its command line or
    by default."""
    out = [params.get(k) for k in ("out_dir", "save_config", "out_file", "plot_file", "png") if params.get(k)]
    if path[:1] == ("world",):
        out.append(params.get("out") or "results/worlds")
    return [str(p) for p in out]


def test_the_docs_commands_write_only_under_results():
    """Followed from a clone, no command of the docs writes into the repository's root or its tracked
    folders (issue 45: `export --out hold_gz`, `world --out my_terrain` wrote beside the sources): every
    relative output path is under results/ (an absolute one, a cluster's shared folder, is the user's)."""
    for page, number, words, path, params in parsed_commands():
        assert not params.get("shipped"), f"{page.name}:{number}: --shipped rewrites the tracked worlds (make worlds)"
        for written in written_paths(path, params):
            p = Path(written)
            assert p.is_absolute() or p.parts[0] == "results", \
                f"{page.relative_to(REPO)}:{number}: {' '.join(words)} writes '{written}', outside results/"


def test_make_worlds_reproduces_the_tracked_worlds_byte_for_byte(tmp_path):
    """`make worlds` (eels-gz world shipped) rewrites models/ and worlds/: into a copy of the share folder
    (EELS_GZ_SHARE), every file it writes must equal the tracked one, byte for byte (issue 45: it modified
    13 tracked terrain.json files)."""
    import shutil
    import subprocess
    import sys

    share = tmp_path / "share"
    share.mkdir()
    for entry in REPO.iterdir():
        if entry.name in ("models", "worlds"):
            shutil.copytree(entry, share / entry.name)
        elif not entry.name.startswith("."):
            (share / entry.name).symlink_to(entry)
    env = dict(os.environ, EELS_GZ_SHARE=str(share), GZ_SIM_RESOURCE_PATH="")
    done = subprocess.run([sys.executable, "-m", "eels_gz.cli", "world", "shipped"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    changed = []
    for folder in ("models", "worlds"):
        for made in sorted((share / folder).rglob("*")):
            if made.is_file():
                tracked = REPO / folder / made.relative_to(share / folder)
                if not tracked.is_file() or tracked.read_bytes() != made.read_bytes():
                    changed.append(str(tracked.relative_to(REPO)))
    assert not changed, f"make worlds would change or add: {changed}"
    assert ".partial" not in done.stdout + done.stderr  # no INFO line names a temporary folder


def test_progress_off_a_terminal_gives_its_eta_and_compare_names_its_run(tmp_path):
    """docs/sweeps.md promises an ETA on the progress line; off a terminal (make, CI) it was not printed.
    compare's line named 'stock + model'; it names the run the count is in."""
    res = cli("compare", "--robot", "eels_1_0_front_only", "--n-modules", "2", "--duration", "0.3",
              "--out", tmp_path / "c")
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stderr.splitlines() if line.startswith("compare:")]
    assert lines and "stock + model" not in res.stderr, res.stderr
    assert any("ETA" in line for line in lines) and any("the screw run" in line for line in lines), lines
