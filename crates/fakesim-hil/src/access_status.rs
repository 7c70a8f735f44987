//! Access refusals as gRPC statuses, one row per refusal, the same on every route:
//!
//! | refusal | code | reason |
//! |---|---|---|
//! | plaintext call to a TLS daemon | UNAUTHENTICATED | `tls_required` |
//! | no bearer token | UNAUTHENTICATED | `token_required` |
//! | wrong or malformed bearer token | UNAUTHENTICATED | `token_invalid` |
//! | no client certificate (certificate-only daemon) | UNAUTHENTICATED | `client_cert_required` |
//! | a call that needs the lease carries none, nobody holds it | FAILED_PRECONDITION | `lease_required` |
//! | another client holds the lease (metadata `holder`, `expiresInMs`) | FAILED_PRECONDITION | `lease_held` |
//! | the lease carried expired or was released | FAILED_PRECONDITION | `lease_expired` |
//! | bad holder name or time to live | INVALID_ARGUMENT | `invalid_argument` |
//! | no randomness for a lease id | INTERNAL | `internal` |
//! | a name used in a path (`..`, `/`, NUL, too long, ...) | INVALID_ARGUMENT | `invalid_name` |

use crate::auth::AuthError;
use crate::lease::LeaseError;
use fakesim_episode::names::NameError;
use fakesim_proto::errors::ErrorStatus;
use tonic::{Code, Status};

/// The status an authentication refusal is reported with.
pub fn from_auth(error: &AuthError) -> Status {
    ErrorStatus::new(Code::Unauthenticated, error.reason(), error.to_string()).into()
}

/// The status a lease refusal is reported with.
pub fn from_lease(error: &LeaseError) -> Status {
    let code = match error {
        LeaseError::Required | LeaseError::Held { .. } | LeaseError::Expired => Code::FailedPrecondition,
        LeaseError::BadHolder { .. } | LeaseError::BadTtl { .. } => Code::InvalidArgument,
        LeaseError::NoRandomness(_) => Code::Internal,
    };
    let status = ErrorStatus::new(code, error.reason(), error.to_string());
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
    ErrorStatus::new(Code::InvalidArgument, "invalid_name", error.to_string())
        .meta("what", error.what)
        .meta("problem", error.problem)
        .into()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use fakesim_proto::errors::{error_info, error_reason};

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
