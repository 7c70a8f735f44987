from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Mode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MODE_UNSPECIFIED: _ClassVar[Mode]
    MODE_SIM: _ClassVar[Mode]
    MODE_MIRROR: _ClassVar[Mode]
    MODE_HIL: _ClassVar[Mode]

class SyncOption(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYNC_OPTION_NONE: _ClassVar[SyncOption]
    SYNC_OPTION_MOVE_ARM_TO_TWIN: _ClassVar[SyncOption]
    SYNC_OPTION_MOVE_TWIN_TO_ARM: _ClassVar[SyncOption]

class TorqueState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TORQUE_STATE_UNSPECIFIED: _ClassVar[TorqueState]
    TORQUE_STATE_ON: _ClassVar[TorqueState]
    TORQUE_STATE_OFF: _ClassVar[TorqueState]
    TORQUE_STATE_MIXED: _ClassVar[TorqueState]
    TORQUE_STATE_UNKNOWN: _ClassVar[TorqueState]

class LinkState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LINK_STATE_UNSPECIFIED: _ClassVar[LinkState]
    LINK_STATE_CONNECTED: _ClassVar[LinkState]
    LINK_STATE_LOST: _ClassVar[LinkState]
    LINK_STATE_RECONNECTING: _ClassVar[LinkState]
    LINK_STATE_VERIFYING: _ClassVar[LinkState]
MODE_UNSPECIFIED: Mode
MODE_SIM: Mode
MODE_MIRROR: Mode
MODE_HIL: Mode
SYNC_OPTION_NONE: SyncOption
SYNC_OPTION_MOVE_ARM_TO_TWIN: SyncOption
SYNC_OPTION_MOVE_TWIN_TO_ARM: SyncOption
TORQUE_STATE_UNSPECIFIED: TorqueState
TORQUE_STATE_ON: TorqueState
TORQUE_STATE_OFF: TorqueState
TORQUE_STATE_MIXED: TorqueState
TORQUE_STATE_UNKNOWN: TorqueState
LINK_STATE_UNSPECIFIED: LinkState
LINK_STATE_CONNECTED: LinkState
LINK_STATE_LOST: LinkState
LINK_STATE_RECONNECTING: LinkState
LINK_STATE_VERIFYING: LinkState

class SetModeRequest(_message.Message):
    __slots__ = ("mode", "sync", "sync_max_speed_rad_s")
    MODE_FIELD_NUMBER: _ClassVar[int]
    SYNC_FIELD_NUMBER: _ClassVar[int]
    SYNC_MAX_SPEED_RAD_S_FIELD_NUMBER: _ClassVar[int]
    mode: Mode
    sync: SyncOption
    sync_max_speed_rad_s: float
    def __init__(self, mode: _Optional[_Union[Mode, str]] = ..., sync: _Optional[_Union[SyncOption, str]] = ..., sync_max_speed_rad_s: _Optional[float] = ...) -> None: ...

class SetModeResponse(_message.Message):
    __slots__ = ("mode", "previous_mode", "max_joint_error_rad", "sync_duration_s")
    MODE_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_MODE_FIELD_NUMBER: _ClassVar[int]
    MAX_JOINT_ERROR_RAD_FIELD_NUMBER: _ClassVar[int]
    SYNC_DURATION_S_FIELD_NUMBER: _ClassVar[int]
    mode: Mode
    previous_mode: Mode
    max_joint_error_rad: float
    sync_duration_s: float
    def __init__(self, mode: _Optional[_Union[Mode, str]] = ..., previous_mode: _Optional[_Union[Mode, str]] = ..., max_joint_error_rad: _Optional[float] = ..., sync_duration_s: _Optional[float] = ...) -> None: ...

class CommErrorCounts(_message.Message):
    __slots__ = ("timeouts", "corrupt_replies", "retries")
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    CORRUPT_REPLIES_FIELD_NUMBER: _ClassVar[int]
    RETRIES_FIELD_NUMBER: _ClassVar[int]
    timeouts: int
    corrupt_replies: int
    retries: int
    def __init__(self, timeouts: _Optional[int] = ..., corrupt_replies: _Optional[int] = ..., retries: _Optional[int] = ...) -> None: ...

class ServoStatus(_message.Message):
    __slots__ = ("id", "label", "twin_joint", "position_deg", "twin_rad", "twin_actual_rad", "temperature_c", "voltage_v", "load_percent", "current_ma", "error_flags", "errors", "comm_errors", "torque_enabled", "calibrated_min_rad", "calibrated_max_rad", "effective_min_rad", "effective_max_rad", "outside_twin_range", "predicted_rad", "residual_rad", "calibration_drift_rad", "torque_known", "resets", "torque")
    ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    TWIN_JOINT_FIELD_NUMBER: _ClassVar[int]
    POSITION_DEG_FIELD_NUMBER: _ClassVar[int]
    TWIN_RAD_FIELD_NUMBER: _ClassVar[int]
    TWIN_ACTUAL_RAD_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_C_FIELD_NUMBER: _ClassVar[int]
    VOLTAGE_V_FIELD_NUMBER: _ClassVar[int]
    LOAD_PERCENT_FIELD_NUMBER: _ClassVar[int]
    CURRENT_MA_FIELD_NUMBER: _ClassVar[int]
    ERROR_FLAGS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    COMM_ERRORS_FIELD_NUMBER: _ClassVar[int]
    TORQUE_ENABLED_FIELD_NUMBER: _ClassVar[int]
    CALIBRATED_MIN_RAD_FIELD_NUMBER: _ClassVar[int]
    CALIBRATED_MAX_RAD_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_MIN_RAD_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_MAX_RAD_FIELD_NUMBER: _ClassVar[int]
    OUTSIDE_TWIN_RANGE_FIELD_NUMBER: _ClassVar[int]
    PREDICTED_RAD_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_RAD_FIELD_NUMBER: _ClassVar[int]
    CALIBRATION_DRIFT_RAD_FIELD_NUMBER: _ClassVar[int]
    TORQUE_KNOWN_FIELD_NUMBER: _ClassVar[int]
    RESETS_FIELD_NUMBER: _ClassVar[int]
    TORQUE_FIELD_NUMBER: _ClassVar[int]
    id: int
    label: str
    twin_joint: str
    position_deg: float
    twin_rad: float
    twin_actual_rad: float
    temperature_c: float
    voltage_v: float
    load_percent: float
    current_ma: float
    error_flags: int
    errors: _containers.RepeatedScalarFieldContainer[str]
    comm_errors: CommErrorCounts
    torque_enabled: bool
    calibrated_min_rad: float
    calibrated_max_rad: float
    effective_min_rad: float
    effective_max_rad: float
    outside_twin_range: bool
    predicted_rad: float
    residual_rad: float
    calibration_drift_rad: float
    torque_known: bool
    resets: int
    torque: TorqueState
    def __init__(self, id: _Optional[int] = ..., label: _Optional[str] = ..., twin_joint: _Optional[str] = ..., position_deg: _Optional[float] = ..., twin_rad: _Optional[float] = ..., twin_actual_rad: _Optional[float] = ..., temperature_c: _Optional[float] = ..., voltage_v: _Optional[float] = ..., load_percent: _Optional[float] = ..., current_ma: _Optional[float] = ..., error_flags: _Optional[int] = ..., errors: _Optional[_Iterable[str]] = ..., comm_errors: _Optional[_Union[CommErrorCounts, _Mapping]] = ..., torque_enabled: bool = ..., calibrated_min_rad: _Optional[float] = ..., calibrated_max_rad: _Optional[float] = ..., effective_min_rad: _Optional[float] = ..., effective_max_rad: _Optional[float] = ..., outside_twin_range: bool = ..., predicted_rad: _Optional[float] = ..., residual_rad: _Optional[float] = ..., calibration_drift_rad: _Optional[float] = ..., torque_known: bool = ..., resets: _Optional[int] = ..., torque: _Optional[_Union[TorqueState, str]] = ...) -> None: ...

class BusLink(_message.Message):
    __slots__ = ("state", "attempts", "losses", "recoveries", "time_lost_s", "last_error")
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LOSSES_FIELD_NUMBER: _ClassVar[int]
    RECOVERIES_FIELD_NUMBER: _ClassVar[int]
    TIME_LOST_S_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    state: LinkState
    attempts: int
    losses: int
    recoveries: int
    time_lost_s: float
    last_error: str
    def __init__(self, state: _Optional[_Union[LinkState, str]] = ..., attempts: _Optional[int] = ..., losses: _Optional[int] = ..., recoveries: _Optional[int] = ..., time_lost_s: _Optional[float] = ..., last_error: _Optional[str] = ...) -> None: ...

class GetHardwareStatusRequest(_message.Message):
    __slots__ = ("arm",)
    ARM_FIELD_NUMBER: _ClassVar[int]
    arm: str
    def __init__(self, arm: _Optional[str] = ...) -> None: ...

class GetHardwareStatusResponse(_message.Message):
    __slots__ = ("mode", "port", "bus_connected", "servos", "estop_latched", "estop_reason", "safety_events", "mapping_file", "lease_holder", "lease_expires_in_ms", "lease_required", "arm", "link", "torque")
    MODE_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    BUS_CONNECTED_FIELD_NUMBER: _ClassVar[int]
    SERVOS_FIELD_NUMBER: _ClassVar[int]
    ESTOP_LATCHED_FIELD_NUMBER: _ClassVar[int]
    ESTOP_REASON_FIELD_NUMBER: _ClassVar[int]
    SAFETY_EVENTS_FIELD_NUMBER: _ClassVar[int]
    MAPPING_FILE_FIELD_NUMBER: _ClassVar[int]
    LEASE_HOLDER_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRES_IN_MS_FIELD_NUMBER: _ClassVar[int]
    LEASE_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    LINK_FIELD_NUMBER: _ClassVar[int]
    TORQUE_FIELD_NUMBER: _ClassVar[int]
    mode: Mode
    port: str
    bus_connected: bool
    servos: _containers.RepeatedCompositeFieldContainer[ServoStatus]
    estop_latched: bool
    estop_reason: str
    safety_events: int
    mapping_file: str
    lease_holder: str
    lease_expires_in_ms: int
    lease_required: bool
    arm: str
    link: BusLink
    torque: TorqueState
    def __init__(self, mode: _Optional[_Union[Mode, str]] = ..., port: _Optional[str] = ..., bus_connected: bool = ..., servos: _Optional[_Iterable[_Union[ServoStatus, _Mapping]]] = ..., estop_latched: bool = ..., estop_reason: _Optional[str] = ..., safety_events: _Optional[int] = ..., mapping_file: _Optional[str] = ..., lease_holder: _Optional[str] = ..., lease_expires_in_ms: _Optional[int] = ..., lease_required: bool = ..., arm: _Optional[str] = ..., link: _Optional[_Union[BusLink, _Mapping]] = ..., torque: _Optional[_Union[TorqueState, str]] = ...) -> None: ...

class StreamJointStatesRequest(_message.Message):
    __slots__ = ("rate_hz", "arm")
    RATE_HZ_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    rate_hz: float
    arm: str
    def __init__(self, rate_hz: _Optional[float] = ..., arm: _Optional[str] = ...) -> None: ...

class JointSample(_message.Message):
    __slots__ = ("twin_joint", "label", "real_rad", "real_deg", "twin_rad", "predicted_rad", "residual_rad", "torque")
    TWIN_JOINT_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    REAL_RAD_FIELD_NUMBER: _ClassVar[int]
    REAL_DEG_FIELD_NUMBER: _ClassVar[int]
    TWIN_RAD_FIELD_NUMBER: _ClassVar[int]
    PREDICTED_RAD_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_RAD_FIELD_NUMBER: _ClassVar[int]
    TORQUE_FIELD_NUMBER: _ClassVar[int]
    twin_joint: str
    label: str
    real_rad: float
    real_deg: float
    twin_rad: float
    predicted_rad: float
    residual_rad: float
    torque: TorqueState
    def __init__(self, twin_joint: _Optional[str] = ..., label: _Optional[str] = ..., real_rad: _Optional[float] = ..., real_deg: _Optional[float] = ..., twin_rad: _Optional[float] = ..., predicted_rad: _Optional[float] = ..., residual_rad: _Optional[float] = ..., torque: _Optional[_Union[TorqueState, str]] = ...) -> None: ...

class JointStatesSample(_message.Message):
    __slots__ = ("seq", "elapsed_s", "mode", "joints", "reading_seq", "reading_elapsed_s")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_S_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    JOINTS_FIELD_NUMBER: _ClassVar[int]
    READING_SEQ_FIELD_NUMBER: _ClassVar[int]
    READING_ELAPSED_S_FIELD_NUMBER: _ClassVar[int]
    seq: int
    elapsed_s: float
    mode: Mode
    joints: _containers.RepeatedCompositeFieldContainer[JointSample]
    reading_seq: int
    reading_elapsed_s: float
    def __init__(self, seq: _Optional[int] = ..., elapsed_s: _Optional[float] = ..., mode: _Optional[_Union[Mode, str]] = ..., joints: _Optional[_Iterable[_Union[JointSample, _Mapping]]] = ..., reading_seq: _Optional[int] = ..., reading_elapsed_s: _Optional[float] = ...) -> None: ...

class EmergencyStopRequest(_message.Message):
    __slots__ = ("reason", "arm")
    REASON_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    reason: str
    arm: str
    def __init__(self, reason: _Optional[str] = ..., arm: _Optional[str] = ...) -> None: ...

class EmergencyStopResponse(_message.Message):
    __slots__ = ("estop_latched", "was_latched")
    ESTOP_LATCHED_FIELD_NUMBER: _ClassVar[int]
    WAS_LATCHED_FIELD_NUMBER: _ClassVar[int]
    estop_latched: bool
    was_latched: bool
    def __init__(self, estop_latched: bool = ..., was_latched: bool = ...) -> None: ...

class ResetEmergencyStopRequest(_message.Message):
    __slots__ = ("arm",)
    ARM_FIELD_NUMBER: _ClassVar[int]
    arm: str
    def __init__(self, arm: _Optional[str] = ...) -> None: ...

class ResetEmergencyStopResponse(_message.Message):
    __slots__ = ("estop_latched", "was_latched")
    ESTOP_LATCHED_FIELD_NUMBER: _ClassVar[int]
    WAS_LATCHED_FIELD_NUMBER: _ClassVar[int]
    estop_latched: bool
    was_latched: bool
    def __init__(self, estop_latched: bool = ..., was_latched: bool = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ("lease_id", "holder", "ttl_ms")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    holder: str
    ttl_ms: int
    def __init__(self, lease_id: _Optional[str] = ..., holder: _Optional[str] = ..., ttl_ms: _Optional[int] = ...) -> None: ...

class AcquireLeaseRequest(_message.Message):
    __slots__ = ("holder", "ttl_ms", "takeover", "arm")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    TAKEOVER_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    holder: str
    ttl_ms: int
    takeover: bool
    arm: str
    def __init__(self, holder: _Optional[str] = ..., ttl_ms: _Optional[int] = ..., takeover: bool = ..., arm: _Optional[str] = ...) -> None: ...

class AcquireLeaseResponse(_message.Message):
    __slots__ = ("lease", "previous_holder")
    LEASE_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_HOLDER_FIELD_NUMBER: _ClassVar[int]
    lease: Lease
    previous_holder: str
    def __init__(self, lease: _Optional[_Union[Lease, _Mapping]] = ..., previous_holder: _Optional[str] = ...) -> None: ...

class RenewLeaseRequest(_message.Message):
    __slots__ = ("lease_id",)
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    def __init__(self, lease_id: _Optional[str] = ...) -> None: ...

class RenewLeaseResponse(_message.Message):
    __slots__ = ("lease",)
    LEASE_FIELD_NUMBER: _ClassVar[int]
    lease: Lease
    def __init__(self, lease: _Optional[_Union[Lease, _Mapping]] = ...) -> None: ...

class ReleaseLeaseRequest(_message.Message):
    __slots__ = ("lease_id",)
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    def __init__(self, lease_id: _Optional[str] = ...) -> None: ...

class ReleaseLeaseResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
