//! Who may call at all: TLS off loopback, and a bearer token or a client certificate checked on
//! every call (health and reflection included, and every request to the MCP endpoint) before
//! any service sees it.

use crate::access::audit::{AccessEvent, Audit};
use crate::access::tls::{ConnInfo, Transport};
use anyhow::{Context, bail};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// Environment variable a bearer token may come from (daemon and clients alike).
pub const TOKEN_ENV: &str = "FAKESIM_HIL_TOKEN";

/// A bearer token, kept only as its SHA-256 digest and compared in constant time.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken {
    digest: [u8; 32],
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

impl BearerToken {
    /// A token from its text, surrounding whitespace removed; it must be visible ASCII (it
    /// travels in an HTTP header) and at least 16 characters.
    pub fn new(text: &str) -> anyhow::Result<Self> {
        let token = text.trim();
        if token.len() < 16 {
            bail!(
                "the bearer token must be at least 16 characters (it is {})",
                token.len()
            );
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            bail!("the bearer token must be visible ASCII characters without spaces");
        }
        Ok(BearerToken {
            digest: Sha256::digest(token.as_bytes()).into(),
        })
    }

    /// The token in a file (its whole content, trimmed).
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read the token file {}", path.display()))?;
        Self::new(&text).with_context(|| format!("token file {}", path.display()))
    }

    /// Whether `presented` is this token, in time that does not depend on where they differ.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        digest.ct_eq(&self.digest).into()
    }
}

/// Why a call was refused before any service saw it (all UNAUTHENTICATED).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// A plaintext connection to a daemon that serves TLS.
    #[error(
        "this daemon only accepts TLS: connect with TLS, trusting its certificate (clients: --tls-ca FILE or FAKESIM_HIL_TLS_CA)"
    )]
    TlsRequired,
    /// No `authorization` metadata (or HTTP header).
    #[error(
        "a bearer token is required: send `authorization: Bearer <token>` with every call, as gRPC \
         metadata or an HTTP header (clients: --token-file FILE or FAKESIM_HIL_TOKEN){}",
        if *.also_cert { ", or connect with a client certificate" } else { "" }
    )]
    TokenRequired {
        /// A client certificate would do too.
        also_cert: bool,
    },
    /// `authorization` metadata that is not the daemon's token.
    #[error("the bearer token is not valid")]
    TokenInvalid,
    /// Neither a client certificate nor a token (only certificates are accepted).
    #[error(
        "a client certificate signed by the daemon's --tls-client-ca is required (clients: --tls-cert FILE --tls-key FILE)"
    )]
    ClientCertRequired,
}

impl AuthError {
    /// The `ErrorInfo` reason of the refusal.
    pub fn reason(&self) -> &'static str {
        match self {
            AuthError::TlsRequired => "tls_required",
            AuthError::TokenRequired { .. } => "token_required",
            AuthError::TokenInvalid => "token_invalid",
            AuthError::ClientCertRequired => "client_cert_required",
        }
    }
}

/// What a caller must show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthPolicy {
    /// Only TLS connections are served.
    pub tls: bool,
    /// Calls carry this bearer token (unless their connection has a verified client certificate).
    pub token: Option<BearerToken>,
    /// A client certificate verified against `--tls-client-ca` authenticates its connection.
    pub client_certs: bool,
}

impl AuthPolicy {
    /// Admits a call on a connection described by `conn` carrying `authorization` (the value of
    /// its gRPC metadata or HTTP header of that name, if any), or says why not.
    pub fn check(&self, conn: Option<&ConnInfo>, authorization: Option<&[u8]>) -> Result<(), AuthError> {
        let transport = conn.map_or(Transport::Plain, |c| c.transport);
        match transport {
            Transport::Plain if self.tls => return Err(AuthError::TlsRequired),
            Transport::Tls { client_cert: true } => return Ok(()),
            _ => {}
        }
        let Some(token) = &self.token else {
            return if self.client_certs {
                Err(AuthError::ClientCertRequired)
            } else {
                Ok(())
            };
        };
        let Some(presented) = authorization else {
            return Err(AuthError::TokenRequired {
                also_cert: self.client_certs,
            });
        };
        let credentials = match presented.get(..7) {
            Some(scheme) if scheme.eq_ignore_ascii_case(b"bearer ") => &presented[7..],
            _ => return Err(AuthError::TokenInvalid),
        };
        if token.matches(credentials) {
            Ok(())
        } else {
            Err(AuthError::TokenInvalid)
        }
    }
}

