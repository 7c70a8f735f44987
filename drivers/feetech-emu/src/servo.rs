//! One emulated STS3215: control table semantics, EEPROM lock, torque and the physical
//! readings derived from the motion model.

use std::time::Duration;

use feetech::control_table::{self as ct, Area, Register};
use feetech::protocol::status::ServoError;

use crate::config::ServoConfig;
use crate::grip::Grip;
use crate::hindrance::{Hindrance, LOAD_PER_BLOCKED_STEP};
use crate::motion::{
    ACCEL_STEPS_PER_S2_PER_UNIT, Drive, MAX_ACCEL_UNITS, MAX_SPEED_STEPS_PER_S, Motion, STEPS_PER_TURN,
};
use crate::response::{DelayLine, Response};
use crate::table::{EepromImage, Table, writable_register};

/// Steps per second per unit of the speed registers when Phase bit 2 is clear.
const COARSE_SPEED_UNIT: f64 = 50.0;
/// Steps per second per unit of the speed registers when Phase bit 2 is set.
const FINE_SPEED_UNIT: f64 = 1.0;
/// Phase bit selecting the fine speed unit.
const PHASE_FINE_SPEED_BIT: i32 = 0x04;
/// Present position a recentring write (128 to Torque_Enable) produces.
const RECENTRED_POSITION: f64 = 2048.0;
/// Largest homing offset magnitude (sign-magnitude with the sign in bit 11).
const MAX_HOMING_OFFSET: f64 = 2047.0;

/// Present_Current counts at stall: about 2.7 A per 12 V servo, 6.5 mA per count.
const STALL_CURRENT_COUNTS: f64 = 415.0;
/// Present_Current counts while holding still with torque on (model assumption).
const HOLDING_CURRENT_COUNTS: f64 = 8.0;
/// Load (0.1 % units) when accelerating at the largest acceleration (model assumption).
const LOAD_AT_MAX_ACCEL: f64 = 600.0;
/// Load (0.1 % units) when cruising at the largest speed (model assumption).
const LOAD_AT_MAX_SPEED: f64 = 200.0;
/// Full-scale load, 100 %.
const FULL_LOAD: f64 = 1000.0;
/// Longest motion update of a servo with an obstacle or slipping gearing.
const HINDRANCE_SLICE: Duration = Duration::from_millis(2);
/// Temperature of a cold servo, degrees Celsius.
const AMBIENT_CELSIUS: f64 = 25.0;
/// Steady-state temperature rise at stall current (model assumption).
const STALL_HEATING_CELSIUS: f64 = 50.0;
/// Thermal time constant of the housing (model assumption).
const THERMAL_TIME_CONSTANT_S: f64 = 300.0;

/// Emulated servo state.
#[derive(Debug, Clone)]
pub(crate) struct Servo {
    table: Table,
    persisted: EepromImage,
    firmware: (u8, u8),
    pending: Option<(u8, Vec<u8>)>,
    motion: Motion,
    temperature: f64,
    supply_decivolts: u8,
    hindrance: Hindrance,
    /// Signed load (0.1 % units) of a servo with torque on straining against a hand.
    hand_load: f64,
    /// Locked up after an overload: deaf and mute until its power is cycled.
    pub(crate) locked_up: bool,
    /// Caps on speed and acceleration beyond the registers.
    response: Response,
    /// The goals written but not yet acted on.
    delay_line: DelayLine,
}

impl Servo {
    /// Powers on a servo whose EEPROM holds the configured identity and calibration.
    pub(crate) fn new(config: &ServoConfig) -> Self {
        let mut table = Table::factory(config.firmware);
        table.set(&ct::ID, i32::from(config.id));
        table.set(&ct::HOMING_OFFSET, i32::from(config.homing_offset));
        table.set(&ct::MIN_POSITION_LIMIT, i32::from(config.position_limits.0));
        table.set(&ct::MAX_POSITION_LIMIT, i32::from(config.position_limits.1));
        let present = f64::from(config.raw_position) - f64::from(config.homing_offset);
        let mut servo = Self {
            hindrance: Hindrance::new(config, crate::motion::wrap(present)),
            persisted: table.eeprom(),
            table,
            firmware: config.firmware,
            pending: None,
            motion: Motion::at_rest(f64::from(config.raw_position)),
            temperature: AMBIENT_CELSIUS,
            supply_decivolts: config.supply_decivolts,
            hand_load: 0.0,
            locked_up: false,
            response: config.response,
            delay_line: DelayLine::new(config.response.delay),
        };
        servo.power_on();
        servo
    }

