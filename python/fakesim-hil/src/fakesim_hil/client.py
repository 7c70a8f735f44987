"""A small typed client over the daemon's session, robot, hardware and preview services."""

from __future__ import annotations

import copy
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal, TypedDict, TypeVar

import grpc
import numpy as np

from fakesim.v1 import common_pb2, hardware_pb2, preview_pb2, robot_pb2, session_pb2
from fakesim.v1.hardware_pb2_grpc import HardwareServiceStub
from fakesim.v1.preview_pb2_grpc import PreviewServiceStub
from fakesim.v1.robot_pb2_grpc import RobotServiceStub
from fakesim.v1.session_pb2_grpc import SessionServiceStub

from .connection import DEFAULT_ADDRESS, Connection
from .direct import DirectCalls, supports
from .errors import FakesimError, status_code
from .images import decode_depth_png, decode_png

if TYPE_CHECKING:
    from typing_extensions import Unpack

Response = TypeVar("Response")

#: Operating modes by name.
ModeName = Literal["sim", "mirror", "hil"]
_MODES: dict[str, int] = {
    "sim": hardware_pb2.MODE_SIM,
    "mirror": hardware_pb2.MODE_MIRROR,
    "hil": hardware_pb2.MODE_HIL,
}
_SYNCS: dict[str, int] = {
    "none": hardware_pb2.SYNC_OPTION_NONE,
    "arm_to_twin": hardware_pb2.SYNC_OPTION_MOVE_ARM_TO_TWIN,
    "twin_to_arm": hardware_pb2.SYNC_OPTION_MOVE_TWIN_TO_ARM,
}
_GRIPPER: dict[str, int] = {
    "open": session_pb2.GRIPPER_COMMAND_OPEN,
    "close": session_pb2.GRIPPER_COMMAND_CLOSE,
}

#: Joint units by name: radians (the default) or LeRobot's SO-101 units, converted by the daemon.
UnitName = Literal["rad", "lerobot_degrees", "lerobot_range"]
_UNITS: dict[str, int] = {
    "rad": common_pb2.JOINT_UNIT_RADIANS,
    "lerobot_degrees": common_pb2.JOINT_UNIT_LEROBOT_DEGREES,
    "lerobot_range": common_pb2.JOINT_UNIT_LEROBOT_RANGE,
}

#: Render levels by name: ``fast`` (no multisampling, shadows or reflections) or ``full``.
RenderQualityName = Literal["fast", "full"]
_QUALITIES: dict[str, int] = {
    "fast": common_pb2.RENDER_QUALITY_FAST,
    "full": common_pb2.RENDER_QUALITY_FULL,
}

#: The session service's camera names, in the order `Images` carries them.
SESSION_CAMERAS = ("agentview", "robot0_eye_in_hand")

#: Channel options of every client: frames of two 640x480 raw cameras fit in a message, and a
#: daemon on loopback or a Unix socket is reached directly (no proxy lookup, no retry buffering).
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.enable_http_proxy", 0),
    ("grpc.enable_retries", 0),
]

#: The paths of the calls `Client` sends on its direct route (`fakesim_hil.direct`).
TICK_PATH = "/fakesim.v1.RobotService/Tick"
STATE_PATH = "/fakesim.v1.RobotService/GetRobotState"


def mode_name(mode: int) -> str:
    """The name (``sim``, ``mirror``, ``hil``) of a `fakesim.v1.Mode` value."""
    for name, value in _MODES.items():
        if value == mode:
            return name
    raise ValueError(f"unknown mode value {mode}")


@dataclass(frozen=True)
class ImageTiming:
    """How long the daemon took for a call's images, seconds."""

    #: Drawing the cameras and reading their pixels back.
    render_s: float
    #: Encoding the frames (PNG; near zero for raw frames).
    encode_s: float

    @classmethod
    def from_proto(cls, timing: common_pb2.ImageTiming) -> ImageTiming:
        """The timing of an answer."""
        return cls(render_s=timing.render_s, encode_s=timing.encode_s)


