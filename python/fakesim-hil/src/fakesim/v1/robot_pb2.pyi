from fakesim.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FrameKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FRAME_KIND_UNSPECIFIED: _ClassVar[FrameKind]
    FRAME_KIND_BODY: _ClassVar[FrameKind]
    FRAME_KIND_SITE: _ClassVar[FrameKind]

class DepthEncoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEPTH_ENCODING_UNSPECIFIED: _ClassVar[DepthEncoding]
    DEPTH_ENCODING_PNG: _ClassVar[DepthEncoding]
    DEPTH_ENCODING_RAW: _ClassVar[DepthEncoding]

class ColorEncoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLOR_ENCODING_UNSPECIFIED: _ClassVar[ColorEncoding]
    COLOR_ENCODING_PNG: _ClassVar[ColorEncoding]
    COLOR_ENCODING_RAW: _ClassVar[ColorEncoding]
FRAME_KIND_UNSPECIFIED: FrameKind
FRAME_KIND_BODY: FrameKind
FRAME_KIND_SITE: FrameKind
DEPTH_ENCODING_UNSPECIFIED: DepthEncoding
DEPTH_ENCODING_PNG: DepthEncoding
DEPTH_ENCODING_RAW: DepthEncoding
COLOR_ENCODING_UNSPECIFIED: ColorEncoding
COLOR_ENCODING_PNG: ColorEncoding
COLOR_ENCODING_RAW: ColorEncoding

class SetControlPeriodRequest(_message.Message):
    __slots__ = ("period_s",)
    PERIOD_S_FIELD_NUMBER: _ClassVar[int]
    period_s: float
    def __init__(self, period_s: _Optional[float] = ...) -> None: ...

class SetControlPeriodResponse(_message.Message):
    __slots__ = ("period_s", "physics_steps_per_tick")
    PERIOD_S_FIELD_NUMBER: _ClassVar[int]
    PHYSICS_STEPS_PER_TICK_FIELD_NUMBER: _ClassVar[int]
    period_s: float
    physics_steps_per_tick: float
    def __init__(self, period_s: _Optional[float] = ..., physics_steps_per_tick: _Optional[float] = ...) -> None: ...

class JointInfo(_message.Message):
    __slots__ = ("id", "name", "label", "range_min", "range_max", "unit", "effective_min", "effective_max")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    RANGE_MIN_FIELD_NUMBER: _ClassVar[int]
    RANGE_MAX_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_MIN_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_MAX_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    label: str
    range_min: float
    range_max: float
    unit: str
    effective_min: float
    effective_max: float
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., label: _Optional[str] = ..., range_min: _Optional[float] = ..., range_max: _Optional[float] = ..., unit: _Optional[str] = ..., effective_min: _Optional[float] = ..., effective_max: _Optional[float] = ...) -> None: ...

class GetModelInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetModelInfoResponse(_message.Message):
    __slots__ = ("joints", "action_keys", "control_rate_hz", "substeps_per_tick", "timestep_s", "cameras", "default_image_width", "default_image_height", "observation_keys", "control_period_s", "robot", "lerobot_robot", "joint_names", "arms", "dynamics", "camera_sizes")
    JOINTS_FIELD_NUMBER: _ClassVar[int]
    ACTION_KEYS_FIELD_NUMBER: _ClassVar[int]
    CONTROL_RATE_HZ_FIELD_NUMBER: _ClassVar[int]
    SUBSTEPS_PER_TICK_FIELD_NUMBER: _ClassVar[int]
    TIMESTEP_S_FIELD_NUMBER: _ClassVar[int]
    CAMERAS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_IMAGE_WIDTH_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_IMAGE_HEIGHT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_KEYS_FIELD_NUMBER: _ClassVar[int]
    CONTROL_PERIOD_S_FIELD_NUMBER: _ClassVar[int]
    ROBOT_FIELD_NUMBER: _ClassVar[int]
    LEROBOT_ROBOT_FIELD_NUMBER: _ClassVar[int]
    JOINT_NAMES_FIELD_NUMBER: _ClassVar[int]
    ARMS_FIELD_NUMBER: _ClassVar[int]
    DYNAMICS_FIELD_NUMBER: _ClassVar[int]
    CAMERA_SIZES_FIELD_NUMBER: _ClassVar[int]
    joints: _containers.RepeatedCompositeFieldContainer[JointInfo]
    action_keys: _containers.RepeatedScalarFieldContainer[str]
    control_rate_hz: float
    substeps_per_tick: int
    timestep_s: float
    cameras: _containers.RepeatedScalarFieldContainer[str]
    default_image_width: int
    default_image_height: int
    observation_keys: _containers.RepeatedScalarFieldContainer[str]
    control_period_s: float
    robot: str
    lerobot_robot: str
    joint_names: _containers.RepeatedScalarFieldContainer[str]
    arms: _containers.RepeatedScalarFieldContainer[str]
    dynamics: _containers.RepeatedCompositeFieldContainer[DynamicsProfile]
    camera_sizes: _containers.RepeatedCompositeFieldContainer[CameraSize]
    def __init__(self, joints: _Optional[_Iterable[_Union[JointInfo, _Mapping]]] = ..., action_keys: _Optional[_Iterable[str]] = ..., control_rate_hz: _Optional[float] = ..., substeps_per_tick: _Optional[int] = ..., timestep_s: _Optional[float] = ..., cameras: _Optional[_Iterable[str]] = ..., default_image_width: _Optional[int] = ..., default_image_height: _Optional[int] = ..., observation_keys: _Optional[_Iterable[str]] = ..., control_period_s: _Optional[float] = ..., robot: _Optional[str] = ..., lerobot_robot: _Optional[str] = ..., joint_names: _Optional[_Iterable[str]] = ..., arms: _Optional[_Iterable[str]] = ..., dynamics: _Optional[_Iterable[_Union[DynamicsProfile, _Mapping]]] = ..., camera_sizes: _Optional[_Iterable[_Union[CameraSize, _Mapping]]] = ...) -> None: ...

class CameraSize(_message.Message):
    __slots__ = ("camera", "width", "height")
    CAMERA_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    camera: str
    width: int
    height: int
    def __init__(self, camera: _Optional[str] = ..., width: _Optional[int] = ..., height: _Optional[int] = ...) -> None: ...

class DynamicsProfile(_message.Message):
    __slots__ = ("side", "path", "found_by", "robot_id", "recordings", "train_seconds", "validation_seconds", "validation_rms_before_rad", "validation_rms_after_rad", "max_delay_s")
    SIDE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    FOUND_BY_FIELD_NUMBER: _ClassVar[int]
    ROBOT_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDINGS_FIELD_NUMBER: _ClassVar[int]
    TRAIN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_RMS_BEFORE_RAD_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_RMS_AFTER_RAD_FIELD_NUMBER: _ClassVar[int]
    MAX_DELAY_S_FIELD_NUMBER: _ClassVar[int]
    side: str
    path: str
    found_by: str
    robot_id: str
    recordings: _containers.RepeatedScalarFieldContainer[str]
    train_seconds: float
    validation_seconds: float
    validation_rms_before_rad: float
    validation_rms_after_rad: float
    max_delay_s: float
    def __init__(self, side: _Optional[str] = ..., path: _Optional[str] = ..., found_by: _Optional[str] = ..., robot_id: _Optional[str] = ..., recordings: _Optional[_Iterable[str]] = ..., train_seconds: _Optional[float] = ..., validation_seconds: _Optional[float] = ..., validation_rms_before_rad: _Optional[float] = ..., validation_rms_after_rad: _Optional[float] = ..., max_delay_s: _Optional[float] = ...) -> None: ...

class GetRobotStateRequest(_message.Message):
    __slots__ = ("unit",)
    UNIT_FIELD_NUMBER: _ClassVar[int]
    unit: _common_pb2.JointUnit
    def __init__(self, unit: _Optional[_Union[_common_pb2.JointUnit, str]] = ...) -> None: ...

