"""Make docs/images/tube_head_cameras.png: the head's first stereo camera and its depth camera in `tube`.

    eels-gz run --robot eels_1_0_alternating --n-modules 2 --world tube --duration 0.21 \\
        --set "robot.pose=[0, 0, 0.6, 0, 0, 0]" --set sensors.cameras=true --set sensors.noise=false \\
        --set log.plot=false --out results/tube_cameras
    python docs/images/camera_figure.py results/tube_cameras docs/images/tube_head_cameras.png
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from mcap.reader import make_reader
from PIL import Image, ImageDraw

from eels_gz.ros.messages import typestore


def main(run_dir: str, out: str) -> None:
    store, last = typestore(), {}
    with open(Path(run_dir) / "log.mcap", "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages(
                topics=["/stereo_1_left/image_raw", "/depth_camera/depth_image"]):
            last[channel.topic] = store.deserialize_cdr(message.data, schema.name)
    rgb = last["/stereo_1_left/image_raw"]
    left = Image.fromarray(rgb.data.reshape(rgb.height, rgb.width, 3)).resize((320, 240))
    dep = last["/depth_camera/depth_image"]
    d = np.frombuffer(dep.data.tobytes(), "<f4").reshape(dep.height, dep.width)
    far = np.isposinf(d)
    shade = np.clip(np.nan_to_num(d, posinf=0.0, neginf=0.0) / 3.0, 0.0, 1.0)  # 0 .. 3 m, near is bright
    grey = np.where(far, 0, 255 * (1.0 - shade)).astype(np.uint8)
    right = Image.fromarray(grey).resize((320, 240), Image.NEAREST).convert("RGB")
    canvas = Image.new("RGB", (650, 262), (20, 22, 26))
    canvas.paste(left, (0, 22))
    canvas.paste(right, (330, 22))
    draw = ImageDraw.Draw(canvas)
    draw.text((4, 4), "stereo_1_left (rgb8, 640x480)", fill=(230, 230, 230))
    draw.text((334, 4), "depth_camera (32FC1, 0-3 m; black: beyond far)", fill=(230, 230, 230))
    canvas.save(out, optimize=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
