"""The ``fakesim_hil`` robot: LeRobot's SO-101 follower interface over the fakesim-hil daemon."""

from __future__ import annotations

import logging
from contextlib import suppress
from functools import cached_property
from typing import Any

import numpy as np
from lerobot.cameras import Camera, make_cameras_from_configs
from lerobot.robots.robot import Robot
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from fakesim.v1 import robot_pb2, session_pb2
from fakesim_hil import Client, FakesimError
from fakesim_hil.cameras import profile_sizes

from .config_fakesim_hil import FakesimHilConfig
from .features import PAIR, arm_joints, camera_feature, joints
from .joint_bus import REFUSED_TARGETS, JointBus
from .lease import LeaseKeeper
from .own_daemon import OwnDaemon
from .phases import Phase, RecordPhases

logger = logging.getLogger(__name__)

#: The robots connected in this process, for the teleoperators that read their daemon's judgement.
_connected: list[FakesimHil] = []


def connected_robot() -> FakesimHil:
    """The one fakesim_hil robot connected in this process (ValueError: none, or several)."""
    if len(_connected) != 1:
        raise ValueError(f"{len(_connected)} fakesim_hil robots are connected in this process; one is needed")
    return _connected[0]


class FakesimHil(Robot):
    """Each action is one daemon control tick: 1/fps of twin time in sim, goals written and
    returned at once in hil (the loop paces itself, as with so101_follower); joint values are in
    LeRobot's units, converted by the daemon through the calibration.

    Frame k's observation is the state after action k-1 (the first of an episode, one physics
    step after its reset, that step taken off its first action's tick), so an episode of N
    frames holds N/fps of twin time, as its dataset does.

    With ``arm`` set it drives that one arm of a pair: so101_follower's features, that arm's
    ticks and lease, no episodes."""

    config_class = FakesimHilConfig
    name = "fakesim_hil"
    #: The daemon's arms this robot drives, as GetModelInfo's ``arms`` names them: none for a
    #: lone arm (features ``shoulder_pan.pos`` ...), else each arm's features prefixed ``ARM_``.
    arms: tuple[str, ...] = ()

    def __str__(self) -> str:
        """The robot as log lines name it: its ``--robot.id`` and class, or the class alone."""
        return f"{self.id} {type(self).__name__}" if self.id is not None else type(self).__name__

    def __init__(self, config: FakesimHilConfig) -> None:
        super().__init__(config)
        self.config = config
        self.unit = "lerobot_degrees" if config.use_degrees else "lerobot_range"
        self.joints = arm_joints(config.arm) if config.arm else joints(self.arms)
        #: Feature of each twin camera, by the daemon's camera name.
        self.twin_features = {name: camera_feature(name) for name in config.camera_names}
        #: Frame shape (height, width, 3) of each twin camera, by the daemon's camera name: a
        #: profile camera's own size, else the configured image size.
        sizes = profile_sizes(config.camera_profiles)
        default = (config.image_height, config.image_width)
        self.twin_shapes = {name: (*sizes.get(name, default), 3) for name in config.camera_names}
        #: LeRobot cameras (config.cameras), read beside the twin's renders.
        self.lerobot_cameras: dict[str, Camera] = make_cameras_from_configs(config.cameras)
        #: Every camera feature, twin (rendered by the daemon) and LeRobot's; LeRobot's scripts count them.
        self.cameras: dict[str, Camera | str] = {
            **{feature: name for name, feature in self.twin_features.items()},
            **self.lerobot_cameras,
        }
        self.client: Client | None = None
        #: The running episode's run id, and the dataset episode it records (None: connect's).
        self.run: str | None = None
        self._episode: int | None = None
        self._n_layouts = 1
        self._phases = RecordPhases(self._follow)
        self._period_s = 1.0 / config.fps
        self._timestep_s = 0.0
        # Twin time the current frame's observation advanced, taken off its action's tick.
        self._advanced_s = 0.0
        self._targets: list[float] | None = None
        # Where each joint's position is in a tick's observation vector, and its target in
        # GetRobotState's (set at connect).
        self._positions: list[int] = []
        self._targets_at: list[int] = []
        # The period of a tick that gives none of its own: None, the daemon's, set at connect;
        # one arm of a pair gives 1/fps to each (setting the pair's needs both arms' leases).
        self._tick_period_s: float | None = None
        self._last: dict[str, Any] | None = None
        self._lease: LeaseKeeper | None = None
        #: The daemon this robot started at connect (no address given), stopped at disconnect.
        self._own: OwnDaemon | None = None
        #: The joints LeRobot's HIL-SERL environment drives (``lerobot.rl.gym_manipulator``).
        self.bus = JointBus(self, config.rl_joints)

    @property
    def _motors_ft(self) -> dict[str, type]:
        return {joint.feature: float for joint in self.joints}

    @cached_property
    def observation_features(self) -> dict[str, type | tuple]:
        twin = {feature: self.twin_shapes[name] for name, feature in self.twin_features.items()}
        lerobot = {key: (camera.height, camera.width, 3) for key, camera in self.lerobot_cameras.items()}
        return {**self._motors_ft, **twin, **lerobot}

    @cached_property
    def action_features(self) -> dict[str, type]:
        return self._motors_ft

    @property
    def is_connected(self) -> bool:
        return self.client is not None

    def connect(self, calibrate: bool = True) -> None:
        """Connects, switches to the configured mode, sets the control period to 1/fps, starts
        the configured episode and connects the LeRobot cameras."""
        if self.client is not None:
            raise DeviceAlreadyConnectedError(f"{self} is already connected")
        config = self.config
        if config.address is None:
            self._own = OwnDaemon.start(config, pair=bool(self.arms))
            logger.info("%s: started a daemon of its own; its runs are kept in %s", self, self._own.runs_dir)
        address = self._own.address if self._own is not None else config.address
        try:
            client = Client(
                address, token_file=config.token_file, tls_ca=config.tls_ca, tls_cert=config.tls_cert, tls_key=config.tls_key
            )
        except BaseException:
            self._stop_own_daemon()
            raise
        try:
            self._take_control(client)
        except BaseException:
            with suppress(FakesimError):
                self._release_lease()
            client.close()
            self._stop_own_daemon()
            raise
        self.client = client
        # Cameras first: an episode in hil starts the watchdog, which a camera's warm-up would trip.
        for camera in self.lerobot_cameras.values():
            camera.connect()
        if config.task_index >= 0:
            self._n_layouts = client.tasks(config.suite)[config.task_index].n_init_states
            if client.session_info().status == session_pb2.EPISODE_STATUS_RUNNING:
                client.stop()
            self._warm_up()
            self._start_episode(None)
            self._phases.install()
        else:
            self._targets = self._read_targets()
        _connected.append(self)
        logger.info("%s connected to %s (%s mode, %g s per action, run %s)", self, address, config.mode, self._period_s, self.run)

    def _take_control(self, client: Client) -> None:
        """Checks the daemon's arms and mode, takes the lease if required, sets mode and period."""
        config = self.config
        client.wait_ready()
        self._find_joints(client)
        mode = client.mode()
        if config.arm and mode != config.mode:
            raise ValueError(
                f"{self} drives arm {config.arm!r} of the pair at {config.address}, which runs in {mode}, not {config.mode}: "
                f"one arm cannot switch the pair's mode (SetMode needs both arms' leases); start the daemon with "
                f"--mode {config.mode}, or switch it first with HardwareService/SetMode"
            )
        status = client.status(config.arm)
        if status.lease_required or status.port:
            self._lease = LeaseKeeper(client, config.lease_holder, config.arm)
        if mode != config.mode:
            client.set_mode(config.mode, sync=config.sync)
        if config.arm:
            self._period_s = self._tick_period_s = 1.0 / config.fps
        else:
            self._period_s = client.set_control_period(1.0 / config.fps).period_s
        self._timestep_s = client.model_info().timestep_s

    def _find_joints(self, client: Client) -> None:
        """Finds this robot's joints in the daemon's vectors (ValueError: other arms than it drives)."""
        info = client.model_info()
        running, arm = tuple(info.arms), self.config.arm
        if arm and running != PAIR:
            raise ValueError(
                f"{self} drives arm {arm!r} of a pair, the daemon at {self.config.address} runs {list(running) or 'one arm'} "
                "(--robot.arm is for a pair: fakesim-hil --pair; leave it empty for the daemon's one arm)"
            )
        if not arm and running != self.arms:
            raise ValueError(
                f"{self} drives the arms {list(self.arms)}, the daemon at {self.config.address} runs {list(running)} "
                "(robot type fakesim_hil drives a lone arm, or one arm of a pair with --robot.arm=left or right; "
                "bi_fakesim_hil a pair: fakesim-hil --pair)"
            )
        self._check_camera_sizes(info)
        keys = list(info.observation_keys)
        self._positions = [keys.index(joint.observation_key) for joint in self.joints]
        side = f"{arm}/" if arm else ""
        self._targets_at = [index for index, key in enumerate(info.action_keys) if key.startswith(side)]

    def _check_camera_sizes(self, info: robot_pb2.GetModelInfoResponse) -> None:
        """Refuses twin cameras the daemon draws at another size than their features declare
        (a profile of the daemon's the robot was not given in camera_profiles, or the reverse)."""
        own = {size.camera: (size.height, size.width) for size in info.camera_sizes}
        default = (self.config.image_height, self.config.image_width)
        for name, shape in self.twin_shapes.items():
            drawn = own.get(name, default)
            if drawn != shape[:2]:
                raise ValueError(
                    f"{self}: the daemon draws camera {name!r} at {drawn[1]}x{drawn[0]}, its feature declares "
                    f"{shape[1]}x{shape[0]}: give the robot the daemon's camera profiles (--robot.camera_profiles) "
                    "or set --robot.image_width/--robot.image_height for a camera without a profile"
                )

    def _read_targets(self) -> list[float]:
        """This robot's joint targets in the daemon now, in its unit."""
        assert self.client is not None
        targets = self.client.robot_state(self.unit).ctrl_targets
        return [targets[index] for index in self._targets_at]

    def positions(self) -> dict[str, float]:
        """Each joint's position now (LeRobot units), read without a tick: nothing moves."""
        if self.client is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        positions = self.client.robot_state(self.unit).positions
        return {joint.feature: positions[index] for joint, index in zip(self.joints, self._targets_at)}

    def _release_lease(self) -> None:
        """Gives the control lease back, if held."""
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.release()

    def _warm_up(self) -> None:
        """Two ticks holding the targets, outside any episode, with the twin's cameras: the
        renderer's first frames at a size take several times a frame's time, which would
        cost the first episode frames (LeRobot's clock runs on)."""
        assert self.client is not None
        if self.config.camera_names:
            targets = self._read_targets()
            for _ in range(2):
                self._tick(targets, None)

    def _start_episode(self, episode: int | None) -> None:
        """Starts the run of a dataset episode (None: the one connect starts) on its layout."""
        assert self.client is not None
        config = self.config
        layout = (config.init_state_index + (episode or 0)) % self._n_layouts
        # Only the run id is read: the reset draws no images (the next tick draws the cameras).
        self.run = self.client.reset(config.suite, config.task_index, layout, max_steps=config.max_steps, cameras=()).run
        self._episode = episode
        self._targets = self._read_targets()
        self._last = None
        self._advanced_s = 0.0
        logger.info("%s: run %s for episode %s on layout %d", self, self.run, episode if episode is not None else 0, layout)

    def _stop_episode(self) -> None:
        """Stops the running episode, which writes its summary.json."""
        assert self.client is not None
        if self.run is not None and self.client.session_info().status == session_pb2.EPISODE_STATUS_RUNNING:
            stopped = self.client.stop()
            logger.info("%s: run %s ended (success %s), report in %s", self, self.run, stopped.success, stopped.artifacts.summary)
        self.run = None

    def _follow(self, phase: Phase) -> None:
        """Maps one lerobot-record phase to daemon runs: an episode is a run, a reset none."""
        if phase.kind == "reset":
            self._stop_episode()
        elif phase.kind == "rerecord":
            logger.info("%s: LeRobot discards the episode just recorded; its run stays on disk", self)
        elif phase.kind == "episode":
            fresh = self.run is not None and self._episode is None and self._last is None and self._advanced_s == 0.0
            if fresh and phase.episode == 0:
                self._episode = 0  # the run connect started is this episode's
                return
            self._stop_episode()
            self._start_episode(phase.episode)

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Nothing to do: the daemon holds the arm's calibration."""

    def configure(self) -> None:
        """Nothing to do: the daemon configures the servos."""

    def _tick(self, targets: list[float], period_s: float | None) -> dict[str, Any]:
        assert self.client is not None
        config = self.config
        result = self.client.tick(
            targets,
            images=bool(config.camera_names),
            cameras=config.camera_names,
            width=config.image_width,
            height=config.image_height,
            unit=self.unit,
            period_s=self._tick_period_s if period_s is None else period_s,
            render_quality=config.render_quality,
            arm=config.arm,
        )
        observation: dict[str, Any] = {
            joint.feature: float(result.observation[index]) for joint, index in zip(self.joints, self._positions)
        }
        observation.update((self.twin_features[name], image) for name, image in result.images.items())
        return observation

    def targets(self) -> dict[str, float]:
        """Each joint's target, as the last action set it (LeRobot units)."""
        if self._targets is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        return {joint.feature: value for joint, value in zip(self.joints, self._targets)}

    def judgement(self) -> bool:
        """The daemon's judgement of the running episode's task on the twin now (False: no episode runs)."""
        if self.client is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        info = self.client.session_info()
        return info.HasField("success") and info.success

    def get_observation(self) -> dict[str, Any]:
        """Joint positions (LeRobot units) and twin frames after the last action, and the
        LeRobot cameras' latest frames; without an action since the last observation, one
        physics step holding the targets."""
        if self.client is None or self._targets is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        if self._last is None:
            self._last = self._hold_or_read()
        observation, self._last = self._last, None
        for key, camera in self.lerobot_cameras.items():
            observation[key] = camera.read_latest()
        return observation

    def _hold_or_read(self) -> dict[str, Any]:
        """One physics step holding the targets; where the daemon refuses that hold for where
        the targets lie (the arm standing where its preview foresees a contact, in hil) and no
        twin camera needs the tick's frames, the joints read without moving instead."""
        assert self._targets is not None
        try:
            observation = self._tick(self._targets, self._timestep_s)
        except FakesimError as refusal:
            if refusal.reason not in REFUSED_TARGETS or self.config.camera_names:
                raise
            logging.warning("holding the targets was refused, the joints read without a tick: %s", refusal)
            return self.positions()
        self._advanced_s += self._timestep_s
        return observation

    def send_action(self, action: dict[str, Any]) -> dict[str, Any]:
        """Runs one control tick toward the targets; joints the action leaves out keep theirs."""
        if self.client is None or self._targets is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        targets = [float(np.asarray(action.get(joint.feature, old))) for joint, old in zip(self.joints, self._targets)]
        period_s = None
        if self._advanced_s > 0.0:
            period_s = max(self._period_s - self._advanced_s, self._timestep_s)
        self._last = self._tick(targets, period_s)
        self._advanced_s = 0.0
        self._targets = targets
        return {joint.feature: value for joint, value in zip(self.joints, targets)}

    def disconnect(self) -> None:
        """Stops the episode (writing its summary.json), the LeRobot cameras and the connection."""
        if self.client is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        _connected.remove(self)
        self._phases.remove()
        self._stop_episode()
        for camera in self.lerobot_cameras.values():
            if camera.is_connected:
                camera.disconnect()
        self._release_lease()
        self.client.close()
        self.client = None
        self._stop_own_daemon()

    def _stop_own_daemon(self) -> None:
        """Stops the daemon this robot started, if it started one."""
        own, self._own = self._own, None
        if own is not None:
            own.stop()
