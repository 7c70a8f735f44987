//! The one error table: every refusal or failure the API reports is a [`Reason`], and each
//! reason has exactly one gRPC code, whatever the route (session, robot or hardware service).
//! Domain errors (twin, episode, bridge, safety) are mapped to a reason here and nowhere else;
//! the status carries the message and an `ErrorInfo` whose reason names the error and whose
//! metadata carries the values in the message. Client strings are quoted back bounded.
//!
//! The manual's list of reasons (`docs/src/errors.md`) is checked against [`Reason::ALL`] by a test.

use crate::access::auth::AuthError;
use crate::access::lease::LeaseError;
use fakesim_arm::ArmError;
use fakesim_bridge::hil::BridgeError;
use fakesim_episode::EpisodeError;
use fakesim_episode::names::NameError;
use fakesim_episode::tasks::TaskError;
use fakesim_proto::errors::{ErrorStatus, error_info};
use fakesim_safety::SafetyError;
use fakesim_twin::TwinError;
use fakesim_twin::image::EncodeError;
use fakesim_twin::quote::Quoted;
use fakesim_twin::values::ValueError;
use tonic::{Code, Status};

macro_rules! reasons {
    ($($variant:ident => ($name:literal, $code:ident, $meaning:literal),)*) => {
        /// Every refusal or failure the API reports, named as clients see it in `ErrorInfo.reason`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Reason {
            $(
                #[doc = $meaning]
                $variant,
            )*
        }

        impl Reason {
            /// Every reason, in the manual's order.
            pub const ALL: &[Reason] = &[$(Reason::$variant),*];

            /// The name clients see in `ErrorInfo.reason`.
            pub fn name(self) -> &'static str {
                match self { $(Reason::$variant => $name,)* }
            }

            /// The one gRPC code this reason is sent with.
            pub fn code(self) -> Code {
                match self { $(Reason::$variant => Code::$code,)* }
            }

            /// What the reason means, as the manual says it.
            pub fn meaning(self) -> &'static str {
                match self { $(Reason::$variant => $meaning,)* }
            }
        }
    };
}

