//! Binds the listen address: a TCP listener, or a Unix domain socket for local clients.

use crate::config::ListenAddr;
use anyhow::Context;
use std::path::PathBuf;
use tokio::net::{TcpListener, UnixListener};

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
