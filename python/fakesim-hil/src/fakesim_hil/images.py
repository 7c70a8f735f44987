"""Camera frames as numpy arrays."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def decode_png(data: bytes) -> np.ndarray:
    """Decodes an 8-bit RGB PNG into a (height, width, 3) uint8 array."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def decode_depth_png(data: bytes) -> np.ndarray:
    """Decodes a 16-bit greyscale depth PNG into a (height, width) uint16 array of millimetres."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image, dtype=np.uint16)
