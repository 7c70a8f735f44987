"""Refusals of the daemon as Python exceptions carrying the gRPC code and the ErrorInfo reason."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

#: ErrorInfo domain of every refusal the daemon sends.
DOMAIN = "fakesim-hil"

_CODES = {code.value[0]: code for code in grpc.StatusCode}


def status_code(value: int) -> grpc.StatusCode:
    """The `grpc.StatusCode` of a status code's number (UNKNOWN for a number gRPC has not)."""
    return _CODES.get(value, grpc.StatusCode.UNKNOWN)


class FakesimError(Exception):
    """A call the daemon refused (or that failed in transport), with its code and reason."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code.name}: {message}" + (f" [{reason}]" if reason else ""))
        #: The gRPC status code, e.g. ``grpc.StatusCode.OUT_OF_RANGE``.
        self.code = code
        #: The status message as the daemon wrote it.
        self.message = message
        #: The ErrorInfo reason (``out_of_range``, ``not_running``, ...); None for transport errors.
        self.reason = reason
        #: The ErrorInfo metadata: every value named in the message.
        self.metadata = metadata or {}

    def __reduce__(self) -> tuple[type[FakesimError], tuple[grpc.StatusCode, str, str | None, dict[str, str]]]:
        """Pickles by the constructor's arguments (a vector env's worker sends its errors back)."""
        return (type(self), (self.code, self.message, self.reason, self.metadata))

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> FakesimError:
        """Builds the exception from a failed call, reading the ErrorInfo detail when present."""
        code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
        message = error.details() if isinstance(error, grpc.Call) else str(error)
        status = rpc_status.from_call(error) if isinstance(error, grpc.Call) else None
        return cls._with_info(code, message or "", status)

    @classmethod
    def from_status(cls, code: grpc.StatusCode, message: str, details: bytes | None) -> FakesimError:
        """Builds the exception from a call's status as its trailers carry it: the code, the
        message and the serialized ``google.rpc.Status`` of ``grpc-status-details-bin``."""
        return cls._with_info(code, message, status_pb2.Status.FromString(details) if details else None)

    @classmethod
    def _with_info(cls, code: grpc.StatusCode, message: str, status: status_pb2.Status | None) -> FakesimError:
        """The exception with the reason and metadata of the status's fakesim-hil ErrorInfo."""
        for detail in status.details if status is not None else ():
            info = error_details_pb2.ErrorInfo()
            if detail.Is(info.DESCRIPTOR) and detail.Unpack(info) and info.domain == DOMAIN:
                return cls(code, message, info.reason, dict(info.metadata))
        return cls(code, message)
