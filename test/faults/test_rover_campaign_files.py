"""Issue 31 §6: a rover drive run as a sweep sample (each drive of ``rover campaign``) is written into
``DIR.partial`` and renamed to ``DIR``; the paths its record names (its run file, the slope world it
generated) must be where they are after the rename (30 of 54 campaign run files named a world inside
the vanished ``….partial/``)."""

from __future__ import annotations

import json
from pathlib import Path

from eels_gz.sweep.commands import COMMANDS


def test_a_sample_drive_names_files_that_exist_after_the_rename(tmp_path):
    cmd = COMMANDS["rover drive"]
    settings = cmd.settings([("path", "straight", "t"), ("speed", 1.2, "t"), ("world", "slope:5", "t"),
                             ("scale", 0.05, "t")])
    folder = tmp_path / "samples" / "s0000"
    status, message = cmd.run(settings, folder)
    assert status == "ok", message
    assert not folder.with_name("s0000.partial").exists()
    brief = json.loads((folder / "summary.json").read_text())
    record = json.loads(Path(brief["file"]).read_text())
    for doc in (brief, record):
        for key in ("world", "file"):
            assert ".partial" not in doc[key] and Path(doc[key]).is_file(), f"{key}: {doc[key]}"
