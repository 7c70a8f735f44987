from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JointUnit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOINT_UNIT_UNSPECIFIED: _ClassVar[JointUnit]
    JOINT_UNIT_RADIANS: _ClassVar[JointUnit]
    JOINT_UNIT_LEROBOT_DEGREES: _ClassVar[JointUnit]
    JOINT_UNIT_LEROBOT_RANGE: _ClassVar[JointUnit]

class RenderQuality(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RENDER_QUALITY_UNSPECIFIED: _ClassVar[RenderQuality]
    RENDER_QUALITY_FAST: _ClassVar[RenderQuality]
    RENDER_QUALITY_FULL: _ClassVar[RenderQuality]
JOINT_UNIT_UNSPECIFIED: JointUnit
JOINT_UNIT_RADIANS: JointUnit
JOINT_UNIT_LEROBOT_DEGREES: JointUnit
JOINT_UNIT_LEROBOT_RANGE: JointUnit
RENDER_QUALITY_UNSPECIFIED: RenderQuality
RENDER_QUALITY_FAST: RenderQuality
RENDER_QUALITY_FULL: RenderQuality

class Vec3(_message.Message):
    __slots__ = ("x", "y", "z")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    Z_FIELD_NUMBER: _ClassVar[int]
    x: float
    y: float
    z: float
    def __init__(self, x: _Optional[float] = ..., y: _Optional[float] = ..., z: _Optional[float] = ...) -> None: ...

class Rpy(_message.Message):
    __slots__ = ("roll_x", "pitch_y", "yaw_z")
    ROLL_X_FIELD_NUMBER: _ClassVar[int]
    PITCH_Y_FIELD_NUMBER: _ClassVar[int]
    YAW_Z_FIELD_NUMBER: _ClassVar[int]
    roll_x: float
    pitch_y: float
    yaw_z: float
    def __init__(self, roll_x: _Optional[float] = ..., pitch_y: _Optional[float] = ..., yaw_z: _Optional[float] = ...) -> None: ...

class Quaternion(_message.Message):
    __slots__ = ("w", "x", "y", "z")
    W_FIELD_NUMBER: _ClassVar[int]
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    Z_FIELD_NUMBER: _ClassVar[int]
    w: float
    x: float
    y: float
    z: float
    def __init__(self, w: _Optional[float] = ..., x: _Optional[float] = ..., y: _Optional[float] = ..., z: _Optional[float] = ...) -> None: ...

class Pose(_message.Message):
    __slots__ = ("position_m", "orientation")
    POSITION_M_FIELD_NUMBER: _ClassVar[int]
    ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    position_m: Vec3
    orientation: Quaternion
    def __init__(self, position_m: _Optional[_Union[Vec3, _Mapping]] = ..., orientation: _Optional[_Union[Quaternion, _Mapping]] = ...) -> None: ...

class NamedJointValues(_message.Message):
    __slots__ = ("values",)
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.ScalarMap[str, float]
    def __init__(self, values: _Optional[_Mapping[str, float]] = ...) -> None: ...

class OrderedJointValues(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class JointValues(_message.Message):
    __slots__ = ("named", "ordered")
    NAMED_FIELD_NUMBER: _ClassVar[int]
    ORDERED_FIELD_NUMBER: _ClassVar[int]
    named: NamedJointValues
    ordered: OrderedJointValues
    def __init__(self, named: _Optional[_Union[NamedJointValues, _Mapping]] = ..., ordered: _Optional[_Union[OrderedJointValues, _Mapping]] = ...) -> None: ...

class ImageTiming(_message.Message):
    __slots__ = ("render_s", "encode_s")
    RENDER_S_FIELD_NUMBER: _ClassVar[int]
    ENCODE_S_FIELD_NUMBER: _ClassVar[int]
    render_s: float
    encode_s: float
    def __init__(self, render_s: _Optional[float] = ..., encode_s: _Optional[float] = ...) -> None: ...
