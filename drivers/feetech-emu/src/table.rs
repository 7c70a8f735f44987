//! One servo's control table memory and its factory defaults.

use feetech::control_table::{self as ct, Access, Register};

/// Bytes of addressable memory (addresses are one byte).
pub(crate) const TABLE_LEN: usize = 256;

/// Bytes of the EEPROM area (addresses below the first RAM address).
pub(crate) const EEPROM_LEN: usize = ct::FIRST_RAM_ADDRESS as usize;

/// The EEPROM area as persisted across power cycles.
pub(crate) type EepromImage = [u8; EEPROM_LEN];

/// Factory value of each register that does not default to zero (STS3215 figures from the
/// reference notes; SMS-only figures are used where the STS pages give none).
const FACTORY_VALUES: &[(Register, i32)] = &[
    (ct::MODEL_NUMBER, ct::STS3215_MODEL_NUMBER as i32),
    (ct::ID, 1),
    (ct::RESPONSE_STATUS_LEVEL, 1),
    (ct::MAX_POSITION_LIMIT, 4095),
    (ct::MAX_TEMPERATURE_LIMIT, 70),
    (ct::MAX_VOLTAGE_LIMIT, 140),
    (ct::MIN_VOLTAGE_LIMIT, 40),
    (ct::MAX_TORQUE_LIMIT, 1000),
    (ct::P_COEFFICIENT, 32),
    (ct::D_COEFFICIENT, 32),
    (ct::CW_DEAD_ZONE, 1),
    (ct::CCW_DEAD_ZONE, 1),
    (ct::PROTECTION_CURRENT, 511),
    (ct::ANGULAR_RESOLUTION, 1),
    (ct::PROTECTIVE_TORQUE, 20),
    (ct::PROTECTION_TIME, 200),
    (ct::OVERLOAD_TORQUE, 80),
    (ct::OVER_CURRENT_PROTECTION_TIME, 200),
    (ct::TORQUE_LIMIT, 1000),
    (ct::LOCK, 1),
];

/// A control table: 256 bytes, registers little-endian.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    bytes: [u8; TABLE_LEN],
}

impl Table {
    /// The table of a servo fresh from the factory with the given firmware version.
    pub(crate) fn factory(firmware: (u8, u8)) -> Self {
        let mut table = Self { bytes: [0; TABLE_LEN] };
        table.set(&ct::FIRMWARE_MAJOR_VERSION, i32::from(firmware.0));
        table.set(&ct::FIRMWARE_MINOR_VERSION, i32::from(firmware.1));
        for (register, value) in FACTORY_VALUES {
            table.set(register, *value);
        }
        table
    }

    /// Decoded value of a register.
    pub(crate) fn get(&self, register: &Register) -> i32 {
        register.decode(
            self.read(register.address, usize::from(register.size))
                .unwrap_or_default(),
        )
    }

    /// Stores a value (clamped to what the register can hold).
    pub(crate) fn set(&mut self, register: &Register, value: i32) {
        for (offset, byte) in register.encode(value).into_iter().enumerate() {
            self.set_byte(usize::from(register.address) + offset, byte);
        }
    }

    /// The bytes at `addr..addr + len`, or `None` past the end of the table.
    pub(crate) fn read(&self, addr: u8, len: usize) -> Option<&[u8]> {
        let start = usize::from(addr);
        self.bytes.get(start..start.checked_add(len)?)
    }

    /// Stores one byte (ignored past the end of the table).
    pub(crate) fn set_byte(&mut self, addr: usize, value: u8) {
        if let Some(byte) = self.bytes.get_mut(addr) {
            *byte = value;
        }
    }

    /// A copy of the EEPROM area.
    pub(crate) fn eeprom(&self) -> EepromImage {
        let mut image = [0; EEPROM_LEN];
        image.copy_from_slice(self.bytes.get(..EEPROM_LEN).unwrap_or(&[0; EEPROM_LEN]));
        image
    }

    /// Overwrites the EEPROM area.
    pub(crate) fn load_eeprom(&mut self, image: &EepromImage) {
        if let Some(area) = self.bytes.get_mut(..EEPROM_LEN) {
            area.copy_from_slice(image);
        }
    }
}

/// The register that contains `addr` if the host may write it.
pub(crate) fn writable_register(addr: usize) -> Option<&'static Register> {
    let addr = u8::try_from(addr).ok()?;
    ct::ALL
        .iter()
        .find(|r| r.contains(addr))
        .filter(|r| r.access == Access::ReadWrite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factory_table_holds_the_documented_defaults() {
        let table = Table::factory((3, 10));
        assert_eq!(table.get(&ct::MODEL_NUMBER), 777);
        assert_eq!(table.read(3, 2), Some(&[0x09, 0x03][..]));
        assert_eq!(table.get(&ct::ID), 1);
        assert_eq!(table.get(&ct::BAUD_RATE), 0);
        assert_eq!(table.get(&ct::MAX_POSITION_LIMIT), 4095);
        assert_eq!(table.get(&ct::FIRMWARE_MINOR_VERSION), 10);
        assert_eq!(table.get(&ct::LOCK), 1);
        assert_eq!(table.get(&ct::TORQUE_ENABLE), 0);
    }

    #[test]
    fn reads_past_the_end_are_refused_and_sign_magnitude_is_stored() {
        let mut table = Table::factory((3, 10));
        assert!(table.read(250, 6).is_some());
        assert!(table.read(250, 7).is_none());
        table.set(&ct::HOMING_OFFSET, -100);
        assert_eq!(table.read(31, 2), Some(&[0x64, 0x08][..]));
        assert_eq!(table.get(&ct::HOMING_OFFSET), -100);
    }

    #[test]
    fn only_read_write_registers_are_writable() {
        assert_eq!(writable_register(5).map(|r| r.name), Some("ID"));
        assert_eq!(writable_register(43).map(|r| r.name), Some("Goal_Position"));
        assert!(writable_register(3).is_none(), "model number is read-only");
        assert!(writable_register(56).is_none(), "present position is read-only");
        assert!(writable_register(50).is_none(), "unmapped address");
    }
}