reasons! {
    AlreadyRunning => ("already_running", FailedPrecondition, "an episode is running; stop it first"),
    TaskLocked => ("task_locked", FailedPrecondition, "the server was started with --lock-task; reset without a task"),
    NotRunning => ("not_running", FailedPrecondition, "the call needs a running episode; reset first"),
    StepLimit => ("step_limit", ResourceExhausted, "the episode's step budget is used up; only StopEpisode is accepted"),
    UnknownSuite => ("unknown_suite", NotFound, "no task suite of that name"),
    UnknownTask => ("unknown_task", OutOfRange, "task index past the end of the suite"),
    UnknownInitState => ("unknown_init_state", OutOfRange, "layout index past the end of the task's layouts"),
    NeedsPair => ("needs_pair", FailedPrecondition, "a task for two arms asked of a daemon driving one (start it with --pair)"),
    OneArmVerb => ("one_arm_verb", FailedPrecondition, "a verb that drives one arm asked of a daemon driving a pair without naming the arm; name it (Move, Gripper, GetObservation) or drive the pair with Tick or TickChunk"),
    InvalidArgument => ("invalid_argument", InvalidArgument, "a request field is missing or malformed"),
    UnknownName => ("unknown_name", NotFound, "a joint, body, site, camera or saved state the model does not have"),
    DuplicateJoint => ("duplicate_joint", InvalidArgument, "the same joint given twice"),
    WrongLength => ("wrong_length", InvalidArgument, "an ordered vector of the wrong length"),
    NonFinite => ("non_finite", InvalidArgument, "NaN or infinity"),
    OutOfRange => ("out_of_range", OutOfRange, "a value outside a joint's model or calibrated range"),
    BelowTable => ("below_table", OutOfRange, "a goal whose tool centre point would go into the table"),
    PreviewRefused => ("preview_refused", FailedPrecondition, "the twin's preview of a command for the real arm shows a contact or a joint past its range; nothing moved"),
    GuardDefect => ("guard_defect", Internal, "goals that passed the safety layers failed the last check before the bus (a defect, journaled); nothing was written"),
    CountOutOfRange => ("count_out_of_range", InvalidArgument, "a count outside what the verb accepts"),
    ImageSize => ("image_size", InvalidArgument, "an image size the renderer cannot hold"),
    StaleState => ("stale_state", FailedPrecondition, "a saved state taken against another model"),
    RenderUnavailable => ("render_unavailable", Unavailable, "rendering is not possible on this machine"),
    RenderBusy => ("render_busy", ResourceExhausted, "too many frames wait for the renderer (or are reserved for actions running) to take a call's images: an observation, or a move, gripper action, reset or tick with images, which is refused before it runs; nothing was moved, drawn or journaled; retry after the RetryInfo delay"),
    DeadlinePassed => ("deadline_passed", DeadlineExceeded, "the call's deadline passed before its images were drawn; the drawing was dropped and nothing was journaled"),
    TwinFault => ("twin_fault", Internal, "a twin thread caught a panic in this call; the thread keeps serving and the fault is journaled"),
    Stopped => ("stopped", Unavailable, "the twin has stopped (the daemon is shutting down)"),
    Scene => ("scene", Internal, "the scene failed to load"),
    EncodeFailed => ("encode_failed", Internal, "a frame could not be encoded"),
    JournalWriteFailed => ("journal_write_failed", Internal, "the run journal could not be written"),
    NoHardware => ("no_hardware", FailedPrecondition, "mirror or hil asked for without a real arm (start with --port)"),
    ArmTwinDisagree => ("arm_twin_disagree", FailedPrecondition, "entering hil while the arm and the twin disagree; ask for a sync"),
    MirrorMode => ("mirror_mode", FailedPrecondition, "motion asked for in mirror mode"),
    SimOnlyVerb => ("sim_only_verb", FailedPrecondition, "a simulation-only verb asked for in hil"),
    ModeChanged => ("mode_changed", Aborted, "the mode changed during a call that moved the real arm"),
    EstopLatched => ("estop_latched", FailedPrecondition, "motion while the emergency stop is latched"),
    InvalidSetting => ("invalid_setting", InvalidArgument, "a setting the hardware bridge cannot run with"),
    SyncNotArrived => ("sync_not_arrived", FailedPrecondition, "a sync ended without the arm arriving at the twin's pose; hil was not entered"),
    ServoFault => ("servo_fault", FailedPrecondition, "a servo's fault (overload, overheat, voltage) holds the arm or switched its torque off, or torque is still off after one; motion is refused, naming the joint and the fault, until it clears and SetMode(hil) switches torque back on"),
    TlsRequired => ("tls_required", Unauthenticated, "a plaintext call to a daemon that serves TLS"),
    TokenRequired => ("token_required", Unauthenticated, "a call without the bearer token the daemon requires"),
    TokenInvalid => ("token_invalid", Unauthenticated, "a wrong or malformed bearer token"),
    ClientCertRequired => ("client_cert_required", Unauthenticated, "a call without a client certificate the daemon requires"),
    LeaseRequired => ("lease_required", FailedPrecondition, "a call that needs the control lease carries none"),
    LeaseHeld => ("lease_held", FailedPrecondition, "another client holds the control lease (named in the message); take it over explicitly"),
    LeaseExpired => ("lease_expired", FailedPrecondition, "the lease the call carries expired or was released"),
    InvalidName => ("invalid_name", InvalidArgument, "a name used in a path (run id, saved state) that could leave the runs directory"),
    Internal => ("internal", Internal, "the daemon could not do its own part (no randomness for a lease id)"),
    BusUnavailable => ("bus_unavailable", Unavailable, "the real arm's bus is lost or on its way back (the message names the port, the link's state and the last error), or no reading of the arm arrived in time"),
    HardwareFault => ("hardware_fault", Unavailable, "the real arm failed (port gone, servo silent or faulted); the safety layers acted"),
    ServerBusy => ("server_busy", ResourceExhausted, "the daemon is working on as many calls as --max-calls lets it; the call was refused before any service saw it; retry after the RetryInfo delay"),
    MessageTooLarge => ("message_too_large", ResourceExhausted, "a request message larger than the daemon decodes (4 MiB); nothing was done"),
}

