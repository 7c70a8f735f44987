//! Twin errors and request faults as gRPC statuses: a specific code, the message, and an
//! `ErrorInfo` whose reason names the error and whose metadata carries the values in the message.
//!
//! | error | code | reason |
//! |---|---|---|
//! | unknown joint, body, site, camera or saved state | NOT_FOUND | `unknown_name` |
//! | joint given twice | INVALID_ARGUMENT | `duplicate_joint` |
//! | ordered vector of the wrong length | INVALID_ARGUMENT | `wrong_length` |
//! | NaN or infinity | INVALID_ARGUMENT | `non_finite` |
//! | value outside a joint's range | OUT_OF_RANGE | `out_of_range` |
//! | count outside what a verb accepts | INVALID_ARGUMENT | `count_out_of_range` |
//! | image size the renderer cannot hold | INVALID_ARGUMENT | `image_size` |
//! | missing or malformed request field | INVALID_ARGUMENT | `invalid_argument` |
//! | snapshot taken against another model | FAILED_PRECONDITION | `stale_state` |
//! | rendering not possible on this machine | UNAVAILABLE | `render_unavailable` |
//! | twin stopped (daemon shutting down) | UNAVAILABLE | `stopped` |
//! | scene failed to load | INTERNAL | `scene` |
//! | a frame could not be encoded | INTERNAL | `encode_failed` |
//! | mirror or hil mode without a real arm | FAILED_PRECONDITION | `no_hardware` |
//! | entering hil while arm and twin disagree | FAILED_PRECONDITION | `arm_twin_disagree` |
//! | motion in mirror mode / a sim-only verb in hil | FAILED_PRECONDITION | `mirror_mode` / `sim_only_verb` |
//! | motion while the emergency stop is latched | FAILED_PRECONDITION | `estop_latched` |
//! | a goal outside the calibrated range / TCP into the table | OUT_OF_RANGE | `out_of_range` / `below_table` |
//! | the servo bus failed | UNAVAILABLE | `bus_unavailable` |

use fakesim_bridge::hil::BridgeError;
use fakesim_proto::errors::ErrorStatus;
use fakesim_safety::SafetyError;
use fakesim_twin::TwinError;
use fakesim_twin::image::EncodeError;
use tonic::{Code, Status};

/// The status a twin error is reported with.
pub fn from_twin(error: &TwinError) -> Status {
    let message = error.to_string();
    let status = match error {
        TwinError::UnknownName { kind, unknown, known } => ErrorStatus::new(Code::NotFound, "unknown_name", message)
            .meta("kind", kind)
            .meta("unknown", unknown.join(", "))
            .meta("known", known.join(", ")),
        TwinError::InvalidName { kind, .. } => {
            ErrorStatus::new(Code::InvalidArgument, "invalid_argument", message).meta("field", kind)
        }
        TwinError::DuplicateJoint { joint } => {
            ErrorStatus::new(Code::InvalidArgument, "duplicate_joint", message).meta("joint", joint)
        }
        TwinError::WrongLength { expected, got, order } => {
            ErrorStatus::new(Code::InvalidArgument, "wrong_length", message)
                .meta("expected", expected)
                .meta("got", got)
                .meta("order", order.join(", "))
        }
        TwinError::NonFinite { key, value } => ErrorStatus::new(Code::InvalidArgument, "non_finite", message)
            .meta("joint", key)
            .meta("value", value),
        TwinError::OutOfRange {
            joint,
            value,
            lo,
            hi,
            unit,
            hint,
        } => {
            let status = ErrorStatus::new(Code::OutOfRange, "out_of_range", message)
                .meta("joint", joint)
                .meta("value", value)
                .meta("range", format!("[{lo}, {hi}]"))
                .meta("unit", unit);
            match hint {
                Some(hint) => status.meta("hint", hint),
                None => status,
            }
        }
        TwinError::CountOutOfRange { what, value, lo, hi } => {
            ErrorStatus::new(Code::InvalidArgument, "count_out_of_range", message)
                .meta("field", what)
                .meta("value", value)
                .meta("range", format!("[{lo}, {hi}]"))
        }
        TwinError::StaleState { name } => {
            ErrorStatus::new(Code::FailedPrecondition, "stale_state", message).meta("name", name)
        }
        TwinError::ImageSize {
            width,
            height,
            max_width,
            max_height,
        } => ErrorStatus::new(Code::InvalidArgument, "image_size", message)
            .meta("width", width)
            .meta("height", height)
            .meta("maxWidth", max_width)
            .meta("maxHeight", max_height),
        TwinError::RenderUnavailable(detail) => {
            ErrorStatus::new(Code::Unavailable, "render_unavailable", message).meta("detail", detail)
        }
        TwinError::Scene(detail) => ErrorStatus::new(Code::Internal, "scene", message).meta("detail", detail),
        TwinError::Fault { thread, .. } => {
            ErrorStatus::new(Code::Internal, "twin_fault", message).meta("thread", thread)
        }
        TwinError::Stopped => ErrorStatus::new(Code::Unavailable, "stopped", message),
    };
    status.into()
}