/// The check every call passes (the gRPC interceptor, the MCP endpoint's requests): the policy,
/// and each refusal recorded.
#[derive(Clone)]
pub struct Authenticator {
    policy: Arc<AuthPolicy>,
    audit: Audit,
}

impl Authenticator {
    /// Checks calls against `policy`, recording refusals in `audit`.
    pub fn new(policy: AuthPolicy, audit: Audit) -> Self {
        Authenticator {
            policy: Arc::new(policy),
            audit,
        }
    }

    /// The policy's answer for a call on `conn` carrying `authorization`; a refusal is logged
    /// and journaled.
    pub fn admit(&self, conn: Option<&ConnInfo>, authorization: Option<&[u8]>) -> Result<(), AuthError> {
        let checked = self.policy.check(conn, authorization);
        if let Err(error) = &checked {
            self.audit.record(AccessEvent::AuthFailed {
                reason: error.reason(),
                peer: conn.and_then(|c| c.peer),
                detail: None,
            });
        }
        checked
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    const TOKEN: &str = "s3cret-token-0123456789";

    fn conn(transport: Transport) -> ConnInfo {
        ConnInfo { peer: None, transport }
    }

    #[test]
    fn tokens_are_checked_whole_and_never_printed() {
        let token = BearerToken::new(&format!("  {TOKEN}\n")).unwrap();
        assert!(token.matches(TOKEN.as_bytes()));
        assert!(!token.matches(b"s3cret-token-012345678"));
        assert!(!token.matches(format!("{TOKEN}0").as_bytes()));
        assert!(!format!("{token:?}").contains("s3cret"));
        assert!(BearerToken::new("short").is_err());
        assert!(BearerToken::new("has a space in the middle").is_err());
    }

    #[test]
    fn the_policy_refuses_each_way_with_its_reason() {
        let policy = AuthPolicy {
            tls: true,
            token: Some(BearerToken::new(TOKEN).unwrap()),
            client_certs: false,
        };
        let tls = conn(Transport::Tls { client_cert: false });
        let (right, lower) = (format!("Bearer {TOKEN}"), format!("bearer {TOKEN}"));
        let right = Some(right.as_bytes());
        assert_eq!(policy.check(Some(&tls), right), Ok(()));
        assert_eq!(policy.check(Some(&tls), Some(lower.as_bytes())), Ok(()));
        assert_eq!(
            policy.check(Some(&conn(Transport::Plain)), right),
            Err(AuthError::TlsRequired)
        );
        assert_eq!(policy.check(None, right), Err(AuthError::TlsRequired));
        assert_eq!(
            policy.check(Some(&tls), None),
            Err(AuthError::TokenRequired { also_cert: false })
        );
        for wrong in ["Bearer nope", TOKEN, "Basic xyz", "Bearer"] {
            assert_eq!(
                policy.check(Some(&tls), Some(wrong.as_bytes())),
                Err(AuthError::TokenInvalid),
                "{wrong}"
            );
        }
    }

    #[test]
    fn a_verified_client_certificate_stands_in_for_the_token() {
        let policy = AuthPolicy {
            tls: true,
            token: None,
            client_certs: true,
        };
        assert_eq!(
            policy.check(Some(&conn(Transport::Tls { client_cert: true })), None),
            Ok(())
        );
        assert_eq!(
            policy.check(Some(&conn(Transport::Tls { client_cert: false })), None),
            Err(AuthError::ClientCertRequired)
        );
    }
}
