//! Register access: ping, read, write, REG_WRITE/ACTION, SYNC_READ, SYNC_WRITE.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

use super::link::Received;
use super::{Bus, BusError, Reply, SyncReadResults};
use crate::control_table::{
    Access, GOAL_POSITION, PRESENT_POSITION, Register, STATE_BLOCK_ADDRESS, STATE_BLOCK_LEN, ServoState,
};
use crate::protocol::frame::Frame;
use crate::protocol::status::StatusPacket;
use crate::protocol::sync_read::{SyncReadCollector, SyncReadError};
use crate::protocol::{BROADCAST_ID, MAX_SERVO_ID, instruction};

/// Rejects ids that cannot answer individually.
pub(super) fn unicast(id: u8) -> Result<u8, BusError> {
    if id > MAX_SERVO_ID {
        return Err(BusError::InvalidId(id));
    }
    Ok(id)
}

fn writable(register: &Register) -> Result<(), BusError> {
    match register.access {
        Access::ReadWrite => Ok(()),
        Access::Read => Err(BusError::ReadOnly {
            register: register.name,
        }),
    }
}

fn reply(status: StatusPacket) -> Reply<Vec<u8>> {
    Reply {
        id: status.id,
        error: status.error,
        value: status.params,
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Bus<T> {
    /// PING one servo; the reply carries its current error flags.
    pub async fn ping(&mut self, id: u8) -> Result<Reply<()>, BusError> {
        let id = unicast(id)?;
        let status = self.exchange(&instruction::ping(id), id, 0).await?;
        Ok(reply(status).map(|_| ()))
    }

    /// READ `len` raw bytes at `addr`.
    pub async fn read(&mut self, id: u8, addr: u8, len: u8) -> Result<Reply<Vec<u8>>, BusError> {
        let id = unicast(id)?;
        let frame = instruction::read(id, addr, len);
        Ok(reply(self.exchange(&frame, id, usize::from(len)).await?))
    }

    /// Reads and decodes one register.
    pub async fn read_register(&mut self, id: u8, register: &Register) -> Result<Reply<i32>, BusError> {
        let raw = self.read(id, register.address, register.size).await?;
        Ok(raw.map(|bytes| register.decode(&bytes)))
    }

    /// WRITE raw bytes at `addr` and wait for the acknowledgement.
    pub async fn write(&mut self, id: u8, addr: u8, data: &[u8]) -> Result<Reply<()>, BusError> {
        let id = unicast(id)?;
        let status = self.exchange(&instruction::write(id, addr, data), id, 0).await?;
        Ok(reply(status).map(|_| ()))
    }

    /// Encodes and writes one register (RAM or EEPROM as is; see
    /// [`Bus::write_eeprom`] for the lock-aware, write-if-different variant).
    pub async fn write_register(&mut self, id: u8, register: &Register, value: i32) -> Result<Reply<()>, BusError> {
        writable(register)?;
        let data = register.try_encode(value)?;
        self.write(id, register.address, &data).await
    }

    /// REG_WRITE one register: buffered by the servo until [`Bus::action`].
    pub async fn reg_write_register(&mut self, id: u8, register: &Register, value: i32) -> Result<Reply<()>, BusError> {
        writable(register)?;
        let id = unicast(id)?;
        let frame = instruction::reg_write(id, register.address, &register.try_encode(value)?);
        Ok(reply(self.exchange(&frame, id, 0).await?).map(|_| ()))
    }

    /// Factory reset (instruction 0x06): the servo's whole control table, id, baud rate
    /// and calibration included, returns to factory values. Only ever sent by this call.
    pub async fn factory_reset(&mut self, id: u8) -> Result<Reply<()>, BusError> {
        let id = unicast(id)?;
        let status = self.exchange(&instruction::factory_reset(id), id, 0).await?;
        Ok(reply(status).map(|_| ()))
    }

    /// Broadcast ACTION: every servo applies its buffered REG_WRITE (no reply).
    pub async fn action(&mut self) -> Result<(), BusError> {
        self.send(&instruction::action(BROADCAST_ID)).await
    }

    /// SYNC_WRITE raw data: `len` bytes at `addr` for each `(id, data)` (no reply).
    pub async fn sync_write<D: AsRef<[u8]>>(&mut self, addr: u8, len: u8, entries: &[(u8, D)]) -> Result<(), BusError> {
        for (id, data) in entries {
            unicast(*id)?;
            if data.as_ref().len() != usize::from(len) {
                return Err(BusError::BadLength {
                    id: *id,
                    expected: usize::from(len),
                    got: data.as_ref().len(),
                });
            }
        }
        self.send(&instruction::sync_write(addr, len, entries)).await
    }

    /// SYNC_WRITE one register with a value per servo.
    pub async fn sync_write_register(&mut self, register: &Register, values: &[(u8, i32)]) -> Result<(), BusError> {
        writable(register)?;
        let entries = values
            .iter()
            .map(|(id, value)| Ok((*id, register.try_encode(*value)?)))
            .collect::<Result<Vec<_>, BusError>>()?;
        self.sync_write(register.address, register.size, &entries).await
    }

    /// SYNC_WRITE goal positions (steps).
    pub async fn sync_write_goal_positions(&mut self, goals: &[(u8, i32)]) -> Result<(), BusError> {
        self.sync_write_register(&GOAL_POSITION, goals).await
    }

    /// SYNC_READ `len` bytes at `addr` from every id. The outer error is a port failure; each
    /// servo's own outcome is in the inner results, in the order of `ids`. Servos whose
    /// reply was lost or corrupted are asked again (only them), up to the retry budget.
    pub async fn sync_read(&mut self, addr: u8, len: u8, ids: &[u8]) -> Result<SyncReadResults<Vec<u8>>, BusError> {
        for id in ids {
            unicast(*id)?;
        }
        let mut results: Vec<Option<Result<Reply<Vec<u8>>, BusError>>> = ids.iter().map(|_| None).collect();
        let mut pending: Vec<u8> = ids.to_vec();
        let mut attempt = 0;
        loop {
            let round = self.sync_read_once(addr, len, &pending).await?;
            for (id, outcome) in round {
                let outcome = outcome.map(reply).map_err(|e| sync_error(id, len, e));
                let slot = ids
                    .iter()
                    .zip(results.iter_mut())
                    .find(|(slot_id, slot)| **slot_id == id && !matches!(slot, Some(Ok(_))));
                if let Some((_, slot)) = slot {
                    *slot = Some(outcome);
                }
            }
            pending = ids
                .iter()
                .zip(&results)
                .filter(|(_, r)| matches!(r, Some(Err(e)) if e.is_retryable()))
                .map(|(id, _)| *id)
                .collect();
            if pending.is_empty() || attempt >= self.config.retries {
                break;
            }
            attempt += 1;
            tracing::debug!(?pending, attempt, "retrying sync read");
        }
        Ok(ids
            .iter()
            .zip(results)
            .map(|(id, r)| r.unwrap_or(Err(BusError::NoReply { id: *id })))
            .collect())
    }

    async fn sync_read_once(
        &mut self,
        addr: u8,
        len: u8,
        ids: &[u8],
    ) -> Result<Vec<(u8, Result<StatusPacket, SyncReadError>)>, BusError> {
        let frame: Frame = instruction::sync_read(addr, len, ids);
        self.send(&frame).await?;
        let sent = Instant::now();
        let deadline = sent + self.reply_timeout();
        let mut collector = SyncReadCollector::new(len, ids);
        while !collector.is_complete() {
            match self.receive(deadline).await? {
                Received::Frame(frame) => {
                    collector.accept(frame);
                }
                Received::Corrupt(error) => collector.reject(&error),
                Received::Deadline { .. } => {
                    self.round_trips.timed_out(sent);
                    return Ok(collector.finish());
                }
            }
        }
        self.round_trips.answered(sent);
        Ok(collector.finish())
    }

    /// SYNC_READ one register from every id, decoded.
    pub async fn sync_read_register(
        &mut self,
        register: &Register,
        ids: &[u8],
    ) -> Result<SyncReadResults<i32>, BusError> {
        let raw = self.sync_read(register.address, register.size, ids).await?;
        Ok(raw
            .into_iter()
            .map(|r| r.map(|reply| reply.map(|bytes| register.decode(&bytes))))
            .collect())
    }

    /// SYNC_READ present positions (steps).
    pub async fn sync_read_positions(&mut self, ids: &[u8]) -> Result<SyncReadResults<i32>, BusError> {
        self.sync_read_register(&PRESENT_POSITION, ids).await
    }

    /// SYNC_READ the whole state block (position through current).
    pub async fn sync_read_state(&mut self, ids: &[u8]) -> Result<SyncReadResults<ServoState>, BusError> {
        let raw = self.sync_read(STATE_BLOCK_ADDRESS, STATE_BLOCK_LEN, ids).await?;
        Ok(raw
            .into_iter()
            .map(|r| {
                r.and_then(|reply| {
                    let state = ServoState::from_block(&reply.value).ok_or(BusError::BadLength {
                        id: reply.id,
                        expected: usize::from(STATE_BLOCK_LEN),
                        got: reply.value.len(),
                    })?;
                    Ok(reply.map(|_| state))
                })
            })
            .collect())
    }
}

fn sync_error(id: u8, len: u8, error: SyncReadError) -> BusError {
    match error {
        SyncReadError::NoReply => BusError::NoReply { id },
        SyncReadError::Checksum => BusError::Checksum { id },
        SyncReadError::BadLength { got, .. } => BusError::BadLength {
            id,
            expected: usize::from(len),
            got,
        },
    }
}
