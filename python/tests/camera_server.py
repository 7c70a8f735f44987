"""A camera for LeRobot's own `ZMQCamera` (type `zmq`) without hardware: a publisher on loopback
sending a solid-colour JPEG in the JSON messages that camera reads, at its frame rate."""

from __future__ import annotations

import base64
import json
import threading
import time

import cv2
import numpy as np
import zmq


class SolidColourCamera:
    """Publishes ``colour`` (RGB) frames of ``width`` x ``height`` as camera ``name`` until closed."""

    def __init__(self, name: str, colour: tuple[int, int, int], width: int, height: int, fps: float = 30.0) -> None:
        self.name = name
        self.colour = colour
        self.width = width
        self.height = height
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.PUB)
        self._socket.setsockopt(zmq.LINGER, 0)
        self.port = self._socket.bind_to_random_port("tcp://127.0.0.1")
        rgb = np.full((height, width, 3), colour, dtype=np.uint8)
        # As LeRobot's own image server does, the RGB array goes to the encoder as it is, and
        # ZMQCamera's decoder gives it back in that order.
        ok, jpeg = cv2.imencode(".jpg", rgb, [int(cv2.IMWRITE_JPEG_QUALITY), 95])
        assert ok
        self._payload = base64.b64encode(jpeg.tobytes()).decode("ascii")
        self._period_s = 1.0 / fps
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._publish, name=f"camera {name}", daemon=True)
        self._thread.start()

    def config(self) -> str:
        """The camera's entry for ``--robot.cameras``."""
        return (
            f"{self.name}: {{type: zmq, server_address: 127.0.0.1, port: {self.port}, camera_name: {self.name}, "
            f"width: {self.width}, height: {self.height}, fps: 30}}"
        )

    def _publish(self) -> None:
        # The camera's frame clock: one frame per period until closed.
        while not self._closed.wait(self._period_s):
            message = {"timestamps": {self.name: time.time()}, "images": {self.name: self._payload}}
            self._socket.send_string(json.dumps(message))

    def close(self) -> None:
        """Stops publishing and closes the socket."""
        self._closed.set()
        self._thread.join(timeout=5)
        self._socket.close()
        self._context.term()

    def __enter__(self) -> SolidColourCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
