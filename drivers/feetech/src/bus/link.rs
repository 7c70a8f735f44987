//! Low-level link: draining stale input, sending frames, skipping echo, receiving frames.

use std::io;
use std::pin::Pin;
use std::task::Poll;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::{Instant, timeout_at};

use super::{Bus, BusError};
use crate::protocol::frame::{DecodeError, Frame, MAX_PARAMS};
use crate::protocol::status::StatusPacket;

/// Size of the receive buffer for one read call.
const READ_CHUNK: usize = 512;

/// Most stale bytes dropped before a transaction goes ahead anyway.
const MAX_DRAIN: usize = 64 * 1024;

/// One item taken off the wire while waiting for a reply.
pub(super) enum Received {
    /// A complete, valid frame.
    Frame(Frame),
    /// A frame with a bad checksum.
    Corrupt(DecodeError),
    /// The deadline passed; `partial` bytes of an unfinished frame were buffered.
    Deadline {
        /// Buffered bytes that did not form a frame.
        partial: usize,
    },
}

fn port_gone(error: io::Error) -> BusError {
    BusError::PortGone(error)
}

fn eof() -> BusError {
    port_gone(io::Error::new(io::ErrorKind::UnexpectedEof, "port closed"))
}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Bus<T> {
    /// Reads and drops whatever input is already waiting, without blocking (and without
    /// looping forever on a line that never stops talking).
    async fn drain_input(&mut self) -> Result<(), BusError> {
        let port = &mut self.port;
        let mut scratch = [0_u8; READ_CHUNK];
        let mut drained = 0;
        std::future::poll_fn(|cx| {
            loop {
                let mut buf = ReadBuf::new(&mut scratch);
                match Pin::new(&mut *port).poll_read(cx, &mut buf) {
                    Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                        return Poll::Ready(Err(eof()));
                    }
                    Poll::Ready(Ok(())) => {
                        drained += buf.filled().len();
                        if drained >= MAX_DRAIN {
                            return Poll::Ready(Ok(()));
                        }
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(port_gone(e))),
                    Poll::Pending => return Poll::Ready(Ok(())),
                }
            }
        })
        .await?;
        if drained > 0 {
            tracing::debug!(drained, "dropped stale input before transaction");
            self.round_trips.late_bytes(self.config.timeout);
        }
        self.decoder.clear();
        self.echo_pending.clear();
        Ok(())
    }

    /// Starts a transaction: drains stale input, writes `frame`, and (with an echoing
    /// adapter) consumes the echo.
    pub(super) async fn send(&mut self, frame: &Frame) -> Result<(), BusError> {
        if frame.params.len() > MAX_PARAMS {
            return Err(BusError::PacketTooLong {
                params: frame.params.len(),
            });
        }
        self.drain_input().await?;
        let bytes = frame.encode();
        tracing::trace!(?bytes, "tx");
        let deadline = Instant::now() + self.reply_timeout();
        let write = async {
            self.port.write_all(&bytes).await?;
            self.port.flush().await
        };
        match timeout_at(deadline, write).await {
            Ok(result) => result.map_err(port_gone)?,
            Err(_) => {
                return Err(port_gone(io::Error::new(io::ErrorKind::TimedOut, "write timed out")));
            }
        }
        if self.config.echo {
            self.echo_pending = bytes;
            while !self.echo_pending.is_empty() {
                if !self.fill(deadline).await? {
                    return Err(BusError::EchoMismatch);
                }
            }
        }
        Ok(())
    }

    /// Reads more bytes into the decoder (after stripping echo). Returns `false` at the
    /// deadline.
    async fn fill(&mut self, deadline: Instant) -> Result<bool, BusError> {
        let mut buf = [0_u8; READ_CHUNK];
        let n = match timeout_at(deadline, self.port.read(&mut buf)).await {
            Err(_) => return Ok(false),
            Ok(Err(e)) => return Err(port_gone(e)),
            Ok(Ok(0)) => return Err(eof()),
            Ok(Ok(n)) => n,
        };
        let bytes = buf.get(..n).unwrap_or_default();
        tracing::trace!(?bytes, "rx");
        let echoed = self.echo_pending.len().min(bytes.len());
        let (echo, rest) = bytes.split_at(echoed);
        if self.echo_pending.get(..echoed) != Some(echo) {
            self.echo_pending.clear();
            return Err(BusError::EchoMismatch);
        }
        self.echo_pending.drain(..echoed);
        self.decoder.push(rest);
        Ok(true)
    }

    /// Waits for the next frame (or corrupt frame) until `deadline`.
    pub(super) async fn receive(&mut self, deadline: Instant) -> Result<Received, BusError> {
        loop {
            match self.decoder.next_frame() {
                Some(Ok(frame)) => return Ok(Received::Frame(frame)),
                Some(Err(error)) => return Ok(Received::Corrupt(error)),
                None => {}
            }
            if !self.fill(deadline).await? {
                return Ok(Received::Deadline {
                    partial: self.decoder.pending().len(),
                });
            }
        }
    }

    /// One attempt: sends `frame` and waits for a status packet with `expected_len` data bytes
    /// from one of `ids`. A reply of another length is passed over as the late answer to an
    /// earlier transaction; it is the error only if nothing better arrives in time.
    async fn exchange_once(
        &mut self,
        frame: &Frame,
        ids: &[u8],
        expected_len: usize,
    ) -> Result<StatusPacket, BusError> {
        let id = ids.first().copied().unwrap_or(frame.id);
        self.send(frame).await?;
        let sent = Instant::now();
        let deadline = sent + self.reply_timeout();
        let mut misfit = None;
        loop {
            match self.receive(deadline).await? {
                Received::Frame(reply) if ids.contains(&reply.id) && reply.params.len() == expected_len => {
                    self.round_trips.answered(sent);
                    return Ok(StatusPacket::from(reply));
                }
                Received::Frame(reply) if ids.contains(&reply.id) => {
                    tracing::debug!(
                        id = reply.id,
                        got = reply.params.len(),
                        expected_len,
                        "ignoring a reply of another length"
                    );
                    misfit = Some(BusError::BadLength {
                        id: reply.id,
                        expected: expected_len,
                        got: reply.params.len(),
                    });
                }
                Received::Frame(stray) => {
                    tracing::debug!(expected = id, got = stray.id, "ignoring reply from another servo");
                }
                Received::Corrupt(DecodeError::Checksum { id: got, .. }) => {
                    self.round_trips.answered(sent);
                    return Err(BusError::Checksum { id: got });
                }
                Received::Deadline { partial } => {
                    self.round_trips.timed_out(sent);
                    return Err(misfit.unwrap_or(if partial == 0 {
                        BusError::NoReply { id }
                    } else {
                        BusError::Timeout { id, received: partial }
                    }));
                }
            }
        }
    }

    /// Sends `frame` to `id` and returns its status packet whose data has `expected_len`
    /// bytes, retrying lost or corrupted replies.
    pub(super) async fn exchange(
        &mut self,
        frame: &Frame,
        id: u8,
        expected_len: usize,
    ) -> Result<StatusPacket, BusError> {
        self.exchange_from(frame, &[id], expected_len).await
    }

    /// Like [`Bus::exchange`], accepting the reply from any of `ids`.
    pub(super) async fn exchange_from(
        &mut self,
        frame: &Frame,
        ids: &[u8],
        expected_len: usize,
    ) -> Result<StatusPacket, BusError> {
        let mut attempt = 0;
        loop {
            match self.exchange_once(frame, ids, expected_len).await {
                Err(error) if error.is_retryable() && attempt < self.config.retries => {
                    attempt += 1;
                    tracing::debug!(?ids, attempt, %error, "retrying");
                }
                other => return other,
            }
        }
    }
}
