from fakesim.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EpisodeStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EPISODE_STATUS_UNSPECIFIED: _ClassVar[EpisodeStatus]
    EPISODE_STATUS_IDLE: _ClassVar[EpisodeStatus]
    EPISODE_STATUS_RUNNING: _ClassVar[EpisodeStatus]
    EPISODE_STATUS_STOPPED: _ClassVar[EpisodeStatus]

class GripperCommand(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GRIPPER_COMMAND_UNSPECIFIED: _ClassVar[GripperCommand]
    GRIPPER_COMMAND_OPEN: _ClassVar[GripperCommand]
    GRIPPER_COMMAND_CLOSE: _ClassVar[GripperCommand]

class MoveStopReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MOVE_STOP_REASON_UNSPECIFIED: _ClassVar[MoveStopReason]
    MOVE_STOP_REASON_REACHED: _ClassVar[MoveStopReason]
    MOVE_STOP_REASON_STALLED: _ClassVar[MoveStopReason]
    MOVE_STOP_REASON_STEP_CAP: _ClassVar[MoveStopReason]
    MOVE_STOP_REASON_BUDGET: _ClassVar[MoveStopReason]

class GripperStopReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GRIPPER_STOP_REASON_UNSPECIFIED: _ClassVar[GripperStopReason]
    GRIPPER_STOP_REASON_SETTLED: _ClassVar[GripperStopReason]
    GRIPPER_STOP_REASON_STEP_CAP: _ClassVar[GripperStopReason]
    GRIPPER_STOP_REASON_BUDGET: _ClassVar[GripperStopReason]
    GRIPPER_STOP_REASON_NO_OP: _ClassVar[GripperStopReason]
EPISODE_STATUS_UNSPECIFIED: EpisodeStatus
EPISODE_STATUS_IDLE: EpisodeStatus
EPISODE_STATUS_RUNNING: EpisodeStatus
EPISODE_STATUS_STOPPED: EpisodeStatus
GRIPPER_COMMAND_UNSPECIFIED: GripperCommand
GRIPPER_COMMAND_OPEN: GripperCommand
GRIPPER_COMMAND_CLOSE: GripperCommand
MOVE_STOP_REASON_UNSPECIFIED: MoveStopReason
MOVE_STOP_REASON_REACHED: MoveStopReason
MOVE_STOP_REASON_STALLED: MoveStopReason
MOVE_STOP_REASON_STEP_CAP: MoveStopReason
MOVE_STOP_REASON_BUDGET: MoveStopReason
GRIPPER_STOP_REASON_UNSPECIFIED: GripperStopReason
GRIPPER_STOP_REASON_SETTLED: GripperStopReason
GRIPPER_STOP_REASON_STEP_CAP: GripperStopReason
GRIPPER_STOP_REASON_BUDGET: GripperStopReason
GRIPPER_STOP_REASON_NO_OP: GripperStopReason

class Task(_message.Message):
    __slots__ = ("suite", "task_index", "name", "instruction", "init_state_index")
    SUITE_FIELD_NUMBER: _ClassVar[int]
    TASK_INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    INIT_STATE_INDEX_FIELD_NUMBER: _ClassVar[int]
    suite: str
    task_index: int
    name: str
    instruction: str
    init_state_index: int
    def __init__(self, suite: _Optional[str] = ..., task_index: _Optional[int] = ..., name: _Optional[str] = ..., instruction: _Optional[str] = ..., init_state_index: _Optional[int] = ...) -> None: ...

class Images(_message.Message):
    __slots__ = ("agentview", "robot0_eye_in_hand", "timing")
    AGENTVIEW_FIELD_NUMBER: _ClassVar[int]
    ROBOT0_EYE_IN_HAND_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    agentview: bytes
    robot0_eye_in_hand: bytes
    timing: _common_pb2.ImageTiming
    def __init__(self, agentview: _Optional[bytes] = ..., robot0_eye_in_hand: _Optional[bytes] = ..., timing: _Optional[_Union[_common_pb2.ImageTiming, _Mapping]] = ...) -> None: ...

class GripperState(_message.Message):
    __slots__ = ("command", "opening_m")
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    OPENING_M_FIELD_NUMBER: _ClassVar[int]
    command: GripperCommand
    opening_m: float
    def __init__(self, command: _Optional[_Union[GripperCommand, str]] = ..., opening_m: _Optional[float] = ...) -> None: ...

class EefState(_message.Message):
    __slots__ = ("eef_pos_m", "eef_rpy_rad", "gripper")
    EEF_POS_M_FIELD_NUMBER: _ClassVar[int]
    EEF_RPY_RAD_FIELD_NUMBER: _ClassVar[int]
    GRIPPER_FIELD_NUMBER: _ClassVar[int]
    eef_pos_m: _common_pb2.Vec3
    eef_rpy_rad: _common_pb2.Rpy
    gripper: GripperState
    def __init__(self, eef_pos_m: _Optional[_Union[_common_pb2.Vec3, _Mapping]] = ..., eef_rpy_rad: _Optional[_Union[_common_pb2.Rpy, _Mapping]] = ..., gripper: _Optional[_Union[GripperState, _Mapping]] = ...) -> None: ...

class Artifacts(_message.Message):
    __slots__ = ("events", "frames", "summary")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    events: str
    frames: str
    summary: str
    def __init__(self, events: _Optional[str] = ..., frames: _Optional[str] = ..., summary: _Optional[str] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("suite",)
    SUITE_FIELD_NUMBER: _ClassVar[int]
    suite: str
    def __init__(self, suite: _Optional[str] = ...) -> None: ...

class SuiteSummary(_message.Message):
    __slots__ = ("name", "n_tasks")
    NAME_FIELD_NUMBER: _ClassVar[int]
    N_TASKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    n_tasks: int
    def __init__(self, name: _Optional[str] = ..., n_tasks: _Optional[int] = ...) -> None: ...

class TaskSummary(_message.Message):
    __slots__ = ("task_index", "name", "instruction", "n_init_states")
    TASK_INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    N_INIT_STATES_FIELD_NUMBER: _ClassVar[int]
    task_index: int
    name: str
    instruction: str
    n_init_states: int
    def __init__(self, task_index: _Optional[int] = ..., name: _Optional[str] = ..., instruction: _Optional[str] = ..., n_init_states: _Optional[int] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("suites", "total_tasks", "suite", "tasks")
    SUITES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TASKS_FIELD_NUMBER: _ClassVar[int]
    SUITE_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    suites: _containers.RepeatedCompositeFieldContainer[SuiteSummary]
    total_tasks: int
    suite: str
    tasks: _containers.RepeatedCompositeFieldContainer[TaskSummary]
    def __init__(self, suites: _Optional[_Iterable[_Union[SuiteSummary, _Mapping]]] = ..., total_tasks: _Optional[int] = ..., suite: _Optional[str] = ..., tasks: _Optional[_Iterable[_Union[TaskSummary, _Mapping]]] = ...) -> None: ...

class ResetTaskRequest(_message.Message):
    __slots__ = ("suite", "task_index", "init_state_index", "max_steps", "cameras", "render_quality", "seed")
    SUITE_FIELD_NUMBER: _ClassVar[int]
    TASK_INDEX_FIELD_NUMBER: _ClassVar[int]
    INIT_STATE_INDEX_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    CAMERAS_FIELD_NUMBER: _ClassVar[int]
    RENDER_QUALITY_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    suite: str
    task_index: int
    init_state_index: int
    max_steps: int
    cameras: _containers.RepeatedScalarFieldContainer[str]
    render_quality: _common_pb2.RenderQuality
    seed: int
    def __init__(self, suite: _Optional[str] = ..., task_index: _Optional[int] = ..., init_state_index: _Optional[int] = ..., max_steps: _Optional[int] = ..., cameras: _Optional[_Iterable[str]] = ..., render_quality: _Optional[_Union[_common_pb2.RenderQuality, str]] = ..., seed: _Optional[int] = ...) -> None: ...

class ResetTaskResponse(_message.Message):
    __slots__ = ("run", "task", "images", "state", "step", "steps_left")
    RUN_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STEPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    run: str
    task: Task
    images: Images
    state: EefState
    step: int
    steps_left: int
    def __init__(self, run: _Optional[str] = ..., task: _Optional[_Union[Task, _Mapping]] = ..., images: _Optional[_Union[Images, _Mapping]] = ..., state: _Optional[_Union[EefState, _Mapping]] = ..., step: _Optional[int] = ..., steps_left: _Optional[int] = ...) -> None: ...

class GetObservationRequest(_message.Message):
    __slots__ = ("render_quality", "arm")
    RENDER_QUALITY_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    render_quality: _common_pb2.RenderQuality
    arm: str
    def __init__(self, render_quality: _Optional[_Union[_common_pb2.RenderQuality, str]] = ..., arm: _Optional[str] = ...) -> None: ...

class GetObservationResponse(_message.Message):
    __slots__ = ("images", "state", "step", "steps_left", "status")
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STEPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    images: Images
    state: EefState
    step: int
    steps_left: int
    status: EpisodeStatus
    def __init__(self, images: _Optional[_Union[Images, _Mapping]] = ..., state: _Optional[_Union[EefState, _Mapping]] = ..., step: _Optional[int] = ..., steps_left: _Optional[int] = ..., status: _Optional[_Union[EpisodeStatus, str]] = ...) -> None: ...

class MoveRequest(_message.Message):
    __slots__ = ("delta_xyz", "delta_rpy", "arm")
    DELTA_XYZ_FIELD_NUMBER: _ClassVar[int]
    DELTA_RPY_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    delta_xyz: _common_pb2.Vec3
    delta_rpy: _common_pb2.Rpy
    arm: str
    def __init__(self, delta_xyz: _Optional[_Union[_common_pb2.Vec3, _Mapping]] = ..., delta_rpy: _Optional[_Union[_common_pb2.Rpy, _Mapping]] = ..., arm: _Optional[str] = ...) -> None: ...

class MoveAction(_message.Message):
    __slots__ = ("delta_xyz", "delta_rpy", "executed_steps", "stop_reason", "achieved_delta_xyz", "remaining_distance_m")
    DELTA_XYZ_FIELD_NUMBER: _ClassVar[int]
    DELTA_RPY_FIELD_NUMBER: _ClassVar[int]
    EXECUTED_STEPS_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    ACHIEVED_DELTA_XYZ_FIELD_NUMBER: _ClassVar[int]
    REMAINING_DISTANCE_M_FIELD_NUMBER: _ClassVar[int]
    delta_xyz: _common_pb2.Vec3
    delta_rpy: _common_pb2.Rpy
    executed_steps: int
    stop_reason: MoveStopReason
    achieved_delta_xyz: _common_pb2.Vec3
    remaining_distance_m: float
    def __init__(self, delta_xyz: _Optional[_Union[_common_pb2.Vec3, _Mapping]] = ..., delta_rpy: _Optional[_Union[_common_pb2.Rpy, _Mapping]] = ..., executed_steps: _Optional[int] = ..., stop_reason: _Optional[_Union[MoveStopReason, str]] = ..., achieved_delta_xyz: _Optional[_Union[_common_pb2.Vec3, _Mapping]] = ..., remaining_distance_m: _Optional[float] = ...) -> None: ...

class MoveResponse(_message.Message):
    __slots__ = ("images", "state", "action", "step", "steps_left", "status")
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STEPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    images: Images
    state: EefState
    action: MoveAction
    step: int
    steps_left: int
    status: EpisodeStatus
    def __init__(self, images: _Optional[_Union[Images, _Mapping]] = ..., state: _Optional[_Union[EefState, _Mapping]] = ..., action: _Optional[_Union[MoveAction, _Mapping]] = ..., step: _Optional[int] = ..., steps_left: _Optional[int] = ..., status: _Optional[_Union[EpisodeStatus, str]] = ...) -> None: ...

class GripperRequest(_message.Message):
    __slots__ = ("command", "arm")
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    command: GripperCommand
    arm: str
    def __init__(self, command: _Optional[_Union[GripperCommand, str]] = ..., arm: _Optional[str] = ...) -> None: ...

class GripperAction(_message.Message):
    __slots__ = ("command", "executed_steps", "stop_reason", "opening_before_m", "opening_after_m")
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    EXECUTED_STEPS_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    OPENING_BEFORE_M_FIELD_NUMBER: _ClassVar[int]
    OPENING_AFTER_M_FIELD_NUMBER: _ClassVar[int]
    command: GripperCommand
    executed_steps: int
    stop_reason: GripperStopReason
    opening_before_m: float
    opening_after_m: float
    def __init__(self, command: _Optional[_Union[GripperCommand, str]] = ..., executed_steps: _Optional[int] = ..., stop_reason: _Optional[_Union[GripperStopReason, str]] = ..., opening_before_m: _Optional[float] = ..., opening_after_m: _Optional[float] = ...) -> None: ...

class GripperResponse(_message.Message):
    __slots__ = ("images", "state", "action", "step", "steps_left", "status")
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STEPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    images: Images
    state: EefState
    action: GripperAction
    step: int
    steps_left: int
    status: EpisodeStatus
    def __init__(self, images: _Optional[_Union[Images, _Mapping]] = ..., state: _Optional[_Union[EefState, _Mapping]] = ..., action: _Optional[_Union[GripperAction, _Mapping]] = ..., step: _Optional[int] = ..., steps_left: _Optional[int] = ..., status: _Optional[_Union[EpisodeStatus, str]] = ...) -> None: ...

class StopEpisodeRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StopEpisodeResponse(_message.Message):
    __slots__ = ("run", "status", "artifacts", "success", "validation_json")
    RUN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_JSON_FIELD_NUMBER: _ClassVar[int]
    run: str
    status: EpisodeStatus
    artifacts: Artifacts
    success: bool
    validation_json: str
    def __init__(self, run: _Optional[str] = ..., status: _Optional[_Union[EpisodeStatus, str]] = ..., artifacts: _Optional[_Union[Artifacts, _Mapping]] = ..., success: bool = ..., validation_json: _Optional[str] = ...) -> None: ...

class GetSessionInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetSessionInfoResponse(_message.Message):
    __slots__ = ("run", "status", "step", "max_steps", "steps_left", "task", "task_locked", "state", "default_scene", "success")
    RUN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    STEPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    TASK_LOCKED_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SCENE_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    run: str
    status: EpisodeStatus
    step: int
    max_steps: int
    steps_left: int
    task: Task
    task_locked: bool
    state: EefState
    default_scene: Task
    success: bool
    def __init__(self, run: _Optional[str] = ..., status: _Optional[_Union[EpisodeStatus, str]] = ..., step: _Optional[int] = ..., max_steps: _Optional[int] = ..., steps_left: _Optional[int] = ..., task: _Optional[_Union[Task, _Mapping]] = ..., task_locked: bool = ..., state: _Optional[_Union[EefState, _Mapping]] = ..., default_scene: _Optional[_Union[Task, _Mapping]] = ..., success: bool = ...) -> None: ...