/// A status for `reason` with `message`; metadata is added with [`ErrorStatus::meta`].
pub fn refusal(reason: Reason, message: impl Into<String>) -> ErrorStatus {
    ErrorStatus::new(reason.code(), reason.name(), message)
}

/// The status a twin error is reported with.
pub fn from_twin(error: &TwinError) -> Status {
    let message = error.to_string();
    let status = match error {
        TwinError::Value(ValueError::UnknownName { kind, unknown, known }) => refusal(Reason::UnknownName, message)
            .meta("kind", kind)
            .meta("unknown", unknown.join(", "))
            .meta("known", known.join(", ")),
        TwinError::InvalidName { kind, .. } => refusal(Reason::InvalidArgument, message).meta("field", kind),
        TwinError::Value(ValueError::DuplicateJoint { joint }) => {
            refusal(Reason::DuplicateJoint, message).meta("joint", joint)
        }
        TwinError::Value(ValueError::WrongLength { expected, got, order }) => refusal(Reason::WrongLength, message)
            .meta("expected", expected)
            .meta("got", got)
            .meta("order", order.join(", ")),
        TwinError::Value(ValueError::NonFinite { key, value }) => refusal(Reason::NonFinite, message)
            .meta("joint", key)
            .meta("value", value),
        TwinError::Value(ValueError::OutOfRange {
            joint,
            value,
            lo,
            hi,
            unit,
            hint,
        }) => {
            let status = refusal(Reason::OutOfRange, message)
                .meta("joint", joint)
                .meta("value", value)
                .meta("range", format!("[{lo}, {hi}]"))
                .meta("unit", unit);
            match hint {
                Some(hint) => status.meta("hint", hint),
                None => status,
            }
        }
        TwinError::CountOutOfRange { what, value, lo, hi } => refusal(Reason::CountOutOfRange, message)
            .meta("field", what)
            .meta("value", value)
            .meta("range", format!("[{lo}, {hi}]")),
        TwinError::PeriodOutOfRange { period_s, lo, hi } => refusal(Reason::InvalidArgument, message)
            .meta("field", "period_s")
            .meta("value", period_s)
            .meta("range", format!("[{lo}, {hi}]")),
        TwinError::StaleState { name } => refusal(Reason::StaleState, message).meta("name", Quoted(name)),
        TwinError::ImageSize {
            width,
            height,
            max_width,
            max_height,
        } => refusal(Reason::ImageSize, message)
            .meta("width", width)
            .meta("height", height)
            .meta("maxWidth", max_width)
            .meta("maxHeight", max_height),
        TwinError::Backdrop(detail) => refusal(Reason::ImageSize, message).meta("detail", detail),
        TwinError::RenderUnavailable(detail) => refusal(Reason::RenderUnavailable, message).meta("detail", detail),
        TwinError::RenderBusy {
            queued,
            capacity,
            retry_after_ms,
        } => refusal(Reason::RenderBusy, message)
            .meta("queued", queued)
            .meta("capacity", capacity)
            .retry_after(std::time::Duration::from_millis(*retry_after_ms)),
        TwinError::DeadlinePassed => refusal(Reason::DeadlinePassed, message),
        TwinError::Scene(detail) => refusal(Reason::Scene, message).meta("detail", detail),
        TwinError::Fault { thread, .. } => refusal(Reason::TwinFault, message).meta("thread", thread),
        TwinError::Stopped => refusal(Reason::Stopped, message),
    };
    status.into()
}