class GetRobotStateResponse(_message.Message):
    __slots__ = ("joint_ids", "positions", "velocities", "ctrl_targets", "time_s", "physics_steps", "tcp", "gripper_opening_m", "unit", "joint_names", "arms")
    JOINT_IDS_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    VELOCITIES_FIELD_NUMBER: _ClassVar[int]
    CTRL_TARGETS_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    PHYSICS_STEPS_FIELD_NUMBER: _ClassVar[int]
    TCP_FIELD_NUMBER: _ClassVar[int]
    GRIPPER_OPENING_M_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    JOINT_NAMES_FIELD_NUMBER: _ClassVar[int]
    ARMS_FIELD_NUMBER: _ClassVar[int]
    joint_ids: _containers.RepeatedScalarFieldContainer[str]
    positions: _containers.RepeatedScalarFieldContainer[float]
    velocities: _containers.RepeatedScalarFieldContainer[float]
    ctrl_targets: _containers.RepeatedScalarFieldContainer[float]
    time_s: float
    physics_steps: int
    tcp: _common_pb2.Pose
    gripper_opening_m: float
    unit: _common_pb2.JointUnit
    joint_names: _containers.RepeatedScalarFieldContainer[str]
    arms: _containers.RepeatedCompositeFieldContainer[ArmPose]
    def __init__(self, joint_ids: _Optional[_Iterable[str]] = ..., positions: _Optional[_Iterable[float]] = ..., velocities: _Optional[_Iterable[float]] = ..., ctrl_targets: _Optional[_Iterable[float]] = ..., time_s: _Optional[float] = ..., physics_steps: _Optional[int] = ..., tcp: _Optional[_Union[_common_pb2.Pose, _Mapping]] = ..., gripper_opening_m: _Optional[float] = ..., unit: _Optional[_Union[_common_pb2.JointUnit, str]] = ..., joint_names: _Optional[_Iterable[str]] = ..., arms: _Optional[_Iterable[_Union[ArmPose, _Mapping]]] = ...) -> None: ...

class ArmPose(_message.Message):
    __slots__ = ("arm", "tcp", "gripper_opening_m")
    ARM_FIELD_NUMBER: _ClassVar[int]
    TCP_FIELD_NUMBER: _ClassVar[int]
    GRIPPER_OPENING_M_FIELD_NUMBER: _ClassVar[int]
    arm: str
    tcp: _common_pb2.Pose
    gripper_opening_m: float
    def __init__(self, arm: _Optional[str] = ..., tcp: _Optional[_Union[_common_pb2.Pose, _Mapping]] = ..., gripper_opening_m: _Optional[float] = ...) -> None: ...

class SendActionRequest(_message.Message):
    __slots__ = ("action", "n_substeps", "unit")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    N_SUBSTEPS_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    action: _common_pb2.JointValues
    n_substeps: int
    unit: _common_pb2.JointUnit
    def __init__(self, action: _Optional[_Union[_common_pb2.JointValues, _Mapping]] = ..., n_substeps: _Optional[int] = ..., unit: _Optional[_Union[_common_pb2.JointUnit, str]] = ...) -> None: ...

class SendActionResponse(_message.Message):
    __slots__ = ("applied_keys", "substeps_run", "physics_steps", "time_s", "blocked")
    APPLIED_KEYS_FIELD_NUMBER: _ClassVar[int]
    SUBSTEPS_RUN_FIELD_NUMBER: _ClassVar[int]
    PHYSICS_STEPS_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_FIELD_NUMBER: _ClassVar[int]
    applied_keys: _containers.RepeatedScalarFieldContainer[str]
    substeps_run: int
    physics_steps: int
    time_s: float
    blocked: bool
    def __init__(self, applied_keys: _Optional[_Iterable[str]] = ..., substeps_run: _Optional[int] = ..., physics_steps: _Optional[int] = ..., time_s: _Optional[float] = ..., blocked: bool = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("n_steps",)
    N_STEPS_FIELD_NUMBER: _ClassVar[int]
    n_steps: int
    def __init__(self, n_steps: _Optional[int] = ...) -> None: ...

class StepResponse(_message.Message):
    __slots__ = ("physics_steps", "time_s")
    PHYSICS_STEPS_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    physics_steps: int
    time_s: float
    def __init__(self, physics_steps: _Optional[int] = ..., time_s: _Optional[float] = ...) -> None: ...

class SetJointPositionsRequest(_message.Message):
    __slots__ = ("positions", "hold")
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    HOLD_FIELD_NUMBER: _ClassVar[int]
    positions: _common_pb2.JointValues
    hold: bool
    def __init__(self, positions: _Optional[_Union[_common_pb2.JointValues, _Mapping]] = ..., hold: bool = ...) -> None: ...

class SetJointPositionsResponse(_message.Message):
    __slots__ = ("written_joints", "pulled_back_joints", "setpoints_moved")
    WRITTEN_JOINTS_FIELD_NUMBER: _ClassVar[int]
    PULLED_BACK_JOINTS_FIELD_NUMBER: _ClassVar[int]
    SETPOINTS_MOVED_FIELD_NUMBER: _ClassVar[int]
    written_joints: _containers.RepeatedScalarFieldContainer[str]
    pulled_back_joints: _containers.RepeatedScalarFieldContainer[str]
    setpoints_moved: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, written_joints: _Optional[_Iterable[str]] = ..., pulled_back_joints: _Optional[_Iterable[str]] = ..., setpoints_moved: _Optional[_Iterable[str]] = ...) -> None: ...