    /// Current id.
    pub(crate) fn id(&self) -> u8 {
        self.byte(&ct::ID)
    }

    /// Line rate the servo listens at, `None` for an invalid Baud_Rate value.
    pub(crate) fn baud(&self) -> Option<u32> {
        ct::baud_rate(self.byte(&ct::BAUD_RATE))
    }

    /// Whether the servo acknowledges writes and actions (Response_Status_Level 1).
    pub(crate) fn acknowledges_writes(&self) -> bool {
        self.table.get(&ct::RESPONSE_STATUS_LEVEL) != 0
    }

    /// Return_Delay_Time register value.
    pub(crate) fn return_delay(&self) -> u8 {
        self.byte(&ct::RETURN_DELAY_TIME)
    }

    /// The bytes at `addr..addr + len`, `None` past the end of the table.
    pub(crate) fn read(&self, addr: u8, len: u8) -> Option<Vec<u8>> {
        self.table.read(addr, usize::from(len)).map(<[u8]>::to_vec)
    }

    /// Decoded register value as the host would read it.
    pub(crate) fn register(&self, register: &Register) -> i32 {
        self.table.get(register)
    }

    /// Decoded value of an EEPROM register as it would be after a power cycle.
    pub(crate) fn persisted_register(&self, register: &Register) -> i32 {
        let mut table = self.table.clone();
        table.load_eeprom(&self.persisted);
        table.get(register)
    }

    /// A host WRITE: read-only bytes are ignored, EEPROM bytes persist only while unlocked.
    pub(crate) fn write(&mut self, addr: u8, data: &[u8]) {
        let torque_was_on = self.torque_enabled();
        for (offset, value) in data.iter().enumerate() {
            let addr = usize::from(addr) + offset;
            let Some(register) = writable_register(addr) else {
                continue;
            };
            if *register == ct::TORQUE_ENABLE && i32::from(*value) == ct::TORQUE_ENABLE_RECENTRE {
                self.recentre();
                continue;
            }
            self.table.set_byte(addr, *value);
            if register.area == Area::Eeprom
                && !self.eeprom_locked()
                && let Some(byte) = self.persisted.get_mut(addr)
            {
                *byte = *value;
            }
        }
        if !torque_was_on && self.torque_enabled() {
            // Enabling torque holds the current pose instead of jumping to a stale goal.
            let present = self.present_position();
            self.table.set(&ct::GOAL_POSITION, present);
            self.delay_line.hold(present);
        }
        self.delay_line.written(self.table.get(&ct::GOAL_POSITION));
    }

    /// A REG_WRITE: the write waits for ACTION (a later REG_WRITE replaces it).
    pub(crate) fn reg_write(&mut self, addr: u8, data: &[u8]) {
        self.pending = Some((addr, data.to_vec()));
    }

    /// The buffered REG_WRITE, if any.
    pub(crate) fn pending(&self) -> Option<(u8, Vec<u8>)> {
        self.pending.clone()
    }

    /// An ACTION: runs the buffered REG_WRITE, if any.
    pub(crate) fn action(&mut self) {
        if let Some((addr, data)) = self.pending.take() {
            self.write(addr, &data);
        }
    }

    /// Factory reset (RECOVERY): the EEPROM returns to factory values, including id 1 and
    /// 1 Mbaud, and the servo restarts.
    pub(crate) fn factory_reset(&mut self) {
        self.persisted = Table::factory(self.firmware).eeprom();
        self.power_on();
    }

    /// Removes and restores power: RAM returns to defaults, EEPROM to what was persisted.
    pub(crate) fn power_on(&mut self) {
        let mut table = Table::factory(self.firmware);
        table.load_eeprom(&self.persisted);
        let max_torque = table.get(&ct::MAX_TORQUE_LIMIT);
        table.set(&ct::TORQUE_LIMIT, max_torque);
        self.table = table;
        self.pending = None;
        self.motion.place(self.motion.actual());
        let present = self.present_position();
        self.table.set(&ct::GOAL_POSITION, present);
        self.delay_line.hold(present);
    }

    /// Moves the shaft by hand so that it reads `steps` (wrapped into one turn).
    pub(crate) fn place_present(&mut self, steps: i32) {
        self.motion.place(f64::from(steps) + self.homing_offset());
        self.hindrance.rest_at(self.motion.present(self.homing_offset()));
    }

