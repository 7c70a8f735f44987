//! A pseudo-terminal pair: the emulator owns the master side, a driver opens the slave
//! path (`/dev/pts/N`) exactly like a USB serial adapter.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
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
/// the device, which a driver sees as the adapter being unplugged. A port given a symbolic
/// link ([`PtyPort::link_to`]) removes it too when dropped, as udev removes an adapter's
/// `/dev/serial/by-id` link (unless the link was re-pointed meanwhile).
#[derive(Debug)]
pub struct PtyPort {
    master: SerialStream,
    slave: SerialStream,
    path: PathBuf,
    link: Option<PathBuf>,
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
        Ok(Self {
            master,
            slave,
            path,
            link: None,
        })
    }

    /// The slave device path a driver opens (e.g. `/dev/pts/3`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes `link` a symbolic link to the slave device, replacing an existing symbolic link
    /// at once (a new link beside it renamed over it); any other file there is refused.
    pub fn link_to(&mut self, link: &Path) -> Result<(), EmuError> {
        point_link(link, &self.path).map_err(|source| EmuError::Link {
            path: link.to_path_buf(),
            source,
        })?;
        tracing::debug!(link = %link.display(), path = %self.path.display(), "link points to the pseudo-terminal");
        self.link = Some(link.to_path_buf());
        Ok(())
    }
}

impl Drop for PtyPort {
    fn drop(&mut self) {
        let Some(link) = &self.link else {
            return;
        };
        if std::fs::read_link(link).is_ok_and(|target| target == self.path)
            && let Err(error) = std::fs::remove_file(link)
        {
            tracing::warn!(link = %link.display(), %error, "could not remove the link to the pseudo-terminal");
        }
    }
}

/// Distinguishes the temporary links of one process.
static LINK_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Points `link` at `target` atomically: a temporary link beside it is renamed over it.
fn point_link(link: &Path, target: &Path) -> io::Result<()> {
    if let Ok(existing) = std::fs::symlink_metadata(link)
        && !existing.file_type().is_symlink()
    {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a file that is not a symbolic link is in the way",
        ));
    }
    let name = link
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let serial = LINK_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut temporary_name = std::ffi::OsString::from(".");
    temporary_name.push(name);
    temporary_name.push(format!(".{}.{serial}.tmp", std::process::id()));
    let temporary = link.with_file_name(temporary_name);
    std::os::unix::fs::symlink(target, &temporary)?;
    std::fs::rename(&temporary, link).inspect_err(|_| {
        // Nothing else refers to the temporary link; it is removed best-effort.
        let _ = std::fs::remove_file(&temporary);
    })
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

/// A virtual bus served on a pseudo-terminal, optionally behind a symbolic link.
#[derive(Debug)]
pub struct PtyBus {
    path: PathBuf,
    link: Option<PathBuf>,
    servos: ServoBus,
    /// `None` between an unplug that was waited for and a successful replug.
    running: Option<RunningBus>,
}

impl PtyBus {
    /// The device path to open like a serial adapter (e.g. `/dev/pts/3`); a new one after
    /// each [`PtyBus::replug`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The symbolic link that points to the device, when served with [`serve_pty_linked`].
    pub fn link(&self) -> Option<&Path> {
        self.link.as_deref()
    }

    /// The handle on the served servos (faults, hand motion, inspection).
    pub fn servos(&self) -> &ServoBus {
        &self.servos
    }

    /// Whether serving has ended (shut down, unplugged or failed).
    pub fn is_finished(&self) -> bool {
        self.running.as_ref().is_none_or(RunningBus::is_finished)
    }

    /// The adapter is unplugged: serving ends, the device and the link disappear.
    pub fn unplug(&self) {
        self.servos().unplug();
    }

    /// The adapter is plugged in again: unplugs it first if it is not, waits until the old
    /// device is gone, then serves the same servos (state kept) on a new pseudo-terminal and
    /// points the link, if any, to it.
    pub async fn replug(&mut self) -> Result<(), EmuError> {
        self.unplug();
        if let Err(error) = self.wait_finished().await {
            tracing::warn!(%error, "the unplugged virtual bus had failed");
        }
        let mut port = PtyPort::open()?;
        if let Some(link) = &self.link {
            port.link_to(link)?;
        }
        self.servos.replug();
        self.path = port.path().to_path_buf();
        tracing::info!(path = %self.path.display(), "virtual servo bus plugged in again");
        self.running = Some(RunningBus::spawn(port, self.servos.clone()));
        Ok(())
    }

    /// Waits until serving has ended (after [`PtyBus::unplug`]: the device and the link are
    /// gone) and reports how it ended; at once when it already was waited for.
    pub async fn wait_finished(&mut self) -> Result<(), EmuError> {
        match self.running.take() {
            Some(running) => running.finished().await,
            None => Ok(()),
        }
    }

    /// Stops serving and removes the device (and the link).
    pub async fn shutdown(self) -> Result<(), EmuError> {
        match self.running {
            Some(running) => running.shutdown().await,
            None => Ok(()),
        }
    }

    /// Waits until serving ends on its own (unplugged or failed).
    pub async fn finished(mut self) -> Result<(), EmuError> {
        self.wait_finished().await
    }
}

/// Starts a wall-clock virtual bus from `config` on a new pseudo-terminal.
pub async fn serve_pty(config: EmuConfig) -> Result<PtyBus, EmuError> {
    serve_pty_bus(ServoBus::real_time(&config))
}

/// Serves an existing bus handle on a new pseudo-terminal (must run inside a tokio runtime).
pub fn serve_pty_bus(servos: ServoBus) -> Result<PtyBus, EmuError> {
    serve_port(servos, PtyPort::open()?, None)
}

/// Serves an existing bus handle on a new pseudo-terminal with `link` a symbolic link to it
/// (an existing symbolic link there is replaced). The link exists while the device does.
pub fn serve_pty_linked(servos: ServoBus, link: &Path) -> Result<PtyBus, EmuError> {
    let mut port = PtyPort::open()?;
    port.link_to(link)?;
    serve_port(servos, port, Some(link.to_path_buf()))
}

/// Spawns the serving of `port`.
fn serve_port(servos: ServoBus, port: PtyPort, link: Option<PathBuf>) -> Result<PtyBus, EmuError> {
    let path = port.path().to_path_buf();
    tracing::info!(path = %path.display(), link = ?link, "virtual servo bus listening");
    Ok(PtyBus {
        path,
        link,
        running: Some(RunningBus::spawn(port, servos.clone())),
        servos,
    })
}
