"""One ``eels-gz run`` parses its robot's URDF at most twice (the xacro output and the optimised
model) and reads each xacro file once (issue 46), for EELS 1.0 and for Archimede's rover drive.

Counted in the test process, around the CLI's own run: every parse through lxml, xml.etree or
minidom whose document is a URDF (root ``<robot>``, no xacro element: a xacro source is counted as
a read instead, and xacro's own parse of the files it reads is that read), every open of a
``*.xacro`` file (``open``, ``io.open`` and so ``Path.read_text``/``read_bytes``, and lxml's
parse of a file name), and our own parses of a xacro source (its arguments are read once per
file). A run with xacro's output cache empty (xacro runs) and one with it filled (the files are
read to check the entry) are each counted, each as the first run of a process."""

from __future__ import annotations

import builtins
import collections
import hashlib
import io
import os
import traceback
import xml.dom.minidom as minidom
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from lxml import etree

XACRO_NS = "{http://www.ros.org/wiki/xacro}"


def _is_xacro_source(doc) -> bool:
    root = doc.getroot() if hasattr(doc, "getroot") else doc
    return isinstance(getattr(root, "tag", None), str) and any(
        isinstance(el.tag, str) and el.tag.startswith(XACRO_NS) for el in root.iter())


def _is_urdf(doc) -> bool:
    if hasattr(doc, "documentElement"):  # minidom
        root = doc.documentElement
        return root.tagName == "robot" and not any(
            n.namespaceURI == XACRO_NS[1:-1] or n.tagName.startswith("xacro:")
            for n in root.getElementsByTagName("*"))
    root = doc.getroot() if hasattr(doc, "getroot") else doc
    if not isinstance(getattr(root, "tag", None), str) or root.tag != "robot":
        return False
    return not any(isinstance(el.tag, str) and el.tag.startswith(XACRO_NS) for el in root.iter())


class Counter:
    """URDF parses (by calling line) and xacro reads (by file name) while installed."""

    def __init__(self, monkeypatch):
        self.parses: collections.Counter = collections.Counter()
        self.reads: collections.Counter = collections.Counter()
        self.xacro_parses: collections.Counter = collections.Counter()  # our parses of a xacro source, by text
        for module, names in ((etree, ("fromstring", "parse", "XML")), (ET, ("fromstring", "parse", "XML")),
                              (minidom, ("parseString", "parse"))):
            for name in names:
                monkeypatch.setattr(module, name, self._parser(getattr(module, name)))
        real_open = builtins.open

        def counted_open(file, *args, **kwargs):
            self._read(file)
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", counted_open)
        monkeypatch.setattr(io, "open", counted_open)

    def _read(self, file) -> None:
        if isinstance(file, (str, os.PathLike)) and str(file).endswith(".xacro"):
            self.reads[os.path.basename(str(file))] += 1

    def _parser(self, parse):
        def counted(*args, **kwargs):
            if args:
                self._read(args[0])
            doc = parse(*args, **kwargs)
            stack = traceback.extract_stack()[:-1]
            in_xacro = any(f"{os.sep}xacro{os.sep}" in frame.filename for frame in stack)
            if not in_xacro and hasattr(doc, "tag") and _is_xacro_source(doc):
                self.xacro_parses[hashlib.sha256(etree.tostring(doc)).hexdigest()[:12]] += 1
            if not in_xacro and _is_urdf(doc):
                ours = [f for f in stack if f"{os.sep}eels_gz{os.sep}" in f.filename]
                where = ours[-1] if ours else stack[-1]
                self.parses[f"{Path(where.filename).name}:{where.lineno} {where.name}"] += 1
            return doc
        return counted


def _run(tmp_path, name: str, args: list[str]) -> None:
    from eels_gz.cli import main

    main(["run", *args, "--duration", "0.05", "--out", str(tmp_path / name), "--set", "log.plot=false"],
         standalone_mode=False)


@pytest.mark.parametrize("args", [["--scenario", "screw_spin"], ["--scenario", "rover_drive"]],
                         ids=["eels_1_0", "archimede_rover_drive"])
def test_one_run_parses_its_urdf_at_most_twice_and_reads_each_xacro_once(tmp_path, monkeypatch, args):
    import eels_gz.description.xacro_cache as xacro_cache

    monkeypatch.setattr(xacro_cache, "cache_dir", lambda: tmp_path / "cache")  # xacro's cache only: empty
    for name in ("xacro_runs", "from_cache"):
        with monkeypatch.context() as patch:
            patch.setattr(xacro_cache, "_SOURCES", {})  # as in a new process: no file read yet
            count = Counter(patch)
            _run(tmp_path, name, args)
        assert count.reads, "no xacro file read: the counter misses xacro's reads"
        assert sum(count.parses.values()) <= 2, f"{name}: URDF parsed {dict(count.parses)}"
        assert max(count.reads.values()) == 1, f"{name}: xacro files read {dict(count.reads)}"
        assert max(count.xacro_parses.values(), default=0) <= 1, \
            f"{name}: xacro sources parsed for their arguments {dict(count.xacro_parses)}"
