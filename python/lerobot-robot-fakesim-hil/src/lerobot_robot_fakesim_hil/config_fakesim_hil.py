"""Configuration of the ``fakesim_hil`` robot type (``--robot.type=fakesim_hil``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lerobot.robots.config import RobotConfig


@RobotConfig.register_subclass("fakesim_hil")
@dataclass
class FakesimHilConfig(RobotConfig):
    """Where the daemon is, which mode to run in, and what an episode and its frames look like."""

    # Daemon address, HOST:PORT or unix:PATH.
    address: str = "127.0.0.1:50051"
    # `sim` drives the twin; `hil` the real arm through the daemon's safety layers.
    mode: str = "sim"
    # Entering hil: "none" (refused if arm and twin disagree), "arm_to_twin" or "twin_to_arm".
    sync: str = "none"
    # Bearer token file and TLS files (the project's connection settings); env vars also apply.
    token_file: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    # Holder name of the control lease, taken at connect when the daemon requires it (a real arm
    # attached, or --lease-in-sim) and renewed while connected.
    lease_holder: str = "lerobot fakesim_hil"
    # The episode each connection runs (its summary.json is the run's validation report);
    # task_index -1 drives the robot without an episode.
    suite: str = "so101_tabletop"
    task_index: int = 0
    init_state_index: int = 0
    # Joint units as LeRobot's so101_follower: degrees (default) or -100..100 for joints 1-5.
    use_degrees: bool = True
    # Daemon cameras recorded as observation features, and their frame size.
    camera_names: list[str] = field(default_factory=lambda: ["agentview", "robot0_eye_in_hand"])
    image_width: int = 256
    image_height: int = 256
