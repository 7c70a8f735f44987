//! Opening the byte stream a target names: TCP (each address in turn, without Nagle's delay), a
//! Unix socket by path or an abstract one by name.

use crate::target::Target;
use hyper_util::rt::TokioIo;
use std::io;
use tokio::net::{TcpStream, UnixStream};
use tokio_util::either::Either;

/// A connection's stream, as tonic's connector takes it.
pub type Stream = TokioIo<Either<TcpStream, UnixStream>>;

/// Connects to `target`: the first TCP address that answers, or the Unix socket.
pub async fn dial(target: Target) -> io::Result<Stream> {
    let stream = match target {
        Target::Tcp { addresses, .. } => Either::Left(first_tcp(&addresses).await?),
        Target::Unix(path) => Either::Right(UnixStream::connect(path).await?),
        Target::Abstract(name) => Either::Right(abstract_socket(&name)?),
    };
    Ok(TokioIo::new(stream))
}

/// The first of `addresses` (names resolved) that accepts, with TCP_NODELAY set.
async fn first_tcp(addresses: &[String]) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::InvalidInput, "no address");
    for address in addresses {
        match TcpStream::connect(address.as_str()).await {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                return Ok(stream);
            }
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// A Linux abstract socket (connecting to a local socket does not block).
#[cfg(target_os = "linux")]
fn abstract_socket(name: &[u8]) -> io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
    let stream = std::os::unix::net::UnixStream::connect_addr(&address)?;
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream)
}

/// Abstract sockets are Linux's alone.
#[cfg(not(target_os = "linux"))]
fn abstract_socket(_name: &[u8]) -> io::Result<UnixStream> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "abstract Unix sockets are Linux's",
    ))
}
