//! Session-service answers as tool results: the contract's fields as structured content, and
//! the two camera images as PNG image contents beside it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use fakesim_proto::v1;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// MIME type of every camera image.
const PNG: &str = "image/png";

/// The cameras a tool's answer carries, in the order of its image contents; `reset_task` asks
/// the daemon for them by name (a reset draws only what it names).
pub const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// A successful result: `structured` as structured content and as its JSON text, followed by
/// the images when there are any.
pub fn success(structured: Value, images: Option<&v1::Images>) -> CallToolResult {
    let mut result = CallToolResult::structured(structured);
    if let Some(images) = images {
        for png in [&images.agentview, &images.robot0_eye_in_hand] {
            result.content.push(ContentBlock::image(STANDARD.encode(png), PNG));
        }
    }
    result
}

/// Where the images of a result are: content indices, so an agent can tell them apart.
fn images_index(images: Option<&v1::Images>) -> Value {
    match images {
        Some(images) => json!({
            "agentview": { "content_index": 1, "mime_type": PNG, "bytes": images.agentview.len() },
            "robot0_eye_in_hand": {
                "content_index": 2, "mime_type": PNG, "bytes": images.robot0_eye_in_hand.len()
            },
        }),
        None => Value::Null,
    }
}

fn xyz(v: Option<&v1::Vec3>) -> Value {
    v.map_or(Value::Null, |v| json!([v.x, v.y, v.z]))
}

fn rpy(r: Option<&v1::Rpy>) -> Value {
    r.map_or(
        Value::Null,
        |r| json!({ "roll_x": r.roll_x, "pitch_y": r.pitch_y, "yaw_z": r.yaw_z }),
    )
}

/// Lower-case name of a proto enum value with its type prefix removed
/// (`MOVE_STOP_REASON_STEP_CAP` → `step_cap`).
fn enum_name(name: &str, prefix: &str) -> String {
    name.strip_prefix(prefix).unwrap_or(name).to_ascii_lowercase()
}

fn status(status: v1::EpisodeStatus) -> String {
    enum_name(status.as_str_name(), "EPISODE_STATUS_")
}

fn command(command: v1::GripperCommand) -> String {
    enum_name(command.as_str_name(), "GRIPPER_COMMAND_")
}

fn task(task: Option<&v1::Task>) -> Value {
    task.map_or(Value::Null, |t| {
        json!({
            "suite": t.suite,
            "task_index": t.task_index,
            "name": t.name,
            "instruction": t.instruction,
            "init_state_index": t.init_state_index,
        })
    })
}

fn state(state: Option<&v1::EefState>) -> Value {
    state.map_or(Value::Null, |s| {
        let gripper = s.gripper.as_ref().map_or(
            Value::Null,
            |g| json!({ "command": command(g.command()), "opening_m": g.opening_m }),
        );
        json!({
            "eef_pos_m": xyz(s.eef_pos_m.as_ref()),
            "eef_rpy_rad": rpy(s.eef_rpy_rad.as_ref()),
            "gripper": gripper,
        })
    })
}

/// `list_tasks`: the suites, or the tasks of one suite.
pub fn list_tasks(out: &v1::ListTasksResponse) -> CallToolResult {
    let structured = match &out.suite {
        None => json!({
            "suites": out.suites.iter().map(|s| json!({ "name": s.name, "n_tasks": s.n_tasks })).collect::<Vec<_>>(),
            "total_tasks": out.total_tasks,
        }),
        Some(suite) => json!({
            "suite": suite,
            "tasks": out.tasks.iter().map(|t| json!({
                "task_index": t.task_index,
                "name": t.name,
                "instruction": t.instruction,
                "n_init_states": t.n_init_states,
            })).collect::<Vec<_>>(),
        }),
    };
    success(structured, None)
}

/// `reset_task`.
pub fn reset_task(out: &v1::ResetTaskResponse) -> CallToolResult {
    let images = out.images.as_ref();
    let structured = json!({
        "run": out.run,
        "task": task(out.task.as_ref()),
        "images": images_index(images),
        "state": state(out.state.as_ref()),
        "step": out.step,
        "steps_left": out.steps_left,
    });
    success(structured, images)
}

/// `get_observation`.
pub fn get_observation(out: &v1::GetObservationResponse) -> CallToolResult {
    let images = out.images.as_ref();
    let structured = json!({
        "images": images_index(images),
        "state": state(out.state.as_ref()),
        "step": out.step,
        "steps_left": out.steps_left,
        "status": status(out.status()),
    });
    success(structured, images)
}

/// The episode after a move or a gripper action, which both report it beside the action.
struct After<'a> {
    images: Option<&'a v1::Images>,
    state: Option<&'a v1::EefState>,
    step: u32,
    steps_left: u32,
    status: v1::EpisodeStatus,
}

impl After<'_> {
    /// The tool's result: `action` (the call's report) with the episode after it.
    fn with(self, action: Value) -> CallToolResult {
        let structured = json!({
            "images": images_index(self.images),
            "state": state(self.state),
            "action": action,
            "step": self.step,
            "steps_left": self.steps_left,
            "status": status(self.status),
        });
        success(structured, self.images)
    }
}