/// The reason a safety layer's refusal is reported with.
fn safety_reason(error: &SafetyError) -> Reason {
    match error {
        SafetyError::EstopLatched { .. } => Reason::EstopLatched,
        SafetyError::BelowTable { .. } => Reason::BelowTable,
        SafetyError::NonFinite { .. } => Reason::NonFinite,
        SafetyError::PreviewRefused { .. } | SafetyError::PreviewFailed(_) => Reason::PreviewRefused,
        SafetyError::OutOfRange { .. } | SafetyError::Kinematics(_) => Reason::OutOfRange,
    }
}

/// The status a hardware-bridge refusal or failure is reported with.
pub fn from_bridge(error: &BridgeError) -> Status {
    let reason = match error {
        BridgeError::Twin(twin) => return from_twin(twin),
        BridgeError::NoHardware(_) => Reason::NoHardware,
        BridgeError::Disagree { .. } => Reason::ArmTwinDisagree,
        BridgeError::NotArrived { .. } => Reason::SyncNotArrived,
        BridgeError::ServoFault { .. } => Reason::ServoFault,
        BridgeError::MirrorMode => Reason::MirrorMode,
        BridgeError::SimOnlyVerb => Reason::SimOnlyVerb,
        BridgeError::ModeChanged(_) => Reason::ModeChanged,
        BridgeError::InvalidSetting(_) => Reason::InvalidSetting,
        BridgeError::InvalidArgument(_) => Reason::InvalidArgument,
        BridgeError::Safety(safety) => safety_reason(safety),
        BridgeError::Defect(_) => Reason::GuardDefect,
        BridgeError::NoReading(_) | BridgeError::BusLost { .. } | BridgeError::Arm(ArmError::PortGone { .. }) => {
            Reason::BusUnavailable
        }
        BridgeError::TorqueOff(_) => Reason::ServoFault,
        BridgeError::Arm(_) => Reason::HardwareFault,
    };
    let status = refusal(reason, error.to_string());
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
        BridgeError::BusLost { port, state, .. } => status.meta("port", Quoted(port)).meta("link", state),
        _ => status,
    }
    .into()
}

/// The status an episode error is reported with; actuation failures are reported as the
/// bridge reports them on any other route.
pub fn from_episode(error: &EpisodeError) -> Status {
    let reason = match error {
        EpisodeError::Twin(twin) => return from_twin(twin),
        EpisodeError::Image(e) => return from_encode(e),
        EpisodeError::Actuation(source) => {
            return match source.downcast_ref::<BridgeError>() {
                Some(bridge) => from_bridge(bridge),
                None => refusal(Reason::HardwareFault, source.to_string()).into(),
            };
        }
        EpisodeError::AlreadyRunning { .. } => Reason::AlreadyRunning,
        EpisodeError::TaskLocked { .. } => Reason::TaskLocked,
        EpisodeError::NotRunning { .. } => Reason::NotRunning,
        EpisodeError::StepLimit { .. } => Reason::StepLimit,
        EpisodeError::Task(TaskError::UnknownSuite { .. }) => Reason::UnknownSuite,
        EpisodeError::Task(TaskError::UnknownTask { .. }) => Reason::UnknownTask,
        EpisodeError::Task(TaskError::UnknownInitState { .. }) => Reason::UnknownInitState,
        EpisodeError::Task(TaskError::NeedsPair { .. }) => Reason::NeedsPair,
        EpisodeError::BadRequest(_) => Reason::InvalidArgument,
        EpisodeError::Journal(_) => Reason::JournalWriteFailed,
    };
    refusal(reason, error.to_string()).into()
}

/// The status an authentication refusal is reported with.
pub fn from_auth(error: &AuthError) -> Status {
    let reason = match error {
        AuthError::TlsRequired => Reason::TlsRequired,
        AuthError::TokenRequired { .. } => Reason::TokenRequired,
        AuthError::TokenInvalid => Reason::TokenInvalid,
        AuthError::ClientCertRequired => Reason::ClientCertRequired,
    };
    refusal(reason, error.to_string()).into()
}

