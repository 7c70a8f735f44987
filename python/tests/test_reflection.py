"""Server reflection as Python's grpcio-reflection sees it: that client speaks only v1alpha."""

from __future__ import annotations

import grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

SERVICES = (
    "fakesim.v1.SessionService",
    "fakesim.v1.RobotService",
    "fakesim.v1.HardwareService",
    "fakesim.v1.PreviewService",
    "grpc.health.v1.Health",
)


def test_grpcio_reflection_lists_and_describes_every_service(daemon) -> None:
    with grpc.insecure_channel(daemon.address) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        services = database.get_services()
        for service in SERVICES:
            assert service in services, f"{service} missing from {services}"
        described = database.FindFileContainingSymbol("fakesim.v1.RobotService")
        assert any(s.name == "RobotService" for s in described.service)