@dataclass(frozen=True)
class Observation:
    """End-effector state and the session's camera images as arrays."""

    #: Camera name to a (height, width, 3) uint8 image.
    images: dict[str, np.ndarray]
    #: TCP position, metres, world frame.
    eef_pos_m: np.ndarray
    #: TCP roll, pitch, yaw, radians.
    eef_rpy_rad: np.ndarray
    #: Distance between the jaw tips, metres.
    gripper_opening_m: float
    #: Steps used in the episode so far.
    step: int
    #: Steps left in the episode.
    steps_left: int
    #: How long the daemon took to draw and encode the images.
    timing: ImageTiming

    @classmethod
    def from_proto(cls, images: session_pb2.Images, state: session_pb2.EefState, step: int, steps_left: int) -> Observation:
        """Decodes the images and state of a session response."""
        pos, rpy = state.eef_pos_m, state.eef_rpy_rad
        return cls(
            images={name: decode_png(getattr(images, name)) for name in SESSION_CAMERAS if getattr(images, name)},
            eef_pos_m=np.array([pos.x, pos.y, pos.z]),
            eef_rpy_rad=np.array([rpy.roll_x, rpy.pitch_y, rpy.yaw_z]),
            gripper_opening_m=state.gripper.opening_m,
            step=step,
            steps_left=steps_left,
            timing=ImageTiming.from_proto(images.timing),
        )


@dataclass(frozen=True)
class TickResult:
    """What one control tick returned."""

    #: Observation vector laid out as `ModelInfo.observation_keys`.
    observation: np.ndarray
    #: Camera name to a (height, width, 3) uint8 image; empty unless images were asked for.
    images: dict[str, np.ndarray]
    #: Camera name to a (height, width) uint16 depth image in millimetres, when asked for.
    depth: dict[str, np.ndarray]
    #: Physics steps since the model was loaded.
    physics_steps: int
    #: Simulation time, seconds.
    time_s: float
    #: How long the daemon took to draw and encode the images; None without images.
    image_timing: ImageTiming | None
    #: True when, in hil, the arm was found blocked during the tick and held where it stood.
    blocked: bool

    @classmethod
    def from_proto(cls, answer: robot_pb2.TickResponse) -> TickResult:
        """Decodes a Tick answer (its frames raw or PNG)."""
        values = answer.observation
        frames = answer.frames
        return cls(
            observation=np.fromiter(values, np.float64, len(values)),
            images={frame.camera: decode_color(frame) for frame in frames} if frames else {},
            depth={frame.camera: decode_depth_png(frame.depth_png) for frame in frames if frame.HasField("depth_png")}
            if frames
            else {},
            physics_steps=answer.physics_steps,
            time_s=answer.time_s,
            image_timing=ImageTiming.from_proto(answer.image_timing) if frames else None,
            blocked=answer.blocked,
        )


class PendingTick:
    """A tick sent by `Client.tick_async`, its answer not read yet."""

    def __init__(self, future: grpc.Future) -> None:
        self._future = future

    def result(self) -> TickResult:
        """Waits for the tick's answer; a refusal raises `FakesimError`."""
        try:
            return TickResult.from_proto(self._future.result())
        except grpc.RpcError as error:
            raise FakesimError.from_rpc_error(error) from None


@dataclass(frozen=True)
class ChunkStop:
    """Why a chunk ended before its last tick: the refused tick and the refusal."""

    #: Index of the refused tick (the number of ticks run).
    tick_index: int
    #: The refusal's gRPC status code.
    code: grpc.StatusCode
    #: The refusal's reason, e.g. ``step_limit``.
    reason: str
    #: The refusal's message.
    message: str

    @classmethod
    def from_proto(cls, stopped: robot_pb2.ChunkStop) -> ChunkStop:
        """The stop of a TickChunk answer."""
        return cls(tick_index=stopped.tick_index, code=status_code(stopped.code), reason=stopped.reason, message=stopped.message)


@dataclass(frozen=True)
class ChunkResult:
    """What a chunk of control ticks returned."""

    #: One result per tick run, in order.
    ticks: list[TickResult]
    #: Set when a tick after the first was refused and the chunk ended there.
    stopped: ChunkStop | None


