//! gRPC errors with a `google.rpc.ErrorInfo` detail, the way every fakesim-hil
//! service reports a failure: a specific code, a developer message, and a
//! machine-readable reason (the spec's error name, e.g. `already_running`)
//! with the values named in the message as metadata.

use std::collections::HashMap;
use std::time::Duration;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, ErrorInfo, StatusExt};

/// Domain of every `ErrorInfo` this API sends.
pub const ERROR_DOMAIN: &str = "fakesim-hil";

/// Longest message a status carries (bytes); longer ones are cut at a character boundary.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// Longest `ErrorInfo.metadata` value (bytes); longer ones are cut at a character boundary.
pub const MAX_META_BYTES: usize = 256;

/// `text` cut to at most `max` bytes at a character boundary, marked when cut.
fn bounded(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max.saturating_sub(3);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// A failure to be sent as a `tonic::Status` carrying an `ErrorInfo`.
///
/// Build it with [`ErrorStatus::new`], add metadata with [`ErrorStatus::meta`],
/// and convert it with `Status::from` (or `.into()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorStatus {
    code: Code,
    reason: String,
    message: String,
    metadata: HashMap<String, String>,
    retry_after: Option<Duration>,
}

impl ErrorStatus {
    /// Starts an error with its gRPC code, `ErrorInfo.reason` and message.
    pub fn new(code: Code, reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
            message: bounded(message.into(), MAX_MESSAGE_BYTES),
            metadata: HashMap::new(),
            retry_after: None,
        }
    }

    /// Adds a `google.rpc.RetryInfo` detail: the client may retry after `delay`.
    #[must_use]
    pub fn retry_after(mut self, delay: Duration) -> Self {
        self.retry_after = Some(delay);
        self
    }

    /// Adds (or replaces) one `ErrorInfo.metadata` entry.
    #[must_use]
    pub fn meta(mut self, key: impl Into<String>, value: impl ToString) -> Self {
        self.metadata
            .insert(key.into(), bounded(value.to_string(), MAX_META_BYTES));
        self
    }
}

impl From<ErrorStatus> for Status {
    fn from(error: ErrorStatus) -> Self {
        let mut details = ErrorDetails::with_error_info(error.reason, ERROR_DOMAIN, error.metadata);
        if let Some(delay) = error.retry_after {
            details.set_retry_info(Some(delay));
        }
        Status::with_error_details(error.code, error.message, details)
    }
}

/// The `ErrorInfo` of a status, if it has one from [`ERROR_DOMAIN`].
pub fn error_info(status: &Status) -> Option<ErrorInfo> {
    status
        .get_details_error_info()
        .filter(|info| info.domain == ERROR_DOMAIN)
}

/// The `RetryInfo.retry_delay` of a status, if it has one.
pub fn retry_delay(status: &Status) -> Option<Duration> {
    status.get_details_retry_info().and_then(|info| info.retry_delay)
}

/// The `ErrorInfo.reason` of a status, if it has an `ErrorInfo` from [`ERROR_DOMAIN`].
pub fn error_reason(status: &Status) -> Option<String> {
    error_info(status).map(|info| info.reason)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use tonic::codegen::http::HeaderMap;

    /// Sends a status through gRPC response headers and parses it back, as a client would.
    fn over_the_wire(status: &Status) -> Status {
        let mut headers = HeaderMap::new();
        status.add_header(&mut headers).unwrap();
        Status::from_header_map(&headers).unwrap()
    }

    #[test]
    fn long_messages_and_metadata_are_cut_so_trailers_stay_small() {
        let huge = "é".repeat(20_000);
        let sent: Status = ErrorStatus::new(Code::NotFound, "unknown_name", huge.clone())
            .meta("unknown", &huge)
            .into();
        let mut headers = HeaderMap::new();
        sent.add_header(&mut headers).unwrap();
        let size: usize = headers.iter().map(|(k, v)| k.as_str().len() + v.len()).sum();
        assert!(size < 8 * 1024, "trailers of {size} bytes");
        let back = over_the_wire(&sent);
        assert!(back.message().len() <= MAX_MESSAGE_BYTES && back.message().ends_with('…'));
        assert!(error_info(&back).unwrap().metadata["unknown"].len() <= MAX_META_BYTES);
    }

    #[test]
    fn reason_code_message_and_metadata_round_trip() {
        let sent: Status = ErrorStatus::new(
            Code::OutOfRange,
            "out_of_range",
            "shoulder_pan=-96.2 outside -1.92..1.92 rad",
        )
        .meta("joint", "shoulder_pan")
        .meta("value", -96.2)
        .into();

        let received = over_the_wire(&sent);
        assert_eq!(received.code(), Code::OutOfRange);
        assert_eq!(received.message(), "shoulder_pan=-96.2 outside -1.92..1.92 rad");
        assert_eq!(error_reason(&received).as_deref(), Some("out_of_range"));
        let info = error_info(&received).unwrap();
        assert_eq!(info.domain, ERROR_DOMAIN);
        assert_eq!(info.metadata.len(), 2);
        assert_eq!(info.metadata["joint"], "shoulder_pan");
        assert_eq!(info.metadata["value"], "-96.2");
    }

    #[test]
    fn a_retry_hint_travels_beside_the_reason() {
        let sent: Status = ErrorStatus::new(Code::ResourceExhausted, "render_busy", "busy")
            .retry_after(Duration::from_millis(250))
            .into();
        let received = over_the_wire(&sent);
        assert_eq!(retry_delay(&received), Some(Duration::from_millis(250)));
        assert_eq!(error_reason(&received).as_deref(), Some("render_busy"));
        let plain: Status = ErrorStatus::new(Code::NotFound, "unknown_name", "no").into();
        assert_eq!(retry_delay(&over_the_wire(&plain)), None);
    }

    #[test]
    fn later_meta_replaces_same_key() {
        let status: Status = ErrorStatus::new(Code::NotFound, "unknown_name", "no joint x")
            .meta("name", "x")
            .meta("name", "y")
            .into();
        assert_eq!(error_info(&status).unwrap().metadata["name"], "y");
    }

    #[test]
    fn plain_status_has_no_reason() {
        assert_eq!(error_reason(&Status::internal("boom")), None);
    }

    #[test]
    fn foreign_domain_is_not_ours() {
        let details = ErrorDetails::with_error_info("QUOTA", "example.com", HashMap::new());
        let status = Status::with_error_details(Code::ResourceExhausted, "quota", details);
        assert_eq!(status.get_details_error_info().unwrap().reason, "QUOTA");
        assert_eq!(error_reason(&status), None);
    }
}
