//! Where the daemon listens, as a setting: a TCP address, or a Unix domain socket
//! (`unix:PATH`) for local clients.

use crate::access::auth::AuthPolicy;
use anyhow::{Context, bail};
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;

/// A listen address as the command line and the config file spell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// `HOST:PORT`; port 0 picks a free port.
    Tcp(SocketAddr),
    /// `unix:PATH`: a Unix domain socket at PATH.
    Unix(PathBuf),
}

impl FromStr for ListenAddr {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.strip_prefix("unix:") {
            Some("") => anyhow::bail!("unix: needs a socket path, as in unix:/run/fakesim.sock"),
            Some(path) => Ok(ListenAddr::Unix(PathBuf::from(path))),
            None => s
                .parse()
                .map(ListenAddr::Tcp)
                .with_context(|| format!("{s:?} is neither HOST:PORT nor unix:PATH")),
        }
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Tcp(addr) => write!(f, "{addr}"),
            ListenAddr::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

impl Default for ListenAddr {
    /// The daemon's default: loopback, port 50051.
    fn default() -> Self {
        ListenAddr::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, 50051)))
    }
}

impl From<SocketAddr> for ListenAddr {
    fn from(addr: SocketAddr) -> Self {
        ListenAddr::Tcp(addr)
    }
}

/// Refuses listening off loopback without TLS and a way to authenticate, saying how to set them.
/// A Unix socket is local (its file permissions decide who connects) and carries no TLS.
pub fn check_exposure(listen: &ListenAddr, policy: &AuthPolicy) -> anyhow::Result<()> {
    let listen = match listen {
        ListenAddr::Unix(_) if policy.tls => {
            bail!("TLS is served on TCP listen addresses only; drop --tls-cert/--tls-key for {listen}")
        }
        ListenAddr::Unix(_) => return Ok(()),
        ListenAddr::Tcp(addr) => addr,
    };
    if listen.ip().is_loopback() {
        return Ok(());
    }
    let how = "give --tls-cert FILE --tls-key FILE (config keys tls-cert, tls-key) and either \
               --token-file FILE (or FAKESIM_HIL_TOKEN) or --tls-client-ca FILE; or listen on 127.0.0.1";
    if !policy.tls {
        bail!("refusing to listen on {listen} without TLS: off loopback, TLS and authentication are required; {how}");
    }
    if policy.token.is_none() && !policy.client_certs {
        bail!(
            "refusing to listen on {listen} without authentication: off loopback, a token or client certificates are required; {how}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::access::auth::BearerToken;

    #[test]
    fn addresses_parse_and_print_back() {
        for text in [
            "127.0.0.1:50051",
            "[::1]:0",
            "unix:/tmp/fakesim.sock",
            "unix:relative.sock",
        ] {
            assert_eq!(text.parse::<ListenAddr>().unwrap().to_string(), text);
        }
        assert_eq!(
            "unix:/run/a.sock".parse::<ListenAddr>().unwrap(),
            ListenAddr::Unix(PathBuf::from("/run/a.sock"))
        );
        assert!("unix:".parse::<ListenAddr>().is_err());
        let err = "nowhere".parse::<ListenAddr>().unwrap_err();
        assert!(format!("{err:#}").contains("unix:PATH"), "{err:#}");
    }

    #[test]
    fn loopback_needs_nothing_and_other_addresses_need_tls_and_credentials() {
        let open = AuthPolicy::default();
        assert!(check_exposure(&"127.0.0.1:50051".parse().unwrap(), &open).is_ok());
        assert!(check_exposure(&"[::1]:50051".parse().unwrap(), &open).is_ok());
        let error = check_exposure(&"0.0.0.0:50051".parse().unwrap(), &open)
            .unwrap_err()
            .to_string();
        assert!(error.contains("without TLS") && error.contains("--tls-cert"), "{error}");
        let tls_only = AuthPolicy {
            tls: true,
            ..AuthPolicy::default()
        };
        let error = check_exposure(&"192.0.2.7:1".parse().unwrap(), &tls_only)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("without authentication") && error.contains("--token-file"),
            "{error}"
        );
        let full = AuthPolicy {
            tls: true,
            token: Some(BearerToken::new("s3cret-token-0123456789").unwrap()),
            client_certs: false,
        };
        assert!(check_exposure(&"0.0.0.0:50051".parse().unwrap(), &full).is_ok());
        assert!(check_exposure(&"unix:/tmp/f.sock".parse().unwrap(), &open).is_ok());
        assert!(check_exposure(&"unix:/tmp/f.sock".parse().unwrap(), &full).is_err());
    }
}