/// The status a lease refusal is reported with.
pub fn from_lease(error: &LeaseError) -> Status {
    let reason = match error {
        LeaseError::Required => Reason::LeaseRequired,
        LeaseError::Held { .. } => Reason::LeaseHeld,
        LeaseError::Expired => Reason::LeaseExpired,
        LeaseError::BadHolder { .. } | LeaseError::BadTtl { .. } => Reason::InvalidArgument,
        LeaseError::NoRandomness(_) => Reason::Internal,
    };
    let status = refusal(reason, error.to_string());
    match error {
        LeaseError::Held { holder, expires_in_ms } => status.meta("holder", holder).meta("expiresInMs", expires_in_ms),
        LeaseError::BadHolder { .. } => status.meta("field", "holder"),
        LeaseError::BadTtl { .. } => status.meta("field", "ttl_ms"),
        _ => status,
    }
    .into()
}

/// The status a name refused for use in a path is reported with.
pub fn from_name(error: &NameError) -> Status {
    refusal(Reason::InvalidName, error.to_string())
        .meta("what", error.what)
        .meta("problem", error.problem)
        .into()
}

/// A refusal of one item of a list (an action of a chunk): the message starts with
/// `field[index]: ` and the metadata carries the index.
pub fn for_item(status: Status, field: &str, index: usize) -> Status {
    let Some(info) = error_info(&status) else {
        return status;
    };
    let message = format!("{field}[{index}]: {}", status.message());
    let item = ErrorStatus::new(status.code(), info.reason, message);
    info.metadata
        .into_iter()
        .fold(item, |item, (key, value)| item.meta(key, value))
        .meta("index", index)
        .into()
}

/// A request field that is missing or malformed (as opposed to a value the twin refused).
pub fn invalid_argument(field: &str, message: impl Into<String>) -> Status {
    refusal(Reason::InvalidArgument, message).meta("field", field).into()
}