    /// Moves the shaft by hand to a raw encoder position (before the homing offset).
    pub(crate) fn place_raw(&mut self, steps: i32) {
        self.motion.place(f64::from(steps));
        self.hindrance.rest_at(self.motion.present(self.homing_offset()));
    }

    /// A hand acts on the shaft after a motion update (`None`: no hand on it); see [`Grip`].
    pub(crate) fn grip(&mut self, grip: Option<Grip>) {
        let (drive, offset) = (self.drive(), self.homing_offset());
        self.hand_load = match grip {
            Some(grip) => grip.apply(&mut self.motion, &mut self.hindrance, offset, drive.as_ref()),
            None => 0.0,
        };
    }

    /// Present position in steps, unrounded.
    pub(crate) fn present_steps(&self) -> f64 {
        self.motion.present(self.homing_offset())
    }

    /// Changes the supply voltage (0.1 V units).
    pub(crate) fn set_supply(&mut self, decivolts: u8) {
        self.supply_decivolts = decivolts;
    }

    /// Advances motion and temperature by `dt`; `forced` errors stay active meanwhile.
    pub(crate) fn advance(&mut self, dt: Duration, forced: ServoError) {
        self.delay_line.advance(dt);
        // With an obstacle or slipping gearing, in short slices: the gearing slips under the
        // load of the slice before, and the position loop drives on from there.
        let slice = if self.hindrance.is_active() {
            HINDRANCE_SLICE
        } else {
            dt
        };
        let mut remaining = dt;
        while !remaining.is_zero() {
            let h = remaining.min(slice);
            remaining -= h;
            let load = self.load(forced);
            self.hindrance.slip(&mut self.motion, load / FULL_LOAD, h.as_secs_f64());
            let drive = self.drive();
            self.motion.step(h, drive);
            self.hindrance.constrain(&mut self.motion, drive.as_ref());
        }
        let current = self.current_for(self.load(forced));
        let heat_share = current.abs() / STALL_CURRENT_COUNTS;
        let target = AMBIENT_CELSIUS + STALL_HEATING_CELSIUS * heat_share;
        let blend = 1.0 - (-dt.as_secs_f64() / THERMAL_TIME_CONSTANT_S).exp();
        self.temperature += (target - self.temperature) * blend;
    }

    /// Error flags: computed from voltage and temperature limits, plus `forced` ones.
    pub(crate) fn status(&self, forced: ServoError) -> ServoError {
        let mut status = forced;
        let supply = i32::from(self.supply_decivolts);
        if supply < self.table.get(&ct::MIN_VOLTAGE_LIMIT) || supply > self.table.get(&ct::MAX_VOLTAGE_LIMIT) {
            status |= ServoError::VOLTAGE;
        }
        if self.temperature > f64::from(self.table.get(&ct::MAX_TEMPERATURE_LIMIT)) {
            status |= ServoError::OVERHEAT;
        }
        status
    }

    /// Writes the present readings into the RAM registers.
    pub(crate) fn refresh(&mut self, forced: ServoError) {
        let speed_unit = self.speed_unit();
        let load = self.load(forced);
        let current = self.current_for(load);
        let readings = [
            (ct::PRESENT_POSITION, self.present_position()),
            (ct::PRESENT_VELOCITY, round(self.motion.velocity() / speed_unit)),
            (ct::PRESENT_LOAD, round(load)),
            (ct::PRESENT_VOLTAGE, i32::from(self.supply_decivolts)),
            (ct::PRESENT_TEMPERATURE, round(self.temperature)),
            (ct::ASYNC_WRITE_FLAG, i32::from(self.pending.is_some())),
            (ct::STATUS, i32::from(self.status(forced).bits())),
            (ct::MOVING, i32::from(self.motion.velocity() != 0.0)),
            (ct::PRESENT_GOAL_POSITION, round(self.tracked_goal())),
            (ct::PRESENT_CURRENT, round(current)),
        ];
        for (register, value) in readings {
            self.table.set(&register, value);
        }
    }

    fn byte(&self, register: &Register) -> u8 {
        u8::try_from(self.table.get(register)).unwrap_or(u8::MAX)
    }

    fn eeprom_locked(&self) -> bool {
        self.table.get(&ct::LOCK) != 0
    }

    /// Whether torque is on.
    pub(crate) fn torque_enabled(&self) -> bool {
        self.table.get(&ct::TORQUE_ENABLE) != 0
    }

    fn homing_offset(&self) -> f64 {
        f64::from(self.table.get(&ct::HOMING_OFFSET))
    }