/// The status a hardware-bridge refusal or failure is reported with.
pub fn from_bridge(error: &BridgeError) -> Status {
    let code = match error {
        BridgeError::Twin(twin) => return from_twin(twin),
        BridgeError::NoHardware(_)
        | BridgeError::Disagree { .. }
        | BridgeError::NotArrived { .. }
        | BridgeError::ServoFault { .. }
        | BridgeError::Refused { .. } => Code::FailedPrecondition,
        BridgeError::Safety(SafetyError::EstopLatched { .. }) => Code::FailedPrecondition,
        BridgeError::Safety(SafetyError::NonFinite { .. }) | BridgeError::InvalidArgument(_) => Code::InvalidArgument,
        BridgeError::Safety(_) => Code::OutOfRange,
        BridgeError::Arm(_) | BridgeError::NoReading(_) => Code::Unavailable,
    };
    let status = ErrorStatus::new(code, error.reason(), error.to_string());
    match error {
        BridgeError::Disagree {
            joint,
            error_rad,
            threshold_rad,
        } => status
            .meta("joint", joint)
            .meta("errorRad", error_rad)
            .meta("thresholdRad", threshold_rad),
        BridgeError::NotArrived {
            joint,
            error_rad,
            threshold_rad,
        } => status
            .meta("joint", joint)
            .meta("errorRad", error_rad)
            .meta("thresholdRad", threshold_rad),
        BridgeError::ServoFault { joint, id, .. } => status.meta("joint", joint).meta("servoId", id),
        _ => status,
    }
    .into()
}

/// A request field that is missing or malformed (as opposed to a value the twin refused).
pub fn invalid_argument(field: &str, message: impl Into<String>) -> Status {
    ErrorStatus::new(Code::InvalidArgument, "invalid_argument", message)
        .meta("field", field)
        .into()
}

/// A rendered frame that could not be encoded as PNG.
pub fn from_encode(error: &EncodeError) -> Status {
    ErrorStatus::new(Code::Internal, "encode_failed", error.to_string()).into()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use fakesim_proto::errors::{error_info, error_reason};

    fn sample_errors() -> Vec<TwinError> {
        vec![
            TwinError::UnknownName {
                kind: "joint",
                unknown: vec!["elbow".into(), "7".into()],
                known: vec!["1".into()],
            },
            TwinError::DuplicateJoint {
                joint: "1 (shoulder_pan)".into(),
            },
            TwinError::WrongLength {
                expected: 6,
                got: 5,
                order: vec!["1".into()],
            },
            TwinError::NonFinite {
                key: "gripper".into(),
                value: f64::NAN,
            },
            TwinError::OutOfRange {
                joint: "shoulder_pan".into(),
                value: -96.2,
                lo: -1.92,
                hi: 1.92,
                unit: "rad",
                hint: Some("h".into()),
            },
            TwinError::CountOutOfRange {
                what: "n_steps",
                value: 100_001,
                lo: 0,
                hi: 100_000,
            },
            TwinError::StaleState { name: "a".into() },
            TwinError::ImageSize {
                width: 9000,
                height: 1,
                max_width: 640,
                max_height: 480,
            },
            TwinError::RenderUnavailable("no EGL".into()),
            TwinError::Scene("bad xml".into()),
            TwinError::Stopped,
        ]
    }

    #[test]
    fn every_twin_error_has_a_specific_code_and_reason() {
        let expected = [
            (Code::NotFound, "unknown_name"),
            (Code::InvalidArgument, "duplicate_joint"),
            (Code::InvalidArgument, "wrong_length"),
            (Code::InvalidArgument, "non_finite"),
            (Code::OutOfRange, "out_of_range"),
            (Code::InvalidArgument, "count_out_of_range"),
            (Code::FailedPrecondition, "stale_state"),
            (Code::InvalidArgument, "image_size"),
            (Code::Unavailable, "render_unavailable"),
            (Code::Internal, "scene"),
            (Code::Unavailable, "stopped"),
        ];
        for (error, (code, reason)) in sample_errors().iter().zip(expected) {
            let status = from_twin(error);
            assert_eq!(status.code(), code, "{error}");
            assert_eq!(error_reason(&status).as_deref(), Some(reason), "{error}");
            assert_eq!(status.message(), error.to_string());
        }
    }

    #[test]
    fn range_refusal_carries_joint_value_range_unit_and_hint() {
        let status = from_twin(&sample_errors()[4]);
        let meta = error_info(&status).unwrap().metadata;
        assert_eq!(meta["joint"], "shoulder_pan");
        assert_eq!(meta["value"], "-96.2");
        assert_eq!(meta["range"], "[-1.92, 1.92]");
        assert_eq!(meta["unit"], "rad");
        assert_eq!(meta["hint"], "h");
    }

    #[test]
    fn unknown_names_are_all_listed() {
        let status = from_twin(&sample_errors()[0]);
        assert_eq!(error_info(&status).unwrap().metadata["unknown"], "elbow, 7");
    }
}
