"""PreviewActions through the typed client against a real sim-only daemon."""

from __future__ import annotations

import grpc
import pytest

from fakesim_hil import Client, FakesimError


def ramp(target: list[float], ticks: int = 20) -> list[list[float]]:
    """Actions moving linearly from the initial pose (all zero) to ``target``."""
    return [[v * k / ticks for v in target] for k in range(1, ticks + 1)]


def test_a_chunk_into_the_table_shows_the_contact_and_moves_nothing(client: Client) -> None:
    # From a fresh layout, wherever earlier tests left the session daemon's arm and cube (one
    # left holding the cube, whose contacts then came first).
    client.reset("so101_tabletop", 0, 0, cameras=())
    before = client.robot_state()
    report = client.preview_actions(ramp([0.0, 1.0, 0.0, 0.0, 0.0, 0.0]), horizon_ticks=20)
    assert not report.safe
    table = [c for c in report.contacts if c.contact_class == "table"]
    assert table and table[0].other_geom == "table_top" and table[0].max_depth_m > 0
    assert report.violations[0].kind == "table_contact"
    assert report.summary.startswith("table_contact: ")
    assert client.robot_state() == before


def test_a_safe_chunk_in_lerobot_degrees_passes(client: Client) -> None:
    report = client.preview_actions([{"shoulder_pan": 10.0}] * 10, horizon_ticks=5, unit="lerobot_degrees")
    assert report.safe, report.summary
    assert report.ticks == 15 and len(report.joints) == 6
    assert report.joints[0].label == "shoulder_pan"
    assert report.joints[0].final_position == pytest.approx(10.0, abs=1.0)


def test_a_bad_action_is_refused_with_its_reason(client: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        client.preview_actions([[0.0] * 5])
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "wrong_length"
