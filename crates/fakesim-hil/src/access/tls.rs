//! The daemon's connections: plain TCP, or TLS (rustls with the ring provider, the one tonic's
//! `tls-ring` uses) with optional client certificates. One server configuration serves both
//! listeners, gRPC (offering HTTP/2) and the MCP endpoint (offering HTTP/1.1). On a TLS daemon a
//! client that speaks plaintext is still served, so that each of its calls can be refused with
//! a reason (`tls_required`) instead of a dropped connection.

use crate::access::audit::{AccessEvent, Audit};
use anyhow::Context;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::Connected;

/// How long a new connection may take to send its first byte and finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// First byte of a TLS record carrying a handshake (a ClientHello opens with it).
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// The daemon's TLS files (PEM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// Certificate chain, leaf first.
    pub cert: PathBuf,
    /// Private key of the leaf certificate.
    pub key: PathBuf,
    /// CA certificates client certificates are verified against; none: no client certificates.
    pub client_ca: Option<PathBuf>,
}

fn certificates(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("cannot read PEM certificates from {}", path.display()))?;
    anyhow::ensure!(!certs.is_empty(), "no certificate in {}", path.display());
    Ok(certs)
}

/// The application protocol a listener speaks over TLS (offered by ALPN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppProtocol {
    /// HTTP/2, for gRPC.
    Grpc,
    /// HTTP/1.1, for the MCP endpoint.
    Http1,
}

/// Loads the files into the daemon's TLS configuration; client certificates are optional at the
/// handshake (a call without one is refused later, with a reason, unless it carries the token).
pub fn server_config(files: &TlsFiles) -> anyhow::Result<ServerConfig> {
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let certs = certificates(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .with_context(|| format!("cannot read a PEM private key from {}", files.key.display()))?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("no TLS protocol version available")?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(path)? {
                roots
                    .add(cert)
                    .with_context(|| format!("bad CA certificate in {}", path.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .with_context(|| format!("cannot verify clients against {}", path.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    builder.with_single_cert(certs, key).with_context(|| {
        format!(
            "{} and {} do not make a key pair",
            files.cert.display(),
            files.key.display()
        )
    })
}

/// An acceptor with `config` (the same certificate, key and client-certificate rule for every
/// listener) offering `protocol`.
pub fn acceptor(config: &ServerConfig, protocol: AppProtocol) -> TlsAcceptor {
    let mut config = config.clone();
    config.alpn_protocols = vec![match protocol {
        AppProtocol::Grpc => b"h2".to_vec(),
        AppProtocol::Http1 => b"http/1.1".to_vec(),
    }];
    TlsAcceptor::from(Arc::new(config))
}

/// How a connection reached the daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Plain TCP.
    Plain,
    /// TLS; `client_cert` when the client showed a certificate the daemon verified.
    Tls {
        /// A verified client certificate was shown.
        client_cert: bool,
    },
}

/// What every call on a connection knows about it (a request extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnInfo {
    /// The client's address.
    pub peer: Option<SocketAddr>,
    /// Plain or TLS.
    pub transport: Transport,
}

/// An accepted connection.
pub enum Conn {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl Connected for Conn {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        match self {
            Conn::Plain(tcp) => ConnInfo {
                peer: tcp.peer_addr().ok(),
                transport: Transport::Plain,
            },
            Conn::Tls(tls) => {
                let (tcp, session) = tls.get_ref();
                ConnInfo {
                    peer: tcp.peer_addr().ok(),
                    transport: Transport::Tls {
                        client_cert: session.peer_certificates().is_some_and(|c| !c.is_empty()),
                    },
                }
            }
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Conn::Tls(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(s) => s.is_write_vectored(),
            Conn::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// Accepts connections on `listener` until the returned stream is dropped. With an acceptor,
/// each connection's handshake runs on its own task (a slow client delays nobody else); a
/// connection whose first byte is not a TLS handshake is passed on as plaintext.
pub fn incoming(
    listener: TcpListener,
    acceptor: Option<TlsAcceptor>,
    audit: Audit,
) -> ReceiverStream<io::Result<Conn>> {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = tx.closed() => return,
                accepted = listener.accept() => accepted,
            };
            let (tcp, peer) = match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    continue;
                }
            };
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
            match &acceptor {
                None => {
                    if tx.send(Ok(Conn::Plain(tcp))).await.is_err() {
                        return;
                    }
                }
                Some(acceptor) => {
                    let (acceptor, tx, audit) = (acceptor.clone(), tx.clone(), audit.clone());
                    tokio::spawn(async move {
                        let conn = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(tcp, &acceptor)).await;
                        match conn {
                            Ok(Ok(conn)) => {
                                let _ = tx.send(Ok(conn)).await;
                            }
                            Ok(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                                tracing::debug!(%peer, "connection closed before the handshake");
                            }
                            Ok(Err(e)) => audit.record(AccessEvent::AuthFailed {
                                reason: "tls_handshake",
                                peer: Some(peer),
                                detail: Some(e.to_string()),
                            }),
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        }
                    });
                }
            }
        }
    });
    ReceiverStream::new(rx)
}

/// TLS when the client opens with a handshake record, else the plain connection.
async fn handshake(tcp: TcpStream, acceptor: &TlsAcceptor) -> io::Result<Conn> {
    let mut first = [0u8; 1];
    if tcp.peek(&mut first).await? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "closed before sending anything",
        ));
    }
    if first[0] != TLS_HANDSHAKE_RECORD {
        return Ok(Conn::Plain(tcp));
    }
    Ok(Conn::Tls(Box::new(acceptor.accept(tcp).await?)))
}
