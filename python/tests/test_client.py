"""The typed client against a real sim-only daemon."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import numpy as np
import pytest

from fakesim.v1 import session_pb2
from fakesim_hil import Client, FakesimError


def test_lists_the_suite_and_its_tasks(client: Client) -> None:
    suites = {suite.name: suite.n_tasks for suite in client.suites()}
    assert suites["so101_tabletop"] == 5
    tasks = client.tasks("so101_tabletop")
    assert [task.name for task in tasks] == ["lift_cube", "cube_in_bowl", "push_to_target", "stack_cubes", "reach_target"]
    assert all(task.n_init_states == 12 for task in tasks)


def test_unknown_suite_raises_with_code_and_reason(client: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        client.tasks("no_such_suite")
    assert refused.value.code == grpc.StatusCode.NOT_FOUND
    assert refused.value.reason == "unknown_suite"


def test_move_without_an_episode_is_refused_not_running(client: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        client.move(dz=0.01)
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.reason == "not_running"


def test_episode_reset_observe_move_gripper_stop(client: Client) -> None:
    started = client.reset("so101_tabletop", 0, 3)
    assert started.task.name == "lift_cube" and started.task.init_state_index == 3

    seen = client.observe()
    assert set(seen.images) == {"agentview", "robot0_eye_in_hand"}
    for image in seen.images.values():
        assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
        assert image.std() > 1.0, "a rendered scene is not a flat colour"
    assert seen.timing.render_s > 0.0 and seen.timing.encode_s > 0.0, seen.timing

    moved = client.move(dy=0.04)
    assert moved.action.stop_reason == session_pb2.MOVE_STOP_REASON_REACHED
    after = client.observe()
    np.testing.assert_allclose(after.eef_pos_m - seen.eef_pos_m, [0.0, 0.04, 0.0], atol=0.008)

    closed = client.gripper("close")
    assert closed.action.opening_after_m < closed.action.opening_before_m

    stopped = client.stop()
    summary = json.loads(Path(stopped.artifacts.summary).read_text())
    assert summary["run"] == started.run and summary["status"] == "stopped"
    assert summary["success"] is False, "one move and a close do not lift the cube"
    assert client.session_info().status == session_pb2.EPISODE_STATUS_STOPPED


def test_tick_returns_the_observation_vector_and_images(client: Client) -> None:
    model = client.model_info()
    assert len(model.action_keys) == 6
    state = client.robot_state()
    result = client.tick(list(state.ctrl_targets), images=True, cameras=["agentview"], width=96, height=64, depth=True)
    assert result.observation.shape == (len(model.observation_keys),)
    assert list(result.images) == ["agentview"]
    assert result.images["agentview"].shape == (64, 96, 3)
    assert result.depth["agentview"].shape == (64, 96)
    assert result.physics_steps == state.physics_steps + model.substeps_per_tick
    assert result.image_timing is not None and result.image_timing.render_s > 0.0, result.image_timing
    assert client.tick(list(state.ctrl_targets)).image_timing is None, "no frames, no timing"
    png = client.tick(list(state.ctrl_targets), images=True, cameras=["agentview"], width=96, height=64, raw_images=False)
    raw = client.tick(list(state.ctrl_targets), images=True, cameras=["agentview"], width=96, height=64)
    assert png.images["agentview"].shape == raw.images["agentview"].shape == (64, 96, 3)
    assert png.images["agentview"].std() > 1.0 and raw.images["agentview"].std() > 1.0


def test_tick_with_a_wrong_length_is_refused(client: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        client.tick([0.0, 0.0])
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "wrong_length"


def test_degrees_given_as_radians_are_refused_with_the_conversion(client: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        client.send_action({"shoulder_pan": -96.2})
    assert refused.value.code == grpc.StatusCode.OUT_OF_RANGE
    assert refused.value.reason == "out_of_range"
    assert "deg" in refused.value.message and "rad" in refused.value.message


def test_send_action_by_label_moves_the_target(client: Client) -> None:
    applied = client.send_action({"elbow_flex": 0.3}, n_substeps=5)
    assert applied.substeps_run == 5
    labels = [joint.label for joint in client.model_info().joints]
    assert client.robot_state().ctrl_targets[labels.index("elbow_flex")] == pytest.approx(0.3)


def test_sim_only_daemon_is_in_sim_and_refuses_hil(client: Client) -> None:
    assert client.mode() == "sim"
    status = client.status()
    assert not status.HasField("port") and len(status.servos) == 0
    with pytest.raises(FakesimError) as refused:
        client.set_mode("hil")
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.reason == "no_hardware"


def test_emergency_stop_latches_refuses_motion_and_resets(client: Client) -> None:
    client.reset()
    latched = client.emergency_stop("pytest")
    try:
        assert latched.estop_latched and not latched.was_latched
        status = client.status()
        assert status.estop_latched and status.estop_reason == "pytest"
        with pytest.raises(FakesimError) as refused:
            client.move(dz=0.01)
        assert refused.value.reason == "estop_latched"
    finally:
        cleared = client.reset_emergency_stop()
    assert cleared.was_latched and not cleared.estop_latched
    client.move(dz=0.01)


def test_joint_state_stream_yields_numbered_samples_of_every_joint(client: Client) -> None:
    samples = []
    stream = client.joint_states(200.0)
    for sample in stream:
        samples.append(sample)
        if len(samples) == 3:
            break
    stream.close()
    assert [s.seq for s in samples] == sorted(s.seq for s in samples)
    assert all(len(s.joints) == 6 for s in samples)
    assert [j.label for j in samples[0].joints][0] == "shoulder_pan"
    assert all(not j.HasField("real_rad") for j in samples[0].joints)


def test_a_bad_stream_rate_is_refused(client: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        next(iter(client.joint_states(0.0)))
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "invalid_argument"


def test_summary_reports_the_run_for_policy_validation(client: Client) -> None:
    client.reset("so101_tabletop", 0, 1)
    moved = client.move(dz=-0.30)  # straight down into the table
    assert moved.action.stop_reason == session_pb2.MOVE_STOP_REASON_STALLED
    pan_max = client.model_info().joints[0].range_max
    client.set_joint_positions({"shoulder_pan": pan_max}, hold=True)  # the joint on its stop
    client.tick(list(client.robot_state().ctrl_targets))
    report = json.loads(Path(client.stop().artifacts.summary).read_text())["validation"]
    assert report["success"] is False
    assert report["stop_reasons"]["move"]["stalled"] == 1
    assert report["safety_refusals"] == 0
    assert report["joint_limit_hits"]["shoulder_pan"] > 0
    assert report["joint_limit_hits"]["elbow_flex"] == 0
    assert -0.01 < report["min_table_clearance_m"] < 0.03, "the move ended on the table"
