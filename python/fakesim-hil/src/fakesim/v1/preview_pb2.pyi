from fakesim.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PreviewStart(_message.Message):
    __slots__ = ("positions", "velocities", "ctrl_targets")
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    VELOCITIES_FIELD_NUMBER: _ClassVar[int]
    CTRL_TARGETS_FIELD_NUMBER: _ClassVar[int]
    positions: _containers.RepeatedScalarFieldContainer[float]
    velocities: _containers.RepeatedScalarFieldContainer[float]
    ctrl_targets: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, positions: _Optional[_Iterable[float]] = ..., velocities: _Optional[_Iterable[float]] = ..., ctrl_targets: _Optional[_Iterable[float]] = ...) -> None: ...

class PreviewActionsRequest(_message.Message):
    __slots__ = ("actions", "unit", "n_substeps", "horizon_ticks", "start", "max_joint_speed_rad_s", "arm")
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    N_SUBSTEPS_FIELD_NUMBER: _ClassVar[int]
    HORIZON_TICKS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    MAX_JOINT_SPEED_RAD_S_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[_common_pb2.JointValues]
    unit: _common_pb2.JointUnit
    n_substeps: int
    horizon_ticks: int
    start: PreviewStart
    max_joint_speed_rad_s: float
    arm: str
    def __init__(self, actions: _Optional[_Iterable[_Union[_common_pb2.JointValues, _Mapping]]] = ..., unit: _Optional[_Union[_common_pb2.JointUnit, str]] = ..., n_substeps: _Optional[int] = ..., horizon_ticks: _Optional[int] = ..., start: _Optional[_Union[PreviewStart, _Mapping]] = ..., max_joint_speed_rad_s: _Optional[float] = ..., arm: _Optional[str] = ...) -> None: ...

class PreviewContact(_message.Message):
    __slots__ = ("link", "geom", "other_body", "other_geom", "contact_class", "max_depth_m", "first_tick", "violation", "start_depth_m")
    LINK_FIELD_NUMBER: _ClassVar[int]
    GEOM_FIELD_NUMBER: _ClassVar[int]
    OTHER_BODY_FIELD_NUMBER: _ClassVar[int]
    OTHER_GEOM_FIELD_NUMBER: _ClassVar[int]
    CONTACT_CLASS_FIELD_NUMBER: _ClassVar[int]
    MAX_DEPTH_M_FIELD_NUMBER: _ClassVar[int]
    FIRST_TICK_FIELD_NUMBER: _ClassVar[int]
    VIOLATION_FIELD_NUMBER: _ClassVar[int]
    START_DEPTH_M_FIELD_NUMBER: _ClassVar[int]
    link: str
    geom: str
    other_body: str
    other_geom: str
    contact_class: str
    max_depth_m: float
    first_tick: int
    violation: bool
    start_depth_m: float
    def __init__(self, link: _Optional[str] = ..., geom: _Optional[str] = ..., other_body: _Optional[str] = ..., other_geom: _Optional[str] = ..., contact_class: _Optional[str] = ..., max_depth_m: _Optional[float] = ..., first_tick: _Optional[int] = ..., violation: bool = ..., start_depth_m: _Optional[float] = ...) -> None: ...

class PreviewJoint(_message.Message):
    __slots__ = ("id", "label", "peak_speed_rad_s", "peak_accel_rad_s2", "limit_first_tick", "past_limit_rad", "final_position")
    ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    PEAK_SPEED_RAD_S_FIELD_NUMBER: _ClassVar[int]
    PEAK_ACCEL_RAD_S2_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIRST_TICK_FIELD_NUMBER: _ClassVar[int]
    PAST_LIMIT_RAD_FIELD_NUMBER: _ClassVar[int]
    FINAL_POSITION_FIELD_NUMBER: _ClassVar[int]
    id: str
    label: str
    peak_speed_rad_s: float
    peak_accel_rad_s2: float
    limit_first_tick: int
    past_limit_rad: float
    final_position: float
    def __init__(self, id: _Optional[str] = ..., label: _Optional[str] = ..., peak_speed_rad_s: _Optional[float] = ..., peak_accel_rad_s2: _Optional[float] = ..., limit_first_tick: _Optional[int] = ..., past_limit_rad: _Optional[float] = ..., final_position: _Optional[float] = ...) -> None: ...

class PreviewClearance(_message.Message):
    __slots__ = ("link", "geom", "clearance_m", "tick")
    LINK_FIELD_NUMBER: _ClassVar[int]
    GEOM_FIELD_NUMBER: _ClassVar[int]
    CLEARANCE_M_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    link: str
    geom: str
    clearance_m: float
    tick: int
    def __init__(self, link: _Optional[str] = ..., geom: _Optional[str] = ..., clearance_m: _Optional[float] = ..., tick: _Optional[int] = ...) -> None: ...

class PreviewGripperStall(_message.Message):
    __slots__ = ("first_tick", "gap_rad", "blocked_by")
    FIRST_TICK_FIELD_NUMBER: _ClassVar[int]
    GAP_RAD_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_BY_FIELD_NUMBER: _ClassVar[int]
    first_tick: int
    gap_rad: float
    blocked_by: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, first_tick: _Optional[int] = ..., gap_rad: _Optional[float] = ..., blocked_by: _Optional[_Iterable[str]] = ...) -> None: ...

class PreviewViolation(_message.Message):
    __slots__ = ("kind", "links", "first_tick", "value", "message")
    KIND_FIELD_NUMBER: _ClassVar[int]
    LINKS_FIELD_NUMBER: _ClassVar[int]
    FIRST_TICK_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    links: _containers.RepeatedScalarFieldContainer[str]
    first_tick: int
    value: float
    message: str
    def __init__(self, kind: _Optional[str] = ..., links: _Optional[_Iterable[str]] = ..., first_tick: _Optional[int] = ..., value: _Optional[float] = ..., message: _Optional[str] = ...) -> None: ...

class PreviewActionsResponse(_message.Message):
    __slots__ = ("safe", "ticks", "substeps_per_tick", "contacts", "joints", "table_clearance", "gripper_stall", "violations", "summary")
    SAFE_FIELD_NUMBER: _ClassVar[int]
    TICKS_FIELD_NUMBER: _ClassVar[int]
    SUBSTEPS_PER_TICK_FIELD_NUMBER: _ClassVar[int]
    CONTACTS_FIELD_NUMBER: _ClassVar[int]
    JOINTS_FIELD_NUMBER: _ClassVar[int]
    TABLE_CLEARANCE_FIELD_NUMBER: _ClassVar[int]
    GRIPPER_STALL_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    safe: bool
    ticks: int
    substeps_per_tick: int
    contacts: _containers.RepeatedCompositeFieldContainer[PreviewContact]
    joints: _containers.RepeatedCompositeFieldContainer[PreviewJoint]
    table_clearance: PreviewClearance
    gripper_stall: PreviewGripperStall
    violations: _containers.RepeatedCompositeFieldContainer[PreviewViolation]
    summary: str
    def __init__(self, safe: bool = ..., ticks: _Optional[int] = ..., substeps_per_tick: _Optional[int] = ..., contacts: _Optional[_Iterable[_Union[PreviewContact, _Mapping]]] = ..., joints: _Optional[_Iterable[_Union[PreviewJoint, _Mapping]]] = ..., table_clearance: _Optional[_Union[PreviewClearance, _Mapping]] = ..., gripper_stall: _Optional[_Union[PreviewGripperStall, _Mapping]] = ..., violations: _Optional[_Iterable[_Union[PreviewViolation, _Mapping]]] = ..., summary: _Optional[str] = ...) -> None: ...
