"""Configuration of the ``fakesim_hil`` robot type (``--robot.type=fakesim_hil``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lerobot.cameras import CameraConfig
from lerobot.robots.config import RobotConfig

from .features import MOTORS, PAIR, camera_feature

#: Render levels of the twin's cameras.
RENDER_QUALITIES = ("fast", "full")


@RobotConfig.register_subclass("fakesim_hil")
@dataclass
class FakesimHilConfig(RobotConfig):
    """Where the daemon is, which mode to run in, and what an episode and its frames look like."""

    # Daemon address, HOST:PORT or unix:PATH. Unset: the robot starts a daemon of its own for as
    # long as it is connected (fakesim_hil.daemon.LocalDaemon: the fakesim-hil the wheel installed,
    # else daemon_bin, $FAKESIM_HIL_BIN or PATH), twin-only, or driving the arm on `port`.
    address: str | None = None
    # Serial port of the arm the robot's own daemon drives (its --port, with --robot-id set to
    # the robot's id); only without an address.
    port: str | None = None
    # The fakesim-hil binary for the robot's own daemon (unset: found as above), and where it
    # keeps its runs (unset: a new directory under $HF_LEROBOT_HOME/fakesim_hil/runs, kept).
    daemon_bin: str | None = None
    runs_dir: str | None = None
    # One arm of a pair daemon to drive on its own, "left" or "right" (empty: the daemon's one
    # arm). Its features are so101_follower's, its ticks move that arm only, and it takes that
    # arm's control lease only, so another process can drive the other arm. Episodes need both
    # arms' leases, so it starts none: its task_index defaults to -1, and any other is refused.
    arm: str = ""
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
    # Frames per second of the loop driving the robot (set it to --dataset.fps): each action
    # holds 1/fps of twin time in sim (the daemon's control period, set at connect).
    fps: int = 30
    # The episodes the plugin starts (one daemon run each, its summary.json the run's
    # validation report): their task, the layout of the first (each recorded episode N takes
    # layout init_state_index + N, wrapping), and their step budget in control ticks (0: none).
    # task_index -1 drives the robot without an episode; unset, it is 0 for the daemon's one arm
    # and -1 for one arm of a pair (--robot.arm).
    suite: str = "so101_tabletop"
    task_index: int | None = None
    init_state_index: int = 0
    max_steps: int = 0
    # Joint units as LeRobot's so101_follower: degrees (default) or -100..100 for joints 1-5.
    use_degrees: bool = True
    # Twin cameras rendered by the daemon as observation features (a "/" in a daemon's camera
    # name is a "_" in its feature), their frame size and their render level ("fast": no
    # multisampling, shadows or reflections; "full"). Unset: agentview and the arm's wrist
    # camera, robot0_eye_in_hand (with --robot.arm=left, left/robot0_eye_in_hand, whose
    # feature is left_robot0_eye_in_hand). The daemon's camera profiles -- the standard `front`
    # and `wrist` (640x480, as a real SO-101's OpenCV cameras) and those of camera_profiles --
    # come at their own size; image_width and image_height size the others.
    camera_names: list[str] | None = None
    image_width: int = 256
    image_height: int = 256
    render_quality: str = "fast"
    # Camera profile files (TOML, as `fakesim-hil --camera FILE` takes them): the robot's own
    # daemon is started with them, and their cameras' features take their sizes. With an
    # address, give the files the daemon was started with.
    camera_profiles: list[str] = field(default_factory=list)
    # LeRobot cameras (real ones in hil), as so101_follower takes them:
    # --robot.cameras="{front: {type: opencv, index_or_path: 0, width: 640, height: 480, fps: 30}}".
    cameras: dict[str, CameraConfig] = field(default_factory=dict)
    # The joints LeRobot's HIL-SERL environment (python -m lerobot.rl.actor, env type
    # gym_manipulator) drives, in the order of its actions: three values, four with
    # --env.processor.gripper.use_gripper=true. The other joints keep their targets.
    rl_joints: list[str] = field(default_factory=lambda: ["shoulder_pan", "shoulder_lift", "elbow_flex"])

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.address is not None and self.port is not None:
            raise ValueError(
                f"port {self.port!r} is for the robot's own daemon, started without an address; the daemon at "
                f"{self.address} has its ports already"
            )
        if self.arm not in ("", *PAIR):
            raise ValueError(f"arm must be one of {list(PAIR)}, or empty for the daemon's one arm, not {self.arm!r}")
        if self.task_index is None:
            self.task_index = -1 if self.arm else 0
        if self.arm and self.task_index != -1:
            raise ValueError(
                f"task_index must be -1 with arm {self.arm!r}, not {self.task_index}: one arm of a pair starts no "
                "episodes, as an episode needs both arms' leases (bi_fakesim_hil records the pair's episodes)"
            )
        if self.camera_names is None:
            self.camera_names = ["agentview", f"{self.arm}/robot0_eye_in_hand" if self.arm else "robot0_eye_in_hand"]
        if self.fps <= 0:
            raise ValueError(f"fps must be positive, not {self.fps}")
        if self.max_steps < 0:
            raise ValueError(f"max_steps must be 0 (no budget) or positive, not {self.max_steps}")
        if self.render_quality not in RENDER_QUALITIES:
            raise ValueError(f"render_quality must be one of {RENDER_QUALITIES}, not {self.render_quality!r}")
        unknown = sorted(set(self.rl_joints) - set(MOTORS))
        if unknown:
            raise ValueError(f"rl_joints {unknown} are not joints of the arm: {list(MOTORS)}")
        shared = sorted({camera_feature(name) for name in self.camera_names} & set(self.cameras))
        if shared:
            raise ValueError(f"camera names {shared} are both twin cameras (camera_names) and LeRobot cameras (cameras)")
