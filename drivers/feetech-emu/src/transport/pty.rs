//! A pseudo-terminal pair: the emulator owns the master side, a driver opens the slave
//! path (`/dev/pts/N`) exactly like a USB serial adapter.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_serial::{SerialPort, SerialStream};

use super::{Link, RunningBus};
use crate::config::EmuConfig;
use crate::error::EmuError;
use crate::handle::ServoBus;

/// The master side of a pseudo-terminal as an async byte stream.
///
/// The slave side is kept open for the lifetime of the port, so a driver may close and
/// reopen the device path without the master seeing a hang-up; dropping the port removes
/// the device, which a driver sees as the adapter being unplugged.
#[derive(Debug)]
pub struct PtyPort {
    master: SerialStream,
    slave: SerialStream,
    path: PathBuf,
}

impl PtyPort {
    /// Creates a pty pair with the slave in raw mode. Must run inside a tokio runtime.
    pub fn open() -> Result<Self, EmuError> {
        let (master, slave) = SerialStream::pair().map_err(|error| EmuError::Pty {
            step: "open pair",
            source: error.into(),
        })?;
        let path = slave.name().map(PathBuf::from).ok_or(EmuError::Pty {
            step: "name slave",
            source: io::Error::other("the pseudo-terminal has no device path"),
        })?;
        tracing::debug!(path = %path.display(), "pseudo-terminal opened");
        Ok(Self { master, slave, path })
    }

    /// The slave device path a driver opens (e.g. `/dev/pts/3`).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Link for PtyPort {
    /// The rate the driver set on its end (terminal settings are shared by both ends).
    fn host_baud(&self) -> Option<u32> {
        self.slave.baud_rate().ok()
    }
}

impl AsyncRead for PtyPort {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.master).poll_read(cx, buf)
    }
}

impl AsyncWrite for PtyPort {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.master).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.master).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.master).poll_shutdown(cx)
    }
}

/// A virtual bus served on a pseudo-terminal.
#[derive(Debug)]
pub struct PtyBus {
    path: PathBuf,
    running: RunningBus,
}

impl PtyBus {
    /// The device path to open like a serial adapter (e.g. `/dev/pts/3`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The handle on the served servos (faults, hand motion, inspection).
    pub fn servos(&self) -> &ServoBus {
        self.running.servos()
    }

    /// Whether serving has ended (shut down, unplugged or failed).
    pub fn is_finished(&self) -> bool {
        self.running.is_finished()
    }

    /// Stops serving and removes the device.
    pub async fn shutdown(self) -> Result<(), EmuError> {
        self.running.shutdown().await
    }

    /// Waits until serving ends on its own (unplugged or failed).
    pub async fn finished(self) -> Result<(), EmuError> {
        self.running.finished().await
    }
}

/// Starts a wall-clock virtual bus from `config` on a new pseudo-terminal.
pub async fn serve_pty(config: EmuConfig) -> Result<PtyBus, EmuError> {
    serve_pty_bus(ServoBus::real_time(&config))
}

/// Serves an existing bus handle on a new pseudo-terminal (must run inside a tokio runtime).
pub fn serve_pty_bus(servos: ServoBus) -> Result<PtyBus, EmuError> {
    let port = PtyPort::open()?;
    let path = port.path().to_path_buf();
    tracing::info!(path = %path.display(), "virtual servo bus listening");
    Ok(PtyBus {
        path,
        running: RunningBus::spawn(port, servos),
    })
}