class Client:
    """A connection to one daemon; every failed call raises `FakesimError`.

    Calls go through grpcio, except, when ``direct`` (and the address is one the extension
    dials), the hot ones (`tick`, `robot_state`): those go on tonic's HTTP/2 client, a connection
    of the calling thread's own driven by that thread (`fakesim_hil.direct`), sparing grpcio's
    hand-off to its I/O threads; TLS and the token apply to both routes."""

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        token: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
        timeout_s: float | None = 60.0,
        direct: bool = True,
    ) -> None:
        self.connection = Connection.resolve(
            address, token=token, token_file=token_file, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key
        )
        self.timeout_s = timeout_s
        self._channel = self.connection.channel(CHANNEL_OPTIONS)
        self._direct = DirectCalls(self.connection) if direct and supports(address) else None
        self.session = SessionServiceStub(self._channel)
        self.robot = RobotServiceStub(self._channel)
        self.hardware = HardwareServiceStub(self._channel)
        self.preview = PreviewServiceStub(self._channel)
        self._model: robot_pb2.GetModelInfoResponse | None = None
        self._lease_id: str | None = None
        # What every call carries, made once and again only when the lease changes; None when
        # nothing (grpcio spends some 40 µs of CPU a call on an empty tuple, none on None).
        self._metadata = self.connection.call_metadata()
        self._call_metadata = self._metadata or None
        # Per thread, the last tick's options and the request made from them, refilled with
        # each action (a thread's request is never refilled while another sends it).
        self._ticks = threading.local()
        self._state_requests: dict[str, robot_pb2.GetRobotStateRequest] = {}

    def close(self) -> None:
        """Closes the channel (and the direct route's connections)."""
        self._channel.close()
        if self._direct is not None:
            self._direct.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Blocks until the channel is connected, or raises `FakesimError` (DEADLINE_EXCEEDED)."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout_s)
        except grpc.FutureTimeoutError:
            raise FakesimError(grpc.StatusCode.DEADLINE_EXCEEDED, f"no connection to {self.connection.address}") from None

    @property
    def lease_id(self) -> str | None:
        """The control lease this client's calls carry (None: none)."""
        return self._lease_id

    @lease_id.setter
    def lease_id(self, lease_id: str | None) -> None:
        self._lease_id = lease_id
        lease = (("x-fakesim-lease", lease_id),) if lease_id else ()
        self._metadata = self.connection.call_metadata() + lease
        self._call_metadata = self._metadata or None

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """Metadata sent with every call: the bearer token and the control lease, when held."""
        return self._metadata

    def call(self, method: Callable[..., Response], request: Any) -> Response:
        """Runs one unary call with the connection's metadata, raising `FakesimError` on failure."""
        try:
            return method(request, timeout=self.timeout_s, metadata=self._call_metadata)
        except grpc.RpcError as error:
            raise FakesimError.from_rpc_error(error) from None

    # --- session ---------------------------------------------------------------------------

    def suites(self) -> list[session_pb2.SuiteSummary]:
        """The suites the daemon knows."""
        return list(self.call(self.session.ListTasks, session_pb2.ListTasksRequest()).suites)

    def tasks(self, suite: str = "so101_tabletop") -> list[session_pb2.TaskSummary]:
        """The tasks of one suite, in index order."""
        return list(self.call(self.session.ListTasks, session_pb2.ListTasksRequest(suite=suite)).tasks)

    def reset(
        self,
        suite: str | None = None,
        task_index: int | None = None,
        init_state_index: int | None = None,
        *,
        max_steps: int | None = None,
        cameras: Sequence[str] = SESSION_CAMERAS,
        render_quality: RenderQualityName | None = None,
        seed: int | None = None,
    ) -> session_pb2.ResetTaskResponse:
        """Starts an episode (the default scene when suite, task and layout are None).

        ``max_steps`` is its step budget in control ticks: None the daemon's ``--max-steps``,
        0 none (a recorder's episode), N that many. ``cameras`` are the images drawn for the
        answer, at ``render_quality`` (None: the daemon's level): both, as the episode tools
        answer, unless told otherwise; ``()`` draws none and answers without ``images``, the
        cheap reset for a caller that does not look. ``seed`` draws the episode's look within
        the daemon's ``[variations]`` (the same seed, the same frames); None: a fresh one. The
        look drawn is in the episode's ``summary.json``."""
        request = session_pb2.ResetTaskRequest(
            suite=suite,
            task_index=task_index,
            init_state_index=init_state_index,
            max_steps=max_steps,
            cameras=cameras,
            render_quality=_quality(render_quality),
            seed=seed,
        )
        return self.call(self.session.ResetTask, request)

    def observe(self, render_quality: RenderQualityName | None = None, *, arm: str = "") -> Observation:
        """The current images and end-effector state, without advancing anything; the images
        drawn at ``render_quality`` (None: the daemon's ``--render-quality``); on a pair daemon,
        ``arm``'s end effector."""
        request = session_pb2.GetObservationRequest(render_quality=_quality(render_quality), arm=arm)
        answer = self.call(self.session.GetObservation, request)
        return Observation.from_proto(answer.images, answer.state, answer.step, answer.steps_left)

    def move(
        self, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0, *, rpy: Sequence[float] | None = None, arm: str = ""
    ) -> session_pb2.MoveResponse:
        """Moves the TCP by a Cartesian delta (metres), optionally rotating it (radians); on a
        pair daemon, the TCP of ``arm`` (``left`` or ``right``)."""
        request = session_pb2.MoveRequest(delta_xyz=common_pb2.Vec3(x=dx, y=dy, z=dz), arm=arm)
        if rpy is not None:
            roll, pitch, yaw = rpy
            request.delta_rpy.CopyFrom(common_pb2.Rpy(roll_x=roll, pitch_y=pitch, yaw_z=yaw))
        return self.call(self.session.Move, request)

    def gripper(self, command: Literal["open", "close"], *, arm: str = "") -> session_pb2.GripperResponse:
        """Opens or closes the gripper until it settles; on a pair daemon, ``arm``'s."""
        if command not in _GRIPPER:
            raise ValueError(f"gripper command must be 'open' or 'close', not {command!r}")
        return self.call(self.session.Gripper, session_pb2.GripperRequest(command=_GRIPPER[command], arm=arm))

    def stop(self) -> session_pb2.StopEpisodeResponse:
        """Ends the episode; the answer holds the daemon's judgement (``success``), the
        validation report (``validation_json``, see `validation_report`) and the paths of its
        artifacts (summary.json, events, frames)."""
        return self.call(self.session.StopEpisode, session_pb2.StopEpisodeRequest())

    def session_info(self) -> session_pb2.GetSessionInfoResponse:
        """Status, task, step counts and state of the session."""
        return self.call(self.session.GetSessionInfo, session_pb2.GetSessionInfoRequest())

    # --- robot -----------------------------------------------------------------------------

    def model_info(self) -> robot_pb2.GetModelInfoResponse:
        """Joints, action keys, control rate and cameras (fetched once, then cached; its
        ``control_period_s`` is the period at that time, `set_control_period` answers the new one)."""
        if self._model is None:
            self._model = self.call(self.robot.GetModelInfo, robot_pb2.GetModelInfoRequest())
        return self._model

    def set_control_period(self, period_s: float) -> robot_pb2.SetControlPeriodResponse:
        """Sets the twin time each `tick` advances in sim, seconds, for the daemon's session
        (0: back to the model's tick); the answer holds the period in force and its physics
        steps per tick."""
        return self.call(self.robot.SetControlPeriod, robot_pb2.SetControlPeriodRequest(period_s=period_s))

    def robot_state(self, unit: UnitName = "rad") -> robot_pb2.GetRobotStateResponse:
        """Joint positions and targets (in ``unit``), velocities (rad/s) and the TCP pose."""
        request = self._state_requests.get(unit)
        if request is None:
            request = self._state_requests[unit] = robot_pb2.GetRobotStateRequest(unit=_unit(unit))
        return self._hot(self.robot.GetRobotState, STATE_PATH, robot_pb2.GetRobotStateResponse, request)

    def send_action(
        self, action: Mapping[str, float] | Sequence[float], n_substeps: int | None = None, *, unit: UnitName = "rad"
    ) -> robot_pb2.SendActionResponse:
        """Writes joint targets (by name, or ordered as the action keys) and steps the physics."""
        request = robot_pb2.SendActionRequest(action=joint_values(action), n_substeps=n_substeps, unit=_unit(unit))
        return self.call(self.robot.SendAction, request)

    def set_joint_positions(self, positions: Mapping[str, float] | Sequence[float], hold: bool = True) -> robot_pb2.SetJointPositionsResponse:
        """Teleports joints (simulation only), moving the servo setpoints along when ``hold``."""
        request = robot_pb2.SetJointPositionsRequest(positions=joint_values(positions), hold=hold)
        return self.call(self.robot.SetJointPositions, request)

    def tick(self, action: Sequence[float], **options: Unpack[TickOptions]) -> TickResult:
        """One control tick with an ordered action vector; images rendered after it for the
        cameras asked for (the options: `TickOptions`). The request made for a set of options
        is kept and refilled with the next action while the options stay the same."""
        request = self._tick_request(action, options)
        return TickResult.from_proto(self._hot(self.robot.Tick, TICK_PATH, robot_pb2.TickResponse, request))

    def _hot(self, method: Callable[..., Response], path: str, answer: type[Response], request: Any) -> Response:
        """`call` on the direct route when the client has one (``path`` the method's, ``answer``
        its response type), else through grpcio."""
        if self._direct is None:
            return self.call(method, request)
        return answer.FromString(self._direct.unary(path, request.SerializeToString(), self.timeout_s, self._metadata))  # type: ignore[attr-defined]

    def tick_async(self, action: Sequence[float], **options: Unpack[TickOptions]) -> PendingTick:
        """`tick` without waiting: the tick is sent and its answer comes from the returned
        `PendingTick`; ticks to several daemons (a vector env's) are then in flight together."""
        request = self._tick_request(action, options)
        try:
            return PendingTick(self.robot.Tick.future(request, timeout=self.timeout_s, metadata=self._call_metadata))
        except grpc.RpcError as error:
            raise FakesimError.from_rpc_error(error) from None

    def _tick_request(self, action: Sequence[float], options: TickOptions) -> robot_pb2.TickRequest:
        """This thread's request for ``options`` (made again only when they change), holding
        ``action``."""
        ticks = self._ticks
        if options != getattr(ticks, "options", None):
            ticks.request = tick_request((), self._with_cameras(options))
            ticks.options = {key: copy.copy(value) for key, value in options.items()}
        request = ticks.request
        request.action[:] = action.tolist() if isinstance(action, np.ndarray) else [float(v) for v in action]
        return request

    def _with_cameras(self, options: TickOptions) -> TickOptions:
        """The options with the cameras named: ``images=True`` without ``cameras`` names every
        camera of the model (the daemon draws only the cameras a request names)."""
        if options.get("images") and not options.get("cameras"):
            return {**options, "cameras": list(self.model_info().cameras)}
        return options

    def tick_chunk(self, actions: Sequence[Sequence[float]], **options: Unpack[TickOptions]) -> ChunkResult:
        """Runs a chunk of control ticks (1..256 actions, one per tick) in one round trip, each
        tick as `tick` with the same keyword options would run it; the chunk ends early, with
        ``stopped`` set, at a tick the daemon refuses after the first (a refused first tick
        raises `FakesimError`)."""
        options = self._with_cameras(options)
        request = robot_pb2.TickChunkRequest(ticks=[tick_request(action, options) for action in actions])
        answer = self.call(self.robot.TickChunk, request)
        stopped = ChunkStop.from_proto(answer.stopped) if answer.HasField("stopped") else None
        return ChunkResult(ticks=[TickResult.from_proto(tick) for tick in answer.ticks], stopped=stopped)

    def preview_actions(
        self,
        actions: Sequence[Mapping[str, float] | Sequence[float]],
        *,
        horizon_ticks: int = 0,
        n_substeps: int | None = None,
        unit: UnitName = "rad",
        start: Sequence[float] | None = None,
        max_joint_speed_rad_s: float | None = None,
    ) -> preview_pb2.PreviewActionsResponse:
        """Runs a chunk of actions (one per control tick, then ``horizon_ticks`` holding the last)
        on a scratch copy of the twin and reports contacts, joint peaks, the table clearance, a
        gripper stall and the violations; moves nothing, in any mode.

        ``start`` gives the arm's joint positions (in ``unit``) to start from, at rest; without it
        the preview starts from the twin (with a real arm, the measured arm)."""
        request = preview_pb2.PreviewActionsRequest(
            actions=[joint_values(action) for action in actions],
            horizon_ticks=horizon_ticks,
            n_substeps=n_substeps,
            unit=_unit(unit),
            max_joint_speed_rad_s=max_joint_speed_rad_s,
        )
        if start is not None:
            request.start.positions.extend(float(v) for v in start)
        return self.call(self.preview.PreviewActions, request)

    # --- hardware --------------------------------------------------------------------------

    def status(self, arm: str = "") -> hardware_pb2.GetHardwareStatusResponse:
        """Mode, port, servos, emergency stop, safety events, lease holder (a pair's ``arm``; empty: left)."""
        return self.call(self.hardware.GetHardwareStatus, hardware_pb2.GetHardwareStatusRequest(arm=arm))

    def mode(self) -> str:
        """The mode in force: ``sim``, ``mirror`` or ``hil``."""
        return mode_name(self.status().mode)

    def set_mode(
        self,
        mode: ModeName,
        *,
        sync: Literal["none", "arm_to_twin", "twin_to_arm"] = "none",
        sync_max_speed_rad_s: float | None = None,
    ) -> hardware_pb2.SetModeResponse:
        """Switches the operating mode; the episode is kept."""
        if mode not in _MODES or sync not in _SYNCS:
            raise ValueError(f"mode must be one of {sorted(_MODES)} and sync one of {sorted(_SYNCS)}")
        request = hardware_pb2.SetModeRequest(mode=_MODES[mode], sync=_SYNCS[sync], sync_max_speed_rad_s=sync_max_speed_rad_s)
        return self.call(self.hardware.SetMode, request)

    def acquire_lease(
        self, holder: str, ttl_ms: int = 5000, *, takeover: bool = False, arm: str = ""
    ) -> hardware_pb2.AcquireLeaseResponse:
        """Takes the control lease (taking it from another holder only with `takeover`); later
        calls carry it until it is released. On a pair, ``arm`` (``left``, ``right``) takes that
        arm's lease only; empty takes every arm's."""
        request = hardware_pb2.AcquireLeaseRequest(holder=holder, ttl_ms=ttl_ms, takeover=takeover, arm=arm)
        granted = self.call(self.hardware.AcquireLease, request)
        self.lease_id = granted.lease.lease_id
        return granted

    def renew_lease(self) -> hardware_pb2.RenewLeaseResponse:
        """Extends the lease this client holds by its time to live."""
        return self.call(self.hardware.RenewLease, hardware_pb2.RenewLeaseRequest(lease_id=self.lease_id or ""))

    def release_lease(self) -> None:
        """Gives the lease back; later calls carry none."""
        self.call(self.hardware.ReleaseLease, hardware_pb2.ReleaseLeaseRequest(lease_id=self.lease_id or ""))
        self.lease_id = None

    def emergency_stop(self, reason: str = "") -> hardware_pb2.EmergencyStopResponse:
        """Latches the emergency stop (torque off; motion refused until reset)."""
        return self.call(self.hardware.EmergencyStop, hardware_pb2.EmergencyStopRequest(reason=reason))

    def reset_emergency_stop(self) -> hardware_pb2.ResetEmergencyStopResponse:
        """Clears a latched emergency stop."""
        return self.call(self.hardware.ResetEmergencyStop, hardware_pb2.ResetEmergencyStopRequest())

    def joint_states(self, rate_hz: float) -> Iterator[hardware_pb2.JointStatesSample]:
        """Streams real and twin joint states until the iterator is closed."""
        try:
            stream = self.hardware.StreamJointStates(
                hardware_pb2.StreamJointStatesRequest(rate_hz=rate_hz), metadata=self.metadata()
            )
        except grpc.RpcError as error:
            raise FakesimError.from_rpc_error(error) from None
        try:
            yield from _guarded(stream)
        finally:
            stream.cancel()


