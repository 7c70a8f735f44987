//! In-memory transport for unit tests: one end of a `tokio::io::duplex` pipe.

use tokio::io::DuplexStream;

use super::RunningBus;
use crate::handle::ServoBus;

/// Bytes buffered in each direction of the pipe.
const PIPE_CAPACITY: usize = 4096;

/// Serves `servos` on an in-memory pipe and returns the host end of it.
///
/// When the bus is unplugged or shut down the emulator drops its end: the host then reads
/// end-of-file and its writes fail with a broken pipe.
pub fn spawn_duplex(servos: ServoBus) -> (DuplexStream, RunningBus) {
    let (host, device) = tokio::io::duplex(PIPE_CAPACITY);
    (host, RunningBus::spawn(device, servos))
}
