//! systemd's readiness protocol (`Type=notify`): one datagram of `KEY=VALUE` lines to the
//! Unix socket named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).
//! Without the variable nothing is sent.

use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Environment variable systemd sets for a `Type=notify` service.
pub const NOTIFY_SOCKET_ENV: &str = "NOTIFY_SOCKET";

/// Sends `state` (e.g. `READY=1`) to `$NOTIFY_SOCKET`, if set; a failure is logged, not
/// fatal (the service manager then times the start out on its own).
pub fn notify(state: &str) {
    let Some(socket) = std::env::var_os(NOTIFY_SOCKET_ENV) else {
        return;
    };
    let socket = socket.to_string_lossy();
    match send(&socket, state) {
        Ok(()) => tracing::debug!(socket = %socket, state, "told the service manager"),
        Err(error) => tracing::warn!(socket = %socket, state, %error, "cannot notify the service manager"),
    }
}

fn send(socket: &str, state: &str) -> io::Result<()> {
    let address = match socket.strip_prefix('@') {
        Some(name) => SocketAddr::from_abstract_name(name.as_bytes())?,
        None => SocketAddr::from_pathname(socket)?,
    };
    let sent = UnixDatagram::unbound()?.send_to_addr(state.as_bytes(), &address)?;
    if sent != state.len() {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "the datagram was cut short"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_datagram_reaches_a_socket_in_the_abstract_namespace() {
        let name = format!("fakesim-hil-notify-test-{}", std::process::id());
        let address = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let socket = UnixDatagram::bind_addr(&address).unwrap();
        send(&format!("@{name}"), "READY=1").unwrap();
        let mut buffer = [0_u8; 16];
        let len = socket.recv(&mut buffer).unwrap();
        assert_eq!(&buffer[..len], b"READY=1");
    }
}