class TickOptions(TypedDict, total=False):
    """Options of a control tick (`Client.tick`, `Client.tick_chunk`); unset, the default named."""

    #: Render frames after the tick (False; True when ``cameras`` names any).
    images: bool
    #: The cameras to render (none; with ``images`` and no list, every camera of the model).
    cameras: Sequence[str]
    #: Frame size (0: the model's default).
    width: int
    height: int
    #: Depth images too (False).
    depth: bool
    #: Units of the action and the observation's joint positions (``rad``; or a LeRobot unit).
    unit: UnitName
    #: Unencoded RGB, cheapest on one machine (True), else PNG.
    raw_images: bool
    #: This tick's twin time in sim (None: the control period in force).
    period_s: float | None
    #: How its frames are drawn (None: the daemon's ``--render-quality``).
    render_quality: RenderQualityName | None
    #: On a pair, the one arm this tick drives (``left``, ``right``; the action its six values,
    #: the other arm keeping its goals); empty: every arm.
    arm: str


def tick_request(action: Sequence[float], options: TickOptions) -> robot_pb2.TickRequest:
    """The Tick request of one action and its options (an unknown option raises TypeError)."""
    unknown = sorted(set(options) - set(TickOptions.__annotations__))
    if unknown:
        raise TypeError(f"unknown tick options {unknown} (known: {sorted(TickOptions.__annotations__)})")
    cameras = list(options.get("cameras", ()))
    return robot_pb2.TickRequest(
        action=[float(v) for v in action],
        want_images=options.get("images", bool(cameras)),
        cameras=cameras,
        width=options.get("width", 0),
        height=options.get("height", 0),
        want_depth=options.get("depth", False),
        depth_encoding=robot_pb2.DEPTH_ENCODING_PNG,
        color_encoding=robot_pb2.COLOR_ENCODING_RAW if options.get("raw_images", True) else robot_pb2.COLOR_ENCODING_PNG,
        unit=_unit(options.get("unit", "rad")),
        period_s=options.get("period_s"),
        render_quality=_quality(options.get("render_quality")),
        arm=options.get("arm", ""),
    )