/// The [`After`] of a response with the episode's fields (`MoveResponse`, `GripperResponse`).
macro_rules! after {
    ($out:expr) => {
        After {
            images: $out.images.as_ref(),
            state: $out.state.as_ref(),
            step: $out.step,
            steps_left: $out.steps_left,
            status: $out.status(),
        }
    };
}

/// `move`.
pub fn moved(out: &v1::MoveResponse) -> CallToolResult {
    let action = out.action.as_ref().map_or(Value::Null, |a| {
        json!({
            "delta_xyz": xyz(a.delta_xyz.as_ref()),
            "delta_rpy": rpy(a.delta_rpy.as_ref()),
            "executed_steps": a.executed_steps,
            "stop_reason": move_stop_reason(a),
            "achieved_delta_xyz": xyz(a.achieved_delta_xyz.as_ref()),
            "remaining_distance_m": a.remaining_distance_m,
        })
    });
    after!(out).with(action)
}

/// The stop reason of a move, as the contract names it.
pub fn move_stop_reason(action: &v1::MoveAction) -> String {
    enum_name(action.stop_reason().as_str_name(), "MOVE_STOP_REASON_")
}

/// `gripper`.
pub fn gripper(out: &v1::GripperResponse) -> CallToolResult {
    let action = out.action.as_ref().map_or(Value::Null, |a| {
        json!({
            "command": command(a.command()),
            "executed_steps": a.executed_steps,
            "stop_reason": gripper_stop_reason(a),
            "opening_before_m": a.opening_before_m,
            "opening_after_m": a.opening_after_m,
        })
    });
    after!(out).with(action)
}

/// The stop reason of a gripper action, as the contract names it.
pub fn gripper_stop_reason(action: &v1::GripperAction) -> String {
    enum_name(action.stop_reason().as_str_name(), "GRIPPER_STOP_REASON_")
}

/// `stop_episode`.
pub fn stop_episode(out: &v1::StopEpisodeResponse) -> CallToolResult {
    let artifacts = out.artifacts.as_ref().map_or(
        Value::Null,
        |a| json!({ "events": a.events, "frames": a.frames, "summary": a.summary }),
    );
    let structured = json!({
        "run": out.run,
        "status": status(out.status()),
        "artifacts": artifacts,
    });
    success(structured, None)
}

/// `get_session_info`: while idle `default_scene` instead of `run`, `task` and `state`.
pub fn get_session_info(out: &v1::GetSessionInfoResponse) -> CallToolResult {
    let mut structured = json!({
        "status": status(out.status()),
        "step": out.step,
        "max_steps": out.max_steps,
        "steps_left": out.steps_left,
        "task_locked": out.task_locked,
    });
    let fields = [
        ("run", out.run.as_ref().map(|run| json!(run))),
        ("task", out.task.as_ref().map(|t| task(Some(t)))),
        ("state", out.state.as_ref().map(|s| state(Some(s)))),
        ("default_scene", out.default_scene.as_ref().map(|t| task(Some(t)))),
    ];
    if let Value::Object(map) = &mut structured {
        for (key, value) in fields {
            if let Some(value) = value {
                map.insert(key.to_owned(), value);
            }
        }
    }
    success(structured, None)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn enum_values_get_the_contract_names() {
        let action = v1::MoveAction {
            stop_reason: v1::MoveStopReason::StepCap.into(),
            ..Default::default()
        };
        assert_eq!(move_stop_reason(&action), "step_cap");
        let action = v1::GripperAction {
            stop_reason: v1::GripperStopReason::NoOp.into(),
            ..Default::default()
        };
        assert_eq!(gripper_stop_reason(&action), "no_op");
        assert_eq!(status(v1::EpisodeStatus::Running), "running");
        assert_eq!(command(v1::GripperCommand::Close), "close");
    }

    #[test]
    fn images_follow_the_structured_text_in_camera_order() {
        let out = v1::GetObservationResponse {
            images: Some(v1::Images {
                agentview: vec![1, 2, 3],
                robot0_eye_in_hand: vec![4, 5],
                ..Default::default()
            }),
            ..Default::default()
        };
        let result = get_observation(&out);
        assert_eq!(result.content.len(), 3);
        let first = result.content[1].as_image().unwrap();
        assert_eq!((first.data.as_str(), first.mime_type.as_str()), ("AQID", PNG));
        assert_eq!(result.content[2].as_image().unwrap().data, "BAU=");
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["images"]["robot0_eye_in_hand"]["content_index"], 2);
        assert_eq!(structured["images"]["agentview"]["bytes"], 3);
    }

    #[test]
    fn idle_session_info_has_the_default_scene_and_no_task() {
        let out = v1::GetSessionInfoResponse {
            status: v1::EpisodeStatus::Idle.into(),
            max_steps: 300,
            steps_left: 300,
            default_scene: Some(v1::Task {
                suite: "so101_tabletop".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let structured = get_session_info(&out).structured_content.unwrap();
        assert_eq!(structured["status"], "idle");
        assert_eq!(structured["default_scene"]["suite"], "so101_tabletop");
        assert!(structured.get("task").is_none() && structured.get("run").is_none());
    }
}
