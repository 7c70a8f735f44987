//! Refused or failed session calls as tool errors: the contract's error name, the daemon's
//! message, what to do next, and for safety refusals on the real arm the layer that refused.

use fakesim_proto::errors::{ErrorStatus, error_info};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;
use tonic::Status;

/// The next step an agent should take after a refusal named `reason`.
pub fn what_to_do(reason: &str) -> &'static str {
    match reason {
        "already_running" => "An episode is already running: call stop_episode, then reset_task.",
        "not_running" => "No episode is running: call reset_task to start one.",
        "step_limit" => "The episode's step budget is used up: call stop_episode, then reset_task for a new episode.",
        "task_locked" => "The server fixes the scene: call reset_task without suite, task_index or init_state_index.",
        "unknown_suite" => "Call list_tasks without arguments to see the suites that exist.",
        "unknown_task" | "unknown_init_state" => {
            "Call list_tasks with the suite to see its task_index values and n_init_states."
        }
        "invalid_argument" | "non_finite" => "Fix the argument named in the message and call again.",
        "estop_latched" => {
            "The emergency stop is latched and nothing moves until an operator resets it; \
             look with get_observation, or end with stop_episode."
        }
        "mirror_mode" => {
            "The arm is in mirror mode (moved by hand or a leader arm), so motion tools are refused; \
             only get_observation, get_session_info and stop_episode work until the operator switches to hil."
        }
        "below_table" => "The target would put the TCP into the table: move less far down, or up first.",
        "out_of_range" => "The target lies outside a joint's range: make a smaller move or go another way.",
        "preview_refused" => {
            "The twin's preview of the next tick shows the arm hitting the table, its base, itself or an object \
             (the message names the links): move another way or in smaller steps."
        }
        "mode_changed" => "The operator changed the mode during the call: read get_session_info, then decide.",
        "bus_unavailable" => "The real arm's servo bus failed: stop_episode and ask the operator to check the arm.",
        "lease_held" => {
            "Another client holds the arm's control lease (details.holder): wait and call again, \
             or ask the operator; get_observation and get_session_info still work."
        }
        "lease_required" | "lease_expired" => {
            "This session does not hold the arm's control lease: call again (the daemon's MCP \
             endpoint takes it when free); `fakesim-hil mcp --connect` takes it only at start, so restart it."
        }
        "daemon_unavailable" => "The fakesim-hil daemon does not answer: check that it runs, then call again.",
        _ => "Read the message; get_session_info shows where the session stands.",
    }
}

/// The safety layer (or the mode) that refused a call on the real arm, if one did.
pub fn layer(reason: &str) -> Option<&'static str> {
    match reason {
        "estop_latched" => Some("emergency_stop"),
        "below_table" => Some("table"),
        "preview_refused" => Some("preview"),
        "out_of_range" => Some("joint_range"),
        "mirror_mode" => Some("mode"),
        _ => None,
    }
}

/// The error name of a status: its `ErrorInfo` reason, or for a status without one (the daemon
/// unreachable, a transport failure) a name made from the code.
pub fn error_name(status: &Status) -> String {
    match error_info(status) {
        Some(info) => info.reason,
        None if status.code() == tonic::Code::Unavailable => "daemon_unavailable".to_owned(),
        None => format!("{:?}", status.code()).to_ascii_lowercase(),
    }
}

/// A tool error for arguments that do not fit the tool's input schema.
pub fn invalid_arguments(detail: &str) -> CallToolResult {
    let status: Status = ErrorStatus::new(
        tonic::Code::InvalidArgument,
        "invalid_argument",
        format!("the arguments do not fit the tool's input schema: {detail}"),
    )
    .into();
    tool_error(&status)
}

/// A tool error for a refused call: structured content `{error, message, what_to_do, layer?,
/// details}` and a one-line text naming the error.
pub fn tool_error(status: &Status) -> CallToolResult {
    let name = error_name(status);
    let advice = what_to_do(&name);
    let details = error_info(status).map(|info| info.metadata).unwrap_or_default();
    let mut structured = json!({
        "error": name,
        "message": status.message(),
        "what_to_do": advice,
        "details": details,
    });
    let layer = layer(&name);
    if let (Some(layer), Some(map)) = (layer, structured.as_object_mut()) {
        map.insert("layer".to_owned(), json!(layer));
    }
    let prefix = layer.map_or(String::new(), |layer| format!(" (layer: {layer})"));
    let message = status.message().trim_end_matches('.');
    let text = format!("{name}{prefix}: {message}. {advice}");
    let mut result = CallToolResult::structured_error(structured);
    result.content.insert(0, ContentBlock::text(text));
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use tonic::Code;

    #[test]
    fn a_refusal_names_the_error_says_what_to_do_and_keeps_the_metadata() {
        let status: Status = ErrorStatus::new(Code::ResourceExhausted, "step_limit", "no steps left (max 300)")
            .meta("maxSteps", 300)
            .into();
        let result = tool_error(&status);
        assert_eq!(result.is_error, Some(true));
        let structured = result.structured_content.clone().unwrap();
        assert_eq!(structured["error"], "step_limit");
        assert_eq!(structured["details"]["maxSteps"], "300");
        assert!(structured["what_to_do"].as_str().unwrap().contains("stop_episode"));
        assert!(structured.get("layer").is_none());
        let text = &result.content[0].as_text().unwrap().text;
        assert!(
            text.starts_with("step_limit: no steps left (max 300). The episode"),
            "{text}"
        );
    }

    #[test]
    fn safety_refusals_name_their_layer() {
        let status: Status = ErrorStatus::new(Code::OutOfRange, "below_table", "TCP at z=0.79").into();
        let result = tool_error(&status);
        assert_eq!(result.structured_content.unwrap()["layer"], "table");
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.starts_with("below_table (layer: table): "), "{text}");
    }

    #[test]
    fn a_status_without_error_info_gets_a_name_from_its_code() {
        assert_eq!(
            error_name(&Status::unavailable("connection refused")),
            "daemon_unavailable"
        );
        assert_eq!(error_name(&Status::internal("boom")), "internal");
    }
}