def decode_color(frame: robot_pb2.CameraFrame) -> np.ndarray:
    """A tick's colour frame, raw or PNG, as a (height, width, 3) uint8 array."""
    if frame.color_raw:
        return np.frombuffer(frame.color_raw, dtype=np.uint8).reshape(frame.height, frame.width, 3).copy()
    return decode_png(frame.color_png)


def _unit(unit: str) -> int:
    """The `fakesim.v1.JointUnit` value of a unit name."""
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {sorted(_UNITS)}, not {unit!r}")
    return _UNITS[unit]


def _quality(quality: str | None) -> int | None:
    """The `fakesim.v1.RenderQuality` value of a render level name (None stays None)."""
    if quality is None:
        return None
    if quality not in _QUALITIES:
        raise ValueError(f"render quality must be one of {sorted(_QUALITIES)}, not {quality!r}")
    return _QUALITIES[quality]


def validation_report(stopped: session_pb2.StopEpisodeResponse) -> dict[str, Any]:
    """The validation report a `Client.stop` answer carries (summary.json's ``validation``)."""
    return json.loads(stopped.validation_json) if stopped.validation_json else {}


def _guarded(stream: Iterator[Response]) -> Iterator[Response]:
    """Iterates a server stream, turning its failure into `FakesimError`."""
    try:
        yield from stream
    except grpc.RpcError as error:
        raise FakesimError.from_rpc_error(error) from None


def joint_values(values: Mapping[str, float] | Sequence[float]) -> common_pb2.JointValues:
    """Joint values by name (mapping) or in action-key order (sequence)."""
    if isinstance(values, Mapping):
        return common_pb2.JointValues(named=common_pb2.NamedJointValues(values={k: float(v) for k, v in values.items()}))
    return common_pb2.JointValues(ordered=common_pb2.OrderedJointValues(values=[float(v) for v in values]))
