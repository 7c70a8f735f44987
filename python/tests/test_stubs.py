"""The checked-in gRPC stubs are exactly what grpcio-tools generates from proto/."""

from __future__ import annotations

import filecmp
from pathlib import Path

from grpc_tools import protoc

REPO = Path(__file__).resolve().parents[2]
PROTO_ROOT = REPO / "proto"
STUBS = REPO / "python" / "fakesim-hil" / "src" / "fakesim" / "v1"


def generated_names(directory: Path) -> list[str]:
    """Names of the generated files in a directory (not the package's __init__)."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")))


def test_checked_in_stubs_match_a_fresh_generation(tmp_path: Path) -> None:
    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / "fakesim" / "v1").glob("*.proto"))
    assert protos, "no proto files found"
    status = protoc.main(
        ["grpc_tools.protoc", f"-I{PROTO_ROOT}", f"--python_out={tmp_path}", f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}", *protos]
    )
    assert status == 0
    fresh = tmp_path / "fakesim" / "v1"
    assert generated_names(fresh) == generated_names(STUBS)
    _, mismatch, errors = filecmp.cmpfiles(fresh, STUBS, generated_names(fresh), shallow=False)
    assert not mismatch and not errors, (
        f"stale stubs {mismatch + errors}: regenerate with python -m grpc_tools.protoc -I proto "
        "--python_out=python/fakesim-hil/src --pyi_out=python/fakesim-hil/src "
        "--grpc_python_out=python/fakesim-hil/src proto/fakesim/v1/*.proto"
    )