    /// Present position in steps, 0..=4095.
    pub(crate) fn present_position(&self) -> i32 {
        round(self.motion.present(self.homing_offset())).rem_euclid(STEPS_PER_TURN as i32)
    }

    /// Writing 128 to Torque_Enable: the homing offset is chosen so the shaft reads 2048.
    fn recentre(&mut self) {
        let offset = (self.motion.actual() - RECENTRED_POSITION)
            .round()
            .clamp(-MAX_HOMING_OFFSET, MAX_HOMING_OFFSET);
        let bytes = ct::HOMING_OFFSET.encode(round(offset));
        self.write(ct::HOMING_OFFSET.address, &bytes);
    }

    /// Steps per second represented by one unit of the speed registers.
    fn speed_unit(&self) -> f64 {
        if self.table.get(&ct::PHASE) & PHASE_FINE_SPEED_BIT != 0 {
            FINE_SPEED_UNIT
        } else {
            COARSE_SPEED_UNIT
        }
    }

    /// The goal the position loop tracks: Goal_Position clamped to one turn and the limits.
    fn tracked_goal(&self) -> f64 {
        let written = self.table.get(&ct::GOAL_POSITION);
        let goal = self.delay_line.acting(written).clamp(0, STEPS_PER_TURN as i32 - 1);
        let min = self.table.get(&ct::MIN_POSITION_LIMIT);
        let max = self.table.get(&ct::MAX_POSITION_LIMIT);
        let goal = if min < max { goal.clamp(min, max) } else { goal };
        f64::from(goal)
    }

    /// What the position loop does now; `None` when the motor is free.
    fn drive(&self) -> Option<Drive> {
        let position_mode = self.table.get(&ct::OPERATING_MODE) == 0;
        let has_torque = self.table.get(&ct::TORQUE_LIMIT) > 0;
        if !(self.torque_enabled() && position_mode && has_torque) {
            return None;
        }
        let requested = f64::from(self.table.get(&ct::GOAL_VELOCITY).unsigned_abs()) * self.speed_unit();
        let max_speed = if requested == 0.0 {
            MAX_SPEED_STEPS_PER_S
        } else {
            requested.min(MAX_SPEED_STEPS_PER_S)
        };
        let accel_units = match self.table.get(&ct::ACCELERATION) {
            0 => i32::from(MAX_ACCEL_UNITS),
            units => units,
        };
        Some(Drive {
            goal: self.tracked_goal(),
            offset: self.homing_offset(),
            max_speed: max_speed.min(self.response.max_speed_steps_per_s),
            max_accel: (f64::from(accel_units) * ACCEL_STEPS_PER_S2_PER_UNIT).min(self.response.max_accel_steps_per_s2),
        })
    }

    /// Signed load in 0.1 % units, capped by Torque_Limit; full while an overload is forced;
    /// against an obstacle or a hand, rising with how far the goal lies from where it holds.
    fn load(&self, forced: ServoError) -> f64 {
        if forced.contains(ServoError::OVERLOAD) {
            return FULL_LOAD.copysign(self.motion.velocity());
        }
        if self.drive().is_none() {
            return 0.0;
        }
        let cap = f64::from(self.table.get(&ct::TORQUE_LIMIT)).min(FULL_LOAD);
        if self.hand_load != 0.0 {
            return self.hand_load.abs().min(cap).copysign(self.hand_load);
        }
        let pushing = self.hindrance.pushing();
        if pushing != 0.0 {
            return (pushing.abs() * LOAD_PER_BLOCKED_STEP).min(cap).copysign(pushing);
        }
        let max_accel = f64::from(MAX_ACCEL_UNITS) * ACCEL_STEPS_PER_S2_PER_UNIT;
        let accel = self.motion.acceleration();
        let velocity = self.motion.velocity();
        let magnitude =
            accel.abs() / max_accel * LOAD_AT_MAX_ACCEL + velocity.abs() / MAX_SPEED_STEPS_PER_S * LOAD_AT_MAX_SPEED;
        let direction = if accel != 0.0 { accel } else { velocity };
        magnitude.min(cap).copysign(direction)
    }

    /// Signed current counts drawn for a given load.
    fn current_for(&self, load: f64) -> f64 {
        if self.drive().is_none() && load == 0.0 {
            return 0.0;
        }
        let magnitude = HOLDING_CURRENT_COUNTS + load.abs() / FULL_LOAD * STALL_CURRENT_COUNTS;
        magnitude.copysign(load)
    }
}

/// Rounds to the nearest integer register value (saturating).
fn round(value: f64) -> i32 {
    value.round() as i32
}