class SetJointVelocitiesRequest(_message.Message):
    __slots__ = ("velocities",)
    VELOCITIES_FIELD_NUMBER: _ClassVar[int]
    velocities: _common_pb2.JointValues
    def __init__(self, velocities: _Optional[_Union[_common_pb2.JointValues, _Mapping]] = ...) -> None: ...

class SetJointVelocitiesResponse(_message.Message):
    __slots__ = ("written_joints",)
    WRITTEN_JOINTS_FIELD_NUMBER: _ClassVar[int]
    written_joints: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, written_joints: _Optional[_Iterable[str]] = ...) -> None: ...

class FramePose(_message.Message):
    __slots__ = ("name", "kind", "pose")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    POSE_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: FrameKind
    pose: _common_pb2.Pose
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[_Union[FrameKind, str]] = ..., pose: _Optional[_Union[_common_pb2.Pose, _Mapping]] = ...) -> None: ...

class ForwardKinematicsRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ForwardKinematicsResponse(_message.Message):
    __slots__ = ("frames",)
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    frames: _containers.RepeatedCompositeFieldContainer[FramePose]
    def __init__(self, frames: _Optional[_Iterable[_Union[FramePose, _Mapping]]] = ...) -> None: ...

class GetJacobianRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetJacobianResponse(_message.Message):
    __slots__ = ("rows", "cols", "data", "dof_joint_names")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    DOF_JOINT_NAMES_FIELD_NUMBER: _ClassVar[int]
    rows: int
    cols: int
    data: _containers.RepeatedScalarFieldContainer[float]
    dof_joint_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, rows: _Optional[int] = ..., cols: _Optional[int] = ..., data: _Optional[_Iterable[float]] = ..., dof_joint_names: _Optional[_Iterable[str]] = ...) -> None: ...

class Contact(_message.Message):
    __slots__ = ("geom1", "geom2", "dist_m", "active")
    GEOM1_FIELD_NUMBER: _ClassVar[int]
    GEOM2_FIELD_NUMBER: _ClassVar[int]
    DIST_M_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    geom1: str
    geom2: str
    dist_m: float
    active: bool
    def __init__(self, geom1: _Optional[str] = ..., geom2: _Optional[str] = ..., dist_m: _Optional[float] = ..., active: bool = ...) -> None: ...

class GetContactsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetContactsResponse(_message.Message):
    __slots__ = ("contacts",)
    CONTACTS_FIELD_NUMBER: _ClassVar[int]
    contacts: _containers.RepeatedCompositeFieldContainer[Contact]
    def __init__(self, contacts: _Optional[_Iterable[_Union[Contact, _Mapping]]] = ...) -> None: ...

class SaveStateRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class SaveStateResponse(_message.Message):
    __slots__ = ("name", "physics_steps")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PHYSICS_STEPS_FIELD_NUMBER: _ClassVar[int]
    name: str
    physics_steps: int
    def __init__(self, name: _Optional[str] = ..., physics_steps: _Optional[int] = ...) -> None: ...

class LoadStateRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class LoadStateResponse(_message.Message):
    __slots__ = ("name", "physics_steps", "time_s")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PHYSICS_STEPS_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    name: str
    physics_steps: int
    time_s: float
    def __init__(self, name: _Optional[str] = ..., physics_steps: _Optional[int] = ..., time_s: _Optional[float] = ...) -> None: ...

