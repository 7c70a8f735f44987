//! Where the daemon listens: a TCP address, or a Unix domain socket (`unix:PATH`) for local
//! clients.

use anyhow::Context;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use tokio::net::{TcpListener, UnixListener};

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

impl From<SocketAddr> for ListenAddr {
    fn from(addr: SocketAddr) -> Self {
        ListenAddr::Tcp(addr)
    }
}

/// A bound listener of either kind.
#[derive(Debug)]
pub enum Listener {
    /// A TCP listener.
    Tcp(TcpListener),
    /// A Unix domain socket listener and the path it is bound to.
    Unix(UnixListener, PathBuf),
}

impl Listener {
    /// Binds `addr`.
    pub async fn bind(addr: &ListenAddr) -> anyhow::Result<Self> {
        let listener = match addr {
            ListenAddr::Tcp(socket) => TcpListener::bind(socket).await.map(Listener::Tcp),
            ListenAddr::Unix(path) => UnixListener::bind(path).map(|l| Listener::Unix(l, path.clone())),
        };
        listener.with_context(|| format!("cannot listen on {addr}"))
    }

    /// The address actually bound (the free port chosen for port 0).
    pub fn local_addr(&self) -> anyhow::Result<ListenAddr> {
        match self {
            Listener::Tcp(l) => Ok(ListenAddr::Tcp(
                l.local_addr().context("the listener has no local address")?,
            )),
            Listener::Unix(_, path) => Ok(ListenAddr::Unix(path.clone())),
        }
    }
}

impl From<TcpListener> for Listener {
    fn from(listener: TcpListener) -> Self {
        Listener::Tcp(listener)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

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
}
