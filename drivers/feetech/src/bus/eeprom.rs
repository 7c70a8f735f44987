//! Torque, the EEPROM lock, write-if-different EEPROM writes, id and baud rate changes.

use tokio::io::{AsyncRead, AsyncWrite};

use super::ops::unicast;
use super::serial::BaudControl;
use super::{Bus, BusError};
use crate::control_table::{
    Area, BAUD_RATE, GOAL_POSITION, ID, LOCK, PRESENT_POSITION, Register, TORQUE_ENABLE, baud_index,
};
use crate::protocol::instruction;
use crate::protocol::status::ServoError;

/// Outcome of a write-if-different operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EepromWrite {
    /// The servo already held the value; nothing was written.
    Unchanged,
    /// The value was written (and read back).
    Written,
}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Bus<T> {
    /// Turns torque on and locks the EEPROM (`Torque_Enable = 1`, `Lock = 1`).
    /// Returns the error flags the servo reported along the way.
    pub async fn torque_on(&mut self, id: u8) -> Result<ServoError, BusError> {
        let a = self.write_register(id, &TORQUE_ENABLE, 1).await?;
        let b = self.write_register(id, &LOCK, 1).await?;
        Ok(a.error | b.error)
    }

    /// Turns torque off and unlocks the EEPROM (`Torque_Enable = 0`, `Lock = 0`), as LeRobot
    /// does. Returns the error flags the servo reported along the way.
    pub async fn torque_off(&mut self, id: u8) -> Result<ServoError, BusError> {
        let a = self.write_register(id, &TORQUE_ENABLE, 0).await?;
        let b = self.write_register(id, &LOCK, 0).await?;
        Ok(a.error | b.error)
    }

    /// Writes a register only if its value differs, then reads it back; see
    /// [`Bus::write_registers`]. `ID` and `BAUD_RATE` go through [`Bus::change_id`] and
    /// [`Bus::change_baud_rate`] instead.
    pub async fn write_eeprom(&mut self, id: u8, register: &Register, value: i32) -> Result<EepromWrite, BusError> {
        let outcomes = self.write_registers(id, &[(register, value)]).await?;
        Ok(outcomes.first().copied().unwrap_or(EepromWrite::Unchanged))
    }

    /// Writes the registers of one servo whose value differs, and nothing else; returns the
    /// outcome of each, in order. When any EEPROM register must change: torque off, lock
    /// open, the writes, lock closed, every written value read back, and, if torque was on,
    /// the goal set to the present position (a new homing offset moves it) before torque
    /// returns. `ID` and `BAUD_RATE` are refused (see [`Bus::change_id`] and
    /// [`Bus::change_baud_rate`]).
    pub async fn write_registers(&mut self, id: u8, values: &[(&Register, i32)]) -> Result<Vec<EepromWrite>, BusError> {
        let mut changes = Vec::new();
        let mut outcomes = Vec::new();
        for (register, value) in values {
            if register.address == ID.address || register.address == BAUD_RATE.address {
                return Err(BusError::ReadOnly {
                    register: register.name,
                });
            }
            register.try_encode(*value)?;
            let current = self.read_register(id, register).await?.value;
            if current == *value {
                outcomes.push(EepromWrite::Unchanged);
            } else {
                changes.push((*register, current, *value));
                outcomes.push(EepromWrite::Written);
            }
        }
        if changes.is_empty() {
            return Ok(outcomes);
        }
        let eeprom = changes.iter().any(|(register, _, _)| register.area == Area::Eeprom);
        let torque_was_on = if eeprom { self.unlock_eeprom(id).await? } else { false };
        let mut written = Ok(());
        for (register, _, value) in &changes {
            written = self.write_register(id, register, *value).await.map(|_| ());
            if written.is_err() {
                break;
            }
        }
        if eeprom {
            self.write_register(id, &LOCK, 1).await?;
        }
        written?;
        for (register, from, to) in &changes {
            self.verify(id, register, *to).await?;
            tracing::info!(id, register = register.name, from, to, "written");
        }
        if torque_was_on {
            self.hold_present(id).await?;
            self.write_register(id, &TORQUE_ENABLE, 1).await?;
        }
        Ok(outcomes)
    }

    /// Sets the goal of servo `id` to its present position, so torque holds it still.
    pub async fn hold_present(&mut self, id: u8) -> Result<i32, BusError> {
        let present = self.read_register(id, &PRESENT_POSITION).await?.value;
        self.write_register(id, &GOAL_POSITION, present).await?;
        Ok(present)
    }

    /// Gives servo `id` the id `new_id` (EEPROM). Fails with [`BusError::IdTaken`] when a
    /// servo already answers at `new_id`.
    pub async fn change_id(&mut self, id: u8, new_id: u8) -> Result<EepromWrite, BusError> {
        let (id, new_id) = (unicast(id)?, unicast(new_id)?);
        if id == new_id {
            return Ok(EepromWrite::Unchanged);
        }
        match self.ping(new_id).await {
            Ok(_) => return Err(BusError::IdTaken(new_id)),
            Err(BusError::NoReply { .. }) => {}
            Err(other) => return Err(other),
        }
        let torque_was_on = self.unlock_eeprom(id).await?;
        // The acknowledgement may come from either id; a lost one is settled by the check below.
        let frame = instruction::write(id, ID.address, &ID.try_encode(i32::from(new_id))?);
        match self.exchange_from(&frame, &[id, new_id], 0).await {
            Err(error) if !error.is_retryable() => return Err(error),
            _ => {}
        }
        self.lock_eeprom(new_id, torque_was_on).await?;
        self.verify(new_id, &ID, i32::from(new_id)).await?;
        tracing::info!(from = id, to = new_id, "servo id changed");
        Ok(EepromWrite::Written)
    }

    /// Makes servo `id` talk at `baud` (EEPROM) and switches the port to it.
    pub async fn change_baud_rate(&mut self, id: u8, baud: u32) -> Result<EepromWrite, BusError>
    where
        T: BaudControl,
    {
        let index = baud_index(baud).ok_or(BusError::UnsupportedBaud(baud))?;
        let index = i32::from(index);
        if self.read_register(id, &BAUD_RATE).await?.value == index {
            self.port.set_baud_rate(baud).map_err(BusError::PortGone)?;
            return Ok(EepromWrite::Unchanged);
        }
        let torque_was_on = self.unlock_eeprom(id).await?;
        // The servo may switch before its acknowledgement gets out; the check below decides.
        let frame = instruction::write(id, BAUD_RATE.address, &BAUD_RATE.try_encode(index)?);
        match self.exchange_from(&frame, &[id], 0).await {
            Err(error) if !error.is_retryable() => return Err(error),
            _ => {}
        }
        self.port.set_baud_rate(baud).map_err(BusError::PortGone)?;
        self.lock_eeprom(id, torque_was_on).await?;
        self.verify(id, &BAUD_RATE, index).await?;
        tracing::info!(id, baud, "servo baud rate changed");
        Ok(EepromWrite::Written)
    }

    /// Turns torque off if needed and opens the EEPROM lock; returns whether torque was on.
    async fn unlock_eeprom(&mut self, id: u8) -> Result<bool, BusError> {
        let torque_was_on = self.read_register(id, &TORQUE_ENABLE).await?.value != 0;
        if torque_was_on {
            self.write_register(id, &TORQUE_ENABLE, 0).await?;
        }
        self.write_register(id, &LOCK, 0).await?;
        Ok(torque_was_on)
    }

    /// Closes the EEPROM lock and turns torque back on if it was.
    async fn lock_eeprom(&mut self, id: u8, torque_was_on: bool) -> Result<(), BusError> {
        self.write_register(id, &LOCK, 1).await?;
        if torque_was_on {
            self.hold_present(id).await?;
            self.write_register(id, &TORQUE_ENABLE, 1).await?;
        }
        Ok(())
    }

    /// Reads `register` back and compares it with `expected`.
    async fn verify(&mut self, id: u8, register: &Register, expected: i32) -> Result<(), BusError> {
        let read = self.read_register(id, register).await?.value;
        if read != expected {
            return Err(BusError::VerifyFailed {
                id,
                register: register.name,
                written: expected,
                read,
            });
        }
        Ok(())
    }
}