class TickRequest(_message.Message):
    __slots__ = ("action", "want_images", "cameras", "width", "height", "want_depth", "depth_encoding", "color_encoding", "unit", "period_s", "render_quality", "arm")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    WANT_IMAGES_FIELD_NUMBER: _ClassVar[int]
    CAMERAS_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    WANT_DEPTH_FIELD_NUMBER: _ClassVar[int]
    DEPTH_ENCODING_FIELD_NUMBER: _ClassVar[int]
    COLOR_ENCODING_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    PERIOD_S_FIELD_NUMBER: _ClassVar[int]
    RENDER_QUALITY_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    action: _containers.RepeatedScalarFieldContainer[float]
    want_images: bool
    cameras: _containers.RepeatedScalarFieldContainer[str]
    width: int
    height: int
    want_depth: bool
    depth_encoding: DepthEncoding
    color_encoding: ColorEncoding
    unit: _common_pb2.JointUnit
    period_s: float
    render_quality: _common_pb2.RenderQuality
    arm: str
    def __init__(self, action: _Optional[_Iterable[float]] = ..., want_images: bool = ..., cameras: _Optional[_Iterable[str]] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., want_depth: bool = ..., depth_encoding: _Optional[_Union[DepthEncoding, str]] = ..., color_encoding: _Optional[_Union[ColorEncoding, str]] = ..., unit: _Optional[_Union[_common_pb2.JointUnit, str]] = ..., period_s: _Optional[float] = ..., render_quality: _Optional[_Union[_common_pb2.RenderQuality, str]] = ..., arm: _Optional[str] = ...) -> None: ...

class CameraFrame(_message.Message):
    __slots__ = ("camera", "width", "height", "color_png", "color_raw", "depth_png", "depth_raw")
    CAMERA_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    COLOR_PNG_FIELD_NUMBER: _ClassVar[int]
    COLOR_RAW_FIELD_NUMBER: _ClassVar[int]
    DEPTH_PNG_FIELD_NUMBER: _ClassVar[int]
    DEPTH_RAW_FIELD_NUMBER: _ClassVar[int]
    camera: str
    width: int
    height: int
    color_png: bytes
    color_raw: bytes
    depth_png: bytes
    depth_raw: bytes
    def __init__(self, camera: _Optional[str] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., color_png: _Optional[bytes] = ..., color_raw: _Optional[bytes] = ..., depth_png: _Optional[bytes] = ..., depth_raw: _Optional[bytes] = ...) -> None: ...

class TickResponse(_message.Message):
    __slots__ = ("observation", "physics_steps", "time_s", "frames", "image_timing", "blocked")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    PHYSICS_STEPS_FIELD_NUMBER: _ClassVar[int]
    TIME_S_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    IMAGE_TIMING_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_FIELD_NUMBER: _ClassVar[int]
    observation: _containers.RepeatedScalarFieldContainer[float]
    physics_steps: int
    time_s: float
    frames: _containers.RepeatedCompositeFieldContainer[CameraFrame]
    image_timing: _common_pb2.ImageTiming
    blocked: bool
    def __init__(self, observation: _Optional[_Iterable[float]] = ..., physics_steps: _Optional[int] = ..., time_s: _Optional[float] = ..., frames: _Optional[_Iterable[_Union[CameraFrame, _Mapping]]] = ..., image_timing: _Optional[_Union[_common_pb2.ImageTiming, _Mapping]] = ..., blocked: bool = ...) -> None: ...

class TickChunkRequest(_message.Message):
    __slots__ = ("ticks",)
    TICKS_FIELD_NUMBER: _ClassVar[int]
    ticks: _containers.RepeatedCompositeFieldContainer[TickRequest]
    def __init__(self, ticks: _Optional[_Iterable[_Union[TickRequest, _Mapping]]] = ...) -> None: ...

class ChunkStop(_message.Message):
    __slots__ = ("tick_index", "code", "reason", "message")
    TICK_INDEX_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    tick_index: int
    code: int
    reason: str
    message: str
    def __init__(self, tick_index: _Optional[int] = ..., code: _Optional[int] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class TickChunkResponse(_message.Message):
    __slots__ = ("ticks", "stopped")
    TICKS_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    ticks: _containers.RepeatedCompositeFieldContainer[TickResponse]
    stopped: ChunkStop
    def __init__(self, ticks: _Optional[_Iterable[_Union[TickResponse, _Mapping]]] = ..., stopped: _Optional[_Union[ChunkStop, _Mapping]] = ...) -> None: ...
