//! Byte transports that carry the virtual bus: the serve loop shared by all of them, an
//! in-memory duplex for unit tests and a pseudo-terminal for real drivers.

mod duplex;
mod pty;

pub use duplex::spawn_duplex;
pub use pty::{PtyBus, PtyPort, serve_pty, serve_pty_bus, serve_pty_linked};

use std::time::{Duration, Instant};

use feetech::protocol::frame::FrameDecoder;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bus::Reply;
use crate::error::EmuError;
use crate::handle::ServoBus;
use crate::wire_timing::{return_delay, transfer_time};

/// Below this much remaining time a deadline is met by yielding in a loop; before it, by a
/// thread sleep (the kernel's high-resolution timer; tokio's timer has a resolution of one
/// millisecond), so that a reply's wire time does not keep a runtime worker busy: on a shared
/// machine that CPU belongs to the host under test.
const SPIN_WINDOW: Duration = Duration::from_micros(150);

/// Size of one read from the transport.
const READ_CHUNK: usize = 1024;

/// A byte stream a virtual bus can be served on.
pub trait Link: AsyncRead + AsyncWrite + Unpin {
    /// The line rate the host configured on its end, when the link can tell.
    fn host_baud(&self) -> Option<u32> {
        None
    }
}

impl Link for tokio::io::DuplexStream {}

/// Serves the bus on `link` until `shutdown` is cancelled, the bus is unplugged or the peer
/// closes the stream. The link is dropped on return, which the peer sees as the port going
/// away. A link that reports the host's line rate sets the bus baud rate before each frame.
///
/// The serving belongs to the bus's current plug-in, taken when this is called: after an
/// unplug it ends for good, even when the bus is replugged before it noticed.
pub fn serve<T: Link>(
    link: T,
    bus: ServoBus,
    shutdown: CancellationToken,
) -> impl Future<Output = Result<(), EmuError>> {
    let unplugged = bus.plug_token();
    serve_plugged(link, bus, shutdown, unplugged)
}

/// [`serve`] until `unplugged` is cancelled too.
async fn serve_plugged<T: Link>(
    mut link: T,
    bus: ServoBus,
    shutdown: CancellationToken,
    unplugged: CancellationToken,
) -> Result<(), EmuError> {
    let mut decoder = FrameDecoder::new();
    let mut chunk = [0_u8; READ_CHUNK];
    loop {
        let read = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(()),
            () = unplugged.cancelled() => return Ok(()),
            read = link.read(&mut chunk) => read?,
        };
        let received_at = Instant::now();
        let Some(bytes) = chunk.get(..read).filter(|bytes| !bytes.is_empty()) else {
            tracing::debug!("peer closed the virtual bus");
            return Ok(());
        };
        if bus.echoes() {
            link.write_all(bytes).await?;
        }
        decoder.push(bytes);
        while let Some(decoded) = decoder.next_frame() {
            let frame = match decoded {
                Ok(frame) => frame,
                Err(error) => {
                    tracing::debug!(%error, "dropping corrupted instruction");
                    continue;
                }
            };
            if let Some(baud) = link.host_baud() {
                bus.set_baud(baud);
            }
            let replies = bus.handle_frame(&frame);
            let request_done = received_at + bus_time(&bus, frame.wire_len());
            tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(()),
                () = unplugged.cancelled() => return Ok(()),
                sent = transmit(&mut link, &bus, replies, request_done) => sent?,
            }
        }
    }
}

/// Wire time of `bytes` bytes when the bus has wire timing on, zero otherwise.
fn bus_time(bus: &ServoBus, bytes: usize) -> Duration {
    if bus.wire_timing() {
        transfer_time(bytes, bus.baud())
    } else {
        Duration::ZERO
    }
}

/// Writes the replies, each when its last byte would have left the servo.
async fn transmit<W>(writer: &mut W, bus: &ServoBus, replies: Vec<Reply>, request_done: Instant) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    if replies.is_empty() {
        return Ok(());
    }
    if !bus.wire_timing() {
        let bytes: Vec<u8> = replies.into_iter().flat_map(|reply| reply.bytes).collect();
        writer.write_all(&bytes).await?;
        return writer.flush().await;
    }
    let mut line_free_at = request_done;
    for reply in replies {
        let done = line_free_at + return_delay(reply.return_delay) + bus_time(bus, reply.bytes.len());
        wait_until(done).await;
        writer.write_all(&reply.bytes).await?;
        writer.flush().await?;
        line_free_at = done;
    }
    Ok(())
}

/// Waits until `deadline` with better than timer resolution.
async fn wait_until(deadline: Instant) {
    if let Some(coarse) = deadline.checked_sub(SPIN_WINDOW)
        && coarse > Instant::now()
    {
        let sleep = move || std::thread::sleep(coarse.saturating_duration_since(Instant::now()));
        // A sleep that could not run leaves the whole wait to the loop below.
        let _ = tokio::task::spawn_blocking(sleep).await;
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

/// A virtual bus served by a background task.
#[derive(Debug)]
pub struct RunningBus {
    servos: ServoBus,
    shutdown: CancellationToken,
    task: JoinHandle<Result<(), EmuError>>,
}

impl RunningBus {
    /// Spawns [`serve`] for `link` on the current tokio runtime.
    pub fn spawn<T: Link + Send + 'static>(link: T, servos: ServoBus) -> Self {
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(serve(link, servos.clone(), shutdown.clone()));
        Self { servos, shutdown, task }
    }

    /// The handle on the served servos (faults, hand motion, inspection).
    pub fn servos(&self) -> &ServoBus {
        &self.servos
    }

    /// Whether the serving task has ended (shut down, unplugged, peer gone or failed).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Stops serving, closes the transport and reports how serving ended.
    pub async fn shutdown(self) -> Result<(), EmuError> {
        self.shutdown.cancel();
        self.task.await?
    }

    /// Waits until serving ends on its own (unplugged, peer gone or failed).
    pub async fn finished(self) -> Result<(), EmuError> {
        self.task.await?
    }
}
