//! gRPC target strings (the forms grpcio accepts: `host:port`, `dns:`, `ipv4:`, `ipv6:`, `unix:`,
//! `unix-abstract:`) read into where to connect; a form this crate cannot honour reads as none, so
//! that the caller can leave the target to grpcio.

use std::net::{SocketAddrV4, SocketAddrV6};
use std::path::PathBuf;

/// The port grpcio dials when a target names a host without one.
const DEFAULT_PORT: u16 = 443;

/// Where a target says to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// TCP: `host:port` addresses tried in order (names resolved when connecting), and the
    /// HTTP/2 authority (and TLS name) of the calls.
    Tcp {
        /// Addresses to try, in order.
        addresses: Vec<String>,
        /// The `:authority` of the calls.
        authority: String,
    },
    /// A Unix domain socket at a path.
    Unix(PathBuf),
    /// A Linux abstract Unix socket, by name.
    Abstract(Vec<u8>),
}

impl Target {
    /// Reads a gRPC target string; None for a form this crate cannot honour (a DNS server named
    /// in `dns://SERVER/`, `vsock:`, `xds:`, a malformed address...).
    pub fn parse(target: &str) -> Option<Target> {
        if let Some(name) = target.strip_prefix("unix-abstract:") {
            return Some(Target::Abstract(name.as_bytes().to_vec()));
        }
        if let Some(rest) = target.strip_prefix("unix://") {
            // Only the absolute form `unix:///path` has no authority.
            return rest.starts_with('/').then(|| Target::Unix(PathBuf::from(rest)));
        }
        if let Some(path) = target.strip_prefix("unix:") {
            return (!path.is_empty()).then(|| Target::Unix(PathBuf::from(path)));
        }
        if let Some(list) = target.strip_prefix("ipv4:") {
            return addresses(list, |a| a.parse::<SocketAddrV4>().is_ok());
        }
        if let Some(list) = target.strip_prefix("ipv6:") {
            return addresses(list, |a| a.parse::<SocketAddrV6>().is_ok());
        }
        let host_port = match target.strip_prefix("dns:") {
            // `dns://SERVER/host:port` asks for a DNS server of its own: left to grpcio.
            Some(rest) => match rest.strip_prefix("//") {
                Some(rest) => rest.strip_prefix('/')?,
                None => rest,
            },
            None => target,
        };
        let address = host_and_port(host_port)?;
        Some(Target::Tcp {
            authority: address.clone(),
            addresses: vec![address],
        })
    }

    /// The `:authority` the calls carry: the target's `host:port`, `localhost` on a Unix socket
    /// (the daemon's HTTP/2 server refuses a path there).
    pub fn authority(&self) -> &str {
        match self {
            Target::Tcp { authority, .. } => authority,
            Target::Unix(_) | Target::Abstract(_) => "localhost",
        }
    }
}

/// A comma-separated list of socket addresses, each passing `valid`.
fn addresses(list: &str, valid: impl Fn(&str) -> bool) -> Option<Target> {
    let addresses: Vec<String> = list.split(',').map(str::to_owned).collect();
    if !addresses.iter().all(|a| valid(a)) {
        return None;
    }
    Some(Target::Tcp {
        authority: addresses[0].clone(),
        addresses,
    })
}

/// `host:port`, `[v6]:port` or a bare host (given grpcio's default port); None when the host is
/// empty, holds a `/` or an unbracketed `:`, or the port is not a number.
fn host_and_port(text: &str) -> Option<String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        host.parse::<std::net::Ipv6Addr>().ok()?;
        match after {
            "" => (text[..host.len() + 2].to_owned(), DEFAULT_PORT),
            _ => (
                text[..host.len() + 2].to_owned(),
                after.strip_prefix(':')?.parse().ok()?,
            ),
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), port.parse().ok()?),
            None => (text.to_owned(), DEFAULT_PORT),
        }
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    let bracketed = host.starts_with('[');
    (!host.is_empty() && (bracketed || host.chars().all(plain))).then(|| format!("{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(addresses: &[&str]) -> Option<Target> {
        Some(Target::Tcp {
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
            authority: addresses[0].to_string(),
        })
    }

    #[test]
    fn every_form_grpcio_takes_reads_as_its_address() {
        assert_eq!(Target::parse("127.0.0.1:50051"), tcp(&["127.0.0.1:50051"]));
        assert_eq!(Target::parse("localhost:7"), tcp(&["localhost:7"]));
        assert_eq!(Target::parse("localhost"), tcp(&["localhost:443"]));
        assert_eq!(Target::parse("[::1]:9"), tcp(&["[::1]:9"]));
        assert_eq!(Target::parse("dns:///localhost:9"), tcp(&["localhost:9"]));
        assert_eq!(Target::parse("dns:127.0.0.1:9"), tcp(&["127.0.0.1:9"]));
        assert_eq!(Target::parse("ipv4:127.0.0.1:9"), tcp(&["127.0.0.1:9"]));
        assert_eq!(
            Target::parse("ipv4:127.0.0.1:9,127.0.0.2:10"),
            tcp(&["127.0.0.1:9", "127.0.0.2:10"])
        );
        assert_eq!(Target::parse("ipv6:[::1]:9"), tcp(&["[::1]:9"]));
        assert_eq!(
            Target::parse("unix:/run/d.sock"),
            Some(Target::Unix("/run/d.sock".into()))
        );
        assert_eq!(
            Target::parse("unix:rel/d.sock"),
            Some(Target::Unix("rel/d.sock".into()))
        );
        assert_eq!(
            Target::parse("unix:///run/d.sock"),
            Some(Target::Unix("/run/d.sock".into()))
        );
        assert_eq!(
            Target::parse("unix-abstract:fake"),
            Some(Target::Abstract(b"fake".to_vec()))
        );
    }

    #[test]
    fn forms_it_cannot_honour_are_left_to_grpcio() {
        for target in [
            "dns://8.8.8.8/localhost:9",
            "ipv4:localhost:9",
            "ipv4:127.0.0.1",
            "ipv6:::1:9",
            "vsock:3:9",
            "xds:///service",
            "unix://host/path",
            "unix:",
            "host:port",
            ":9",
            "a/b:9",
        ] {
            assert_eq!(Target::parse(target), None, "{target}");
        }
    }

    #[test]
    fn a_unix_socket_calls_with_the_local_host_as_authority() {
        assert_eq!(
            Target::parse("unix:/x").map(|t| t.authority().to_owned()).as_deref(),
            Some("localhost")
        );
        assert_eq!(
            Target::parse("dns:///h:1").map(|t| t.authority().to_owned()).as_deref(),
            Some("h:1")
        );
    }
}
