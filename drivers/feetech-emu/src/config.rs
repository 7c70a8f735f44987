//! How an emulated bus and its servos start out.

use feetech::control_table::DEFAULT_BAUD_RATE;

use crate::faults::FaultConfig;
use crate::response::Response;
use crate::script::{Push, Script};

/// Starting state of one emulated STS3215.
///
/// Identity, calibration and limits are applied to the EEPROM as if a host had written
/// and persisted them; a factory reset brings back the factory defaults instead.
#[derive(Debug, Clone, PartialEq)]
pub struct ServoConfig {
    /// Servo id (factory servos all use 1).
    pub id: u8,
    /// Raw encoder position of the shaft at power-on, 0..=4095.
    pub raw_position: u16,
    /// Homing offset in steps (|offset| <= 2047): present position = raw - offset.
    pub homing_offset: i16,
    /// Min_Position_Limit and Max_Position_Limit.
    pub position_limits: (u16, u16),
    /// Supply voltage in 0.1 V.
    pub supply_decivolts: u8,
    /// Firmware (major, minor) version reported at addresses 0 and 1.
    pub firmware: (u8, u8),
    /// Present position (steps) the shaft cannot pass, from the side it powers on at (at the
    /// obstacle itself: above it); driven against it, the load rises with how far past it the
    /// goal lies.
    pub obstacle: Option<u16>,
    /// Steps per second the shaft slips back against the load at full load (gearing that
    /// loses steps); the position loop makes them up again. 0: no slip.
    pub slip_steps_per_s: f64,
    /// Its response beyond the registers (delay, speed and acceleration caps): at once and
    /// unbounded by default.
    pub response: Response,
}

impl ServoConfig {
    /// A servo as it ships, given an id: shaft at 2048, no offset, full range, 12 V supply,
    /// nothing in its way.
    pub fn new(id: u8) -> Self {
        Self {
            id,
            raw_position: 2048,
            homing_offset: 0,
            position_limits: (0, 4095),
            supply_decivolts: 120,
            firmware: (3, 10),
            obstacle: None,
            slip_steps_per_s: 0.0,
            response: Response::default(),
        }
    }
}

/// Everything needed to start a virtual bus.
#[derive(Debug, Clone, PartialEq)]
pub struct EmuConfig {
    /// The servos on the bus (ids may repeat, which makes their replies collide).
    pub servos: Vec<ServoConfig>,
    /// Line rate the host talks at; servos set to another baud rate stay silent.
    pub baud: u32,
    /// Delay replies by their time on the wire plus the servo's return delay.
    pub wire_timing: bool,
    /// Faults injected from the start.
    pub faults: FaultConfig,
    /// Seed of the random generator behind probabilistic faults.
    pub seed: u64,
    /// A hand moving the servos from the start (torque off: they follow it).
    pub script: Option<Script>,
    /// Pushes of a hand against joints, at bus times.
    pub pushes: Vec<Push>,
}

impl EmuConfig {
    /// A bus at 1 Mbaud with the given servos, no wire timing, no faults and no hand.
    pub fn new(servos: Vec<ServoConfig>) -> Self {
        Self {
            servos,
            baud: DEFAULT_BAUD_RATE,
            wire_timing: false,
            faults: FaultConfig::none(),
            seed: 0,
            script: None,
            pushes: Vec::new(),
        }
    }
}
