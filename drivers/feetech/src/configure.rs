//! Connect-time configuration of an arm's servos, as a LeRobot SO follower sets them up,
//! writing only the registers whose value differs.

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::bus::{Bus, BusError, EepromWrite};
use crate::control_table::{
    ACCELERATION, D_COEFFICIENT, I_COEFFICIENT, MAX_TORQUE_LIMIT, MAXIMUM_ACCELERATION, OPERATING_MODE,
    OVERLOAD_TORQUE, P_COEFFICIENT, PHASE, PROTECTION_CURRENT, RETURN_DELAY_TIME, Register, TORQUE_LIMIT,
};

/// Phase bit that makes positions multi-turn; cleared so readings stay in 0..4095.
const PHASE_MULTI_TURN_BIT: i32 = 0x10;

/// Operating mode 0: position control.
const POSITION_MODE: i32 = 0;

/// Motor name of the jaw, which gets [`GripperLimits`].
pub const GRIPPER: &str = "gripper";

/// Register values every servo of a follower gets at connect (defaults: LeRobot's SO
/// follower, whose P/I/D the twin's actuators assume).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServoSettings {
    /// `Return_Delay_Time` (2 µs units; 0 = answer at once).
    pub return_delay: u8,
    /// `Acceleration` (about 100 steps/s² per unit; 254 is LeRobot's).
    pub acceleration: u8,
    /// `Maximum_Acceleration`.
    pub max_acceleration: u8,
    /// `P_Coefficient` of the position loop.
    pub p: u8,
    /// `I_Coefficient`.
    pub i: u8,
    /// `D_Coefficient`.
    pub d: u8,
    /// Limits of the gripper servo only.
    pub gripper: GripperLimits,
}

/// Limits that keep the gripper from burning out while it closes on an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct GripperLimits {
    /// `Max_Torque_Limit` (0.1 %; 500 = half torque), also applied to `Torque_Limit`.
    pub max_torque: u16,
    /// `Protection_Current` (6.5 mA per count).
    pub protection_current: u16,
    /// `Overload_Torque` (%).
    pub overload_torque: u8,
}

impl Default for ServoSettings {
    fn default() -> Self {
        Self {
            return_delay: 0,
            acceleration: 254,
            max_acceleration: 254,
            p: 16,
            i: 0,
            d: 32,
            gripper: GripperLimits::default(),
        }
    }
}

impl Default for GripperLimits {
    fn default() -> Self {
        Self {
            max_torque: 500,
            protection_current: 250,
            overload_torque: 25,
        }
    }
}

impl ServoSettings {
    /// The registers to set on the motor `name` (without the Phase bit, which depends on
    /// the servo's current value).
    pub fn registers(&self, name: &str) -> Vec<(&'static Register, i32)> {
        let mut registers = vec![
            (&RETURN_DELAY_TIME, i32::from(self.return_delay)),
            (&OPERATING_MODE, POSITION_MODE),
            (&P_COEFFICIENT, i32::from(self.p)),
            (&I_COEFFICIENT, i32::from(self.i)),
            (&D_COEFFICIENT, i32::from(self.d)),
            (&ACCELERATION, i32::from(self.acceleration)),
            (&MAXIMUM_ACCELERATION, i32::from(self.max_acceleration)),
        ];
        if name == GRIPPER {
            let limits = self.gripper;
            registers.extend([
                (&MAX_TORQUE_LIMIT, i32::from(limits.max_torque)),
                (&TORQUE_LIMIT, i32::from(limits.max_torque)),
                (&PROTECTION_CURRENT, i32::from(limits.protection_current)),
                (&OVERLOAD_TORQUE, i32::from(limits.overload_torque)),
            ]);
        }
        registers
    }
}

/// What [`configure`] wrote to one servo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredServo {
    /// Motor name.
    pub motor: String,
    /// Servo id.
    pub id: u8,
    /// Registers that differed and were written.
    pub written: Vec<&'static str>,
}

/// Sets every motor of `motors` (`(name, id)` pairs) to `settings`, position mode and
/// single-turn readings (Phase bit 4 clear), writing only what differs; EEPROM changes go
/// through [`Bus::write_registers`] (torque off, lock, verify, goal held).
pub async fn configure<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    motors: &[(&str, u8)],
    settings: &ServoSettings,
) -> Result<Vec<ConfiguredServo>, BusError> {
    let mut configured = Vec::new();
    for (name, id) in motors {
        let mut registers = settings.registers(name);
        let phase = bus.read_register(*id, &PHASE).await?.value;
        registers.push((&PHASE, phase & !PHASE_MULTI_TURN_BIT));
        let outcomes = bus.write_registers(*id, &registers).await?;
        let written: Vec<&'static str> = registers
            .iter()
            .zip(outcomes)
            .filter(|(_, outcome)| *outcome == EepromWrite::Written)
            .map(|((register, _), _)| register.name)
            .collect();
        if !written.is_empty() {
            tracing::info!(motor = *name, id, ?written, "servo configured");
        }
        configured.push(ConfiguredServo {
            motor: (*name).to_owned(),
            id: *id,
            written,
        });
    }
    Ok(configured)
}
