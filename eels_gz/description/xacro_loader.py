"""Expand a robot's xacro into URDF and split off its ``<gazebo>`` blocks.

Both hosts read the same description: Gazebo converts the ``<gazebo>``
blocks while turning URDF into SDF; the embedded host hands the plain URDF
to DART and loads the plugins found in the ``<gazebo>`` blocks.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from eels_gz.description.model import RobotModel
from eels_gz.errors import DescriptionError


@dataclass
class Description:
    """A processed robot description."""

    name: str
    urdf: str  # URDF without <gazebo> blocks
    gazebo: list  # lxml elements of the model-level <gazebo> blocks
    source: str  # the xacro file it came from
    references: list = field(default_factory=list)  # <gazebo reference="link or joint"> blocks
    _model: RobotModel | None = field(default=None, repr=False, compare=False)  # the model of `urdf`
    _parsed: tuple | None = field(default=None, repr=False, compare=False)  # (urdf, its <robot> element)

    @property
    def model(self) -> RobotModel:
        """The robot model of ``urdf`` (:mod:`eels_gz.description.model`), built once, on first use
        (a malformed tree is refused then): from :func:`split_gazebo`'s own parse, or given by the
        optimizer from its tree; a description whose ``urdf`` was replaced gets the new text's."""
        if self._model is None or self._model.urdf != self.urdf:
            parsed = self._parsed
            self._model = (RobotModel(parsed[1], self.source, urdf=self.urdf) if parsed and parsed[0] == self.urdf
                           else RobotModel.from_urdf(self.urdf, self.source))
        return self._model

    def gazebo_element(self) -> etree._Element:
        """A new ``<robot>`` element (a copy of the model's) with its ``<gazebo>`` blocks, for a writer
        that adds to it: see :meth:`gazebo_urdf`."""
        import copy

        root = copy.deepcopy(self.model.element)
        for block in [*self.gazebo, *self.references]:
            root.append(copy.deepcopy(block))
        return root

    def gazebo_urdf(self) -> str:
        """The URDF with its ``<gazebo>`` blocks, as Gazebo reads it (robot_state_publisher and
        ``ros_gz_sim create`` in Gazebo mode): without them Gazebo would get no plugins or sensors."""
        return etree.tostring(self.gazebo_element(), encoding="unicode")


def process_xacro(path: str | Path, args: dict[str, str] | None = None) -> str:
    """Run xacro on ``path`` with ``args``; raise DescriptionError naming the file on failure."""
    import xacro

    path = Path(path)
    if not path.is_file():
        raise DescriptionError(f"robot description '{path}' does not exist")
    mappings = {str(k): str(v) for k, v in (args or {}).items()}
    # xacro reports problems on stderr and raises; capture both for one clear message
    from eels_gz.description.xacro_cache import shared_reads

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), shared_reads():
            doc = xacro.process_file(str(path), mappings=mappings)
    except Exception as exc:  # xacro raises XacroException, XML and name errors
        detail = str(exc) or type(exc).__name__
        extra = err.getvalue().strip()
        raise DescriptionError(
            f"{path}: xacro failed with args {mappings}: {detail}" + (f" ({extra})" if extra else "")
        ) from None
    return doc.toxml()


def split_gazebo(urdf: str, source: str) -> Description:
    """Separate model-level ``<gazebo>`` blocks from the URDF; the description's robot model is read
    from this one parse."""
    try:
        root = etree.fromstring(urdf.encode())
    except etree.XMLSyntaxError as exc:
        raise DescriptionError(f"{source}: malformed URDF: {exc.msg}") from None
    if root.tag != "robot":
        raise DescriptionError(f"{source}: URDF root element must be <robot>, got <{root.tag}>")
    blocks, references = [], []
    names = {n.get("name") for n in root if n.tag in ("link", "joint")}
    for node in list(root):
        if node.tag == "gazebo":
            ref = node.get("reference")
            if ref is not None and ref not in names:
                raise DescriptionError(f"{source}: <gazebo reference='{ref}'> names no link or joint of the robot")
            (references if ref is not None else blocks).append(node)
            root.remove(node)
    text = etree.tostring(root, encoding="unicode")
    return Description(
        name=root.get("name", "robot"),
        urdf=text,
        gazebo=blocks,
        source=source,
        references=references,
        _parsed=(text, root),
    )


STAND_IN_ARGS = ("scenario",)  # a run's own file (a path in its folder): one cache entry for all of them


def _cached(path: Path, mappings: dict[str, str]) -> str:
    """xacro's output through the cache (eels_gz.description.xacro_cache); an argument of
    STAND_IN_ARGS that the description only copies as text is keyed by a token, not its value."""
    from eels_gz.description.xacro_cache import cached_xacro, source_text, text_only

    names = [n for n in STAND_IN_ARGS if mappings.get(n)]
    if names and path.is_file() and all(text_only(source_text(path), n) for n in names):
        stand_ins = {n: (f"@eels_gz_arg_{n}@", mappings[n]) for n in names}
        tokens = {**mappings, **{n: token for n, (token, _) in stand_ins.items()}}
        try:
            text = cached_xacro(path, tokens, lambda: process_xacro(path, tokens), stand_ins)
        except DescriptionError:
            text = None
        if text is not None:
            return text
    return cached_xacro(path, mappings, lambda: process_xacro(path, mappings))


def load_description(path: str | Path, args: dict[str, str] | None = None) -> Description:
    """xacro -> URDF, with the ``<gazebo>`` blocks split off; plain .urdf files skip xacro."""
    from eels_gz.description.xacro_cache import source_bytes
    from eels_gz.paths import as_text, read_text

    path = Path(path)
    if path.suffix == ".urdf":
        text = read_text(path, "robot description", "URDF/xacro XML", DescriptionError)
    elif path.is_file():  # a binary file picked by mistake is named as such (the one read xacro shares)
        try:
            as_text(source_bytes(path), path, "URDF/xacro XML", DescriptionError)
        except OSError as exc:
            raise DescriptionError(f"cannot read robot description '{path}': {exc.strerror}") from None
    if path.suffix != ".urdf":
        text = _cached(path, {str(k): str(v) for k, v in (args or {}).items()})
    return split_gazebo(text, str(path))