/// A rendered frame that could not be encoded as PNG.
pub fn from_encode(error: &EncodeError) -> Status {
    refusal(Reason::EncodeFailed, error.to_string()).into()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use fakesim_proto::errors::error_reason;

    fn sample_errors() -> Vec<TwinError> {
        vec![
            TwinError::Value(ValueError::UnknownName {
                kind: "joint",
                unknown: vec!["elbow".into(), "7".into()],
                known: vec!["1".into()],
            }),
            TwinError::Value(ValueError::DuplicateJoint {
                joint: "1 (shoulder_pan)".into(),
            }),
            TwinError::Value(ValueError::WrongLength {
                expected: 6,
                got: 5,
                order: vec!["1".into()],
            }),
            TwinError::Value(ValueError::NonFinite {
                key: "gripper".into(),
                value: f64::NAN,
            }),
            TwinError::Value(ValueError::OutOfRange {
                joint: "shoulder_pan".into(),
                value: -96.2,
                lo: -1.92,
                hi: 1.92,
                unit: "rad",
                hint: Some("h".into()),
            }),
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
            TwinError::RenderBusy {
                queued: 16,
                capacity: 16,
                retry_after_ms: 120,
            },
            TwinError::DeadlinePassed,
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
            (Code::ResourceExhausted, "render_busy"),
            (Code::DeadlineExceeded, "deadline_passed"),
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
    fn a_busy_renderer_says_when_to_retry() {
        let status = from_twin(&sample_errors()[9]);
        assert_eq!(
            fakesim_proto::errors::retry_delay(&status),
            Some(std::time::Duration::from_millis(120))
        );
        assert_eq!(error_info(&status).unwrap().metadata["capacity"], "16");
    }

    #[test]
    fn unknown_names_are_all_listed() {
        let status = from_twin(&sample_errors()[0]);
        assert_eq!(error_info(&status).unwrap().metadata["unknown"], "elbow, 7");
    }

    /// The manual's table of reasons, as (reason, code name, meaning) rows.
    fn readme_reasons() -> Vec<(String, String, String)> {
        let readme = include_str!("../../../../docs/src/errors.md");
        let start = readme.find("| reason | gRPC code | meaning |").unwrap();
        readme[start..]
            .lines()
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .map(|line| {
                let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
                (
                    cells[0].trim_matches('`').to_owned(),
                    cells[1].to_owned(),
                    cells[2].to_owned(),
                )
            })
            .collect()
    }

    /// `Code::FailedPrecondition` as the manual writes it: `FAILED_PRECONDITION`.
    fn code_name(code: Code) -> String {
        let camel = format!("{code:?}");
        let mut out = String::new();
        for (i, c) in camel.chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
        }
        out
    }

    #[test]
    fn the_readme_lists_every_reason_with_its_code_and_nothing_else() {
        let table: Vec<(String, String, String)> = Reason::ALL
            .iter()
            .map(|r| (r.name().to_owned(), code_name(r.code()), r.meaning().to_owned()))
            .collect();
        assert_eq!(readme_reasons(), table);
    }

    #[test]
    fn a_safety_refusal_has_one_code_on_every_route() {
        let below = SafetyError::BelowTable {
            tcp: [0.1, 0.0, 0.7],
            surface_z: 0.8,
            margin: 0.01,
        };
        let direct = from_bridge(&BridgeError::Safety(below.clone()));
        let through_episode = from_episode(&EpisodeError::Actuation(Box::new(BridgeError::Safety(below))));
        assert_eq!(direct.code(), Code::OutOfRange);
        assert_eq!(through_episode.code(), direct.code());
        assert_eq!(error_reason(&through_episode), error_reason(&direct));
        assert_eq!(error_reason(&direct).as_deref(), Some("below_table"));
    }

    #[test]
    fn unknown_names_are_quoted_bounded() {
        let status = from_twin(&TwinError::Value(ValueError::UnknownName {
            kind: "site",
            unknown: vec!["x".repeat(20_000)],
            known: vec!["tcp".into()],
        }));
        assert!(status.message().len() < 300, "{}", status.message().len());
        assert!(error_info(&status).unwrap().metadata["unknown"].len() <= fakesim_proto::errors::MAX_META_BYTES);
    }

    #[test]
    fn every_access_refusal_has_its_code_and_reason() {
        let auth = [
            (AuthError::TlsRequired, "tls_required"),
            (AuthError::TokenRequired { also_cert: true }, "token_required"),
            (AuthError::TokenInvalid, "token_invalid"),
            (AuthError::ClientCertRequired, "client_cert_required"),
        ];
        for (error, reason) in auth {
            let status = from_auth(&error);
            assert_eq!(status.code(), Code::Unauthenticated);
            assert_eq!(error_reason(&status).as_deref(), Some(reason));
        }
        let lease = [
            (LeaseError::Required, Code::FailedPrecondition, "lease_required"),
            (LeaseError::Expired, Code::FailedPrecondition, "lease_expired"),
            (
                LeaseError::BadTtl { ttl_ms: 1 },
                Code::InvalidArgument,
                "invalid_argument",
            ),
            (LeaseError::NoRandomness("x".into()), Code::Internal, "internal"),
        ];
        for (error, code, reason) in lease {
            let status = from_lease(&error);
            assert_eq!((status.code(), error_reason(&status).as_deref()), (code, Some(reason)));
        }
        let held = from_lease(&LeaseError::Held {
            holder: "\"gpu-box\"".into(),
            expires_in_ms: 1200,
        });
        let meta = error_info(&held).unwrap().metadata;
        assert_eq!(
            (meta["holder"].as_str(), meta["expiresInMs"].as_str()),
            ("\"gpu-box\"", "1200")
        );
        let name = fakesim_episode::names::check_path_name("state name", "../x").unwrap_err();
        let status = from_name(&name);
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(error_reason(&status).as_deref(), Some("invalid_name"));
    }
}
