"""A world's terrain read again from its SDF file (or the host's reading of it): the distance field
of its terrain models (the screw contact, placement and sensors query it), the records
``eels-gz world`` wrote beside them, and the soil those name. :mod:`eels_gz.terrain.writers` writes
the model folders and worlds read here.

A terrain model's field is ``distance_field.npz`` (``FIELD_FILE``) beside its ``model.sdf``, in the
model frame; the model's pose (translations only) moves it into the world.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from lxml import etree

from eels_gz.errors import TerrainError
from eels_gz.paths import resource_paths
from eels_gz.terrain.fields import load_field, translated

FIELD_FILE = "distance_field.npz"


def terrain_records(world) -> list[tuple[str, Path]]:
    """(model name as the world names it, its ``terrain.json``) of the terrain models world file
    ``world`` includes (those ``eels-gz world`` wrote)."""
    out = []
    for name, file, _, _ in _models_of_file(Path(world)):
        meta = Path(file).parent / "terrain.json"
        if Path(file).name == "model.sdf" and meta.is_file():
            out.append((name, meta))
    return out


def world_soil(world) -> str | None:
    """The soil set (a name of config/soil/) the world's terrain models record in their terrain.json
    (``eels-gz world ... --soil NAME``), or None. Two terrains of one world with different soils are a
    TerrainError naming them: a run takes one soil set."""
    soils = {}
    for name, meta in terrain_records(world):
        try:
            soil = json.loads(meta.read_text()).get("soil")
        except (OSError, ValueError) as exc:
            raise TerrainError(f"{meta}: cannot read the terrain's record: {exc}") from None
        if soil:
            soils[name] = str(soil)
    if len(set(soils.values())) > 1:
        raise TerrainError(f"{world}: its terrains record different soils ("
                           + ", ".join(f"{k}: {v}" for k, v in sorted(soils.items())) + "); a run takes one: "
                           "set soil.params")
    return next(iter(soils.values()), None)


def _pose_matrix(text: str) -> np.ndarray:
    x, y, z, roll, pitch, yaw = (float(v) for v in text.split())
    cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    T = np.eye(4)
    T[:3, :3] = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                 [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                 [-sp, cp * sr, cp * cr]]
    T[:3, 3] = (x, y, z)
    return T


def _models_of_file(path: Path) -> list[tuple[str, str, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]]:
    """(name, model file, pose, planes) of the world's models; planes are (point, normal) in the world."""
    root = etree.parse(str(path)).getroot()
    out = []
    world = root.find("world")
    if world is None:
        raise TerrainError(f"{path}: no <world> element")
    for node in world:
        if not isinstance(node.tag, str):
            continue
        if node.tag == "include":
            uri = (node.findtext("uri") or "").strip()
            folder = None
            if uri.startswith("model://"):
                folder = next((r / uri[8:] for r in resource_paths() if (r / uri[8:]).exists()), None)
            elif uri:  # file://, absolute or relative to the world's file, as the host resolves them
                folder = Path(uri[len("file://"):] if uri.startswith("file://") else uri)
                folder = folder if folder.is_absolute() else Path(path).parent / folder
                folder = folder if folder.exists() else None
            if folder is None:
                raise TerrainError(f"{path}: cannot find model '{uri}' (searched GZ_SIM_RESOURCE_PATH and models/)")
            model_file = folder / "model.sdf"
            # an include's <pose> replaces the model's own (as in sdformat); without one the model's applies
            pose_text = node.findtext("pose") if node.find("pose") is not None else _own_pose(model_file)
            pose = _pose_matrix(pose_text) if pose_text is not None else np.eye(4)
            out.append((uri, str(model_file), pose, []))
        elif node.tag == "model":
            pose = _pose_matrix(node.findtext("pose")) if node.find("pose") is not None else np.eye(4)
            planes = []
            if (node.findtext("static") or "").strip() in ("true", "1"):
                for link in node.findall("link"):
                    L = pose @ (_pose_matrix(link.findtext("pose")) if link.find("pose") is not None else np.eye(4))
                    for col in link.findall("collision"):
                        plane = col.find("geometry/plane")
                        if plane is not None:
                            C = L @ (_pose_matrix(col.findtext("pose")) if col.find("pose") is not None else np.eye(4))
                            n = np.array([float(v) for v in (plane.findtext("normal") or "0 0 1").split()])
                            planes.append((C[:3, 3], C[:3, :3] @ (n / np.linalg.norm(n))))
            out.append((node.get("name", "?"), str(path), pose, planes))
    return out


def _own_pose(model_file: Path) -> str | None:
    """The ``<pose>`` text of the model in ``model_file``, or None."""
    try:
        model = etree.parse(str(model_file)).getroot().find("model")
    except (OSError, etree.XMLSyntaxError):
        return None
    return model.findtext("pose") if model is not None and model.find("pose") is not None else None


def _models_of_spec(spec) -> list:
    out = []
    for m in spec.models:
        planes = []
        if m.static:
            for link in m.links:
                for c in link.collisions:
                    if c.geometry.kind == "plane":
                        C = m.pose @ link.pose @ c.pose
                        planes.append((C[:3, 3], C[:3, :3] @ np.asarray(c.geometry.normal)))
        out.append((m.name, m.file, np.asarray(m.pose), planes))
    return out


def find_terrain_field(world):
    """The terrain distance field of a world (a WorldSpec or an SDF world file), or None.

    Every model whose ``model.sdf`` has a ``distance_field.npz`` beside it
    contributes its field, moved by the model's pose (translations only); a
    static ``<plane>`` collision contributes an exact Plane. Several terrains
    give their Union.
    """
    from eels_gz.terrain.primitives import Plane, Union

    models = _models_of_file(Path(world)) if isinstance(world, (str, Path)) else _models_of_spec(world)
    fields = []
    for name, file, pose, planes in models:
        candidate = Path(file).parent / FIELD_FILE
        if Path(file).name == "model.sdf" and candidate.is_file():
            if not np.allclose(pose[:3, :3], np.eye(3), atol=1e-12):
                raise TerrainError(f"model '{name}' ({file}) is posed with a rotation; its {FIELD_FILE} is in the "
                                   "model frame and only translated poses are supported: generate the terrain rotated")
            fields.append(translated(load_field(candidate), pose[:3, 3]))
        fields += [Plane(point=p, normal=n) for p, n in planes]
    if not fields:
        return None
    return fields[0] if len(fields) == 1 else Union(tuple(fields))
