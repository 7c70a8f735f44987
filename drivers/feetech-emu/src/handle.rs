//! The cloneable handle tests and tools use to inspect and script the virtual bus while a
//! transport serves it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use feetech::control_table::Register;
use feetech::protocol::frame::Frame;
use tokio_util::sync::CancellationToken;

use crate::bus::{BusState, Reply};
use crate::clock::{Clock, ManualClock, SystemClock};
use crate::config::{EmuConfig, ServoConfig};
use crate::error::EmuError;
use crate::faults::FaultConfig;
use crate::script::{Push, Script};
use crate::servo::Servo;
use crate::write_log::WriteRecord;

/// Shared handle on a virtual servo bus; clones control the same servos.
///
/// Methods that take an id act on every servo with that id (ids may repeat on purpose) and
/// read from the first one; they fail with [`EmuError::NoSuchServo`] when none has it.
#[derive(Debug, Clone)]
pub struct ServoBus {
    state: Arc<Mutex<BusState>>,
    /// Cancelled when the adapter is unplugged; replaced by a fresh token on replug.
    plug: Arc<Mutex<CancellationToken>>,
}

impl ServoBus {
    /// A bus whose motion follows `clock`.
    pub fn new(config: &EmuConfig, clock: Arc<dyn Clock>) -> Self {
        Self {
            state: Arc::new(Mutex::new(BusState::new(config, clock))),
            plug: Arc::new(Mutex::new(CancellationToken::new())),
        }
    }

    /// A bus driven by the wall clock (for serving real drivers).
    pub fn real_time(config: &EmuConfig) -> Self {
        Self::new(config, Arc::new(SystemClock::new()))
    }

    /// A bus driven by simulated time, with the clock that advances it.
    pub fn simulated(config: &EmuConfig) -> (Self, ManualClock) {
        let clock = ManualClock::new();
        (Self::new(config, Arc::new(clock.clone())), clock)
    }

    /// Executes one instruction frame and returns the status packets the servos send back.
    pub fn handle_frame(&self, frame: &Frame) -> Vec<Reply> {
        self.lock().handle_frame(frame)
    }

    /// Ids of the servos on the bus, in bus order.
    pub fn ids(&self) -> Vec<u8> {
        let mut state = self.lock();
        state.sync();
        state.servos.iter().map(Servo::id).collect()
    }

    /// Plugs another servo onto the bus.
    pub fn add_servo(&self, config: &ServoConfig) {
        let mut state = self.lock();
        state.sync();
        state.servos.push(Servo::new(config));
        state.refresh();
    }

    /// Unplugs every servo with this id.
    pub fn remove_servo(&self, id: u8) -> Result<(), EmuError> {
        let mut state = self.lock();
        let before = state.servos.len();
        state.servos.retain(|servo| servo.id() != id);
        if state.servos.len() == before {
            return Err(EmuError::NoSuchServo(id));
        }
        Ok(())
    }

    /// Hand motion: turns the shaft so the servo reads `steps` (wrapped into 0..=4095).
    /// With torque on, the servo then drives back to its goal.
    pub fn set_present_position(&self, id: u8, steps: i32) -> Result<(), EmuError> {
        self.modify(id, |servo| servo.place_present(steps))
    }

    /// Hand motion in raw encoder steps (before the homing offset is subtracted).
    pub fn set_raw_position(&self, id: u8, steps: i32) -> Result<(), EmuError> {
        self.modify(id, |servo| servo.place_raw(steps))
    }

    /// Starts a hand moving the servos by `script` from now on (`None`: the hand lets go): with
    /// torque off they follow it, with torque on they keep to their goals under its load.
    pub fn set_script(&self, script: Option<Script>) {
        self.lock().set_script(script);
    }

    /// A hand pushes a joint over a window of bus time (see [`ServoBus::elapsed`]).
    pub fn push(&self, push: Push) {
        self.lock().push(push);
    }

    /// Bus time: how long the bus has run, on its clock.
    pub fn elapsed(&self) -> Duration {
        self.lock().elapsed()
    }

    /// Changes the supply voltage seen by a servo (0.1 V units).
    pub fn set_supply_voltage(&self, id: u8, decivolts: u8) -> Result<(), EmuError> {
        self.modify(id, |servo| servo.set_supply(decivolts))
    }

    /// Power-cycles a servo: RAM back to defaults, EEPROM as persisted, a lock-up freed
    /// (it locks up again if it still has an overload and is set to lock up).
    pub fn power_cycle(&self, id: u8) -> Result<(), EmuError> {
        self.modify(id, |servo| {
            servo.power_on();
            servo.locked_up = false;
        })
    }

    /// The servo resets (a brown-out the adapter survives): its RAM returns to the power-on
    /// values exactly as after [`ServoBus::power_cycle`] (torque off, Lock 1 as at every
    /// power-on, Goal_Position = present position, Torque_Limit = Max_Torque_Limit, every
    /// other RAM register at its default, a buffered REG_WRITE forgotten); the persisted
    /// EEPROM is unchanged, and unpersisted EEPROM writes are lost. A locked-up servo stays
    /// locked up: only [`ServoBus::power_cycle`] frees it.
    pub fn reset_ram(&self, id: u8) -> Result<(), EmuError> {
        self.modify(id, Servo::power_on)
    }

    /// Whether the servo locked up after an overload ([`FaultConfig::lockup_after_overload`]):
    /// it neither executes instructions nor replies until [`ServoBus::power_cycle`].
    pub fn is_locked_up(&self, id: u8) -> Result<bool, EmuError> {
        self.inspect(id, |servo| servo.locked_up)
    }

    /// Reads a register as the host would see it now.
    pub fn register(&self, id: u8, register: &Register) -> Result<i32, EmuError> {
        self.inspect(id, |servo| servo.register(register))
    }

    /// Reads an EEPROM register as it would read after a power cycle.
    pub fn persisted_register(&self, id: u8, register: &Register) -> Result<i32, EmuError> {
        self.inspect(id, |servo| servo.persisted_register(register))
    }

    /// Reads raw control table bytes.
    pub fn read_bytes(&self, id: u8, addr: u8, len: u8) -> Result<Vec<u8>, EmuError> {
        self.inspect(id, |servo| servo.read(addr, len))?
            .ok_or(EmuError::OutOfTable {
                addr,
                len: usize::from(len),
            })
    }

    /// Present position in steps.
    pub fn present_position(&self, id: u8) -> Result<i32, EmuError> {
        self.register(id, &feetech::control_table::PRESENT_POSITION)
    }

    /// The faults injected now.
    pub fn faults(&self) -> FaultConfig {
        self.lock().faults.clone()
    }

    /// Replaces the injected faults.
    pub fn set_faults(&self, faults: FaultConfig) {
        self.update_faults(|current| *current = faults);
    }

    /// Changes the injected faults in place.
    pub fn update_faults(&self, change: impl FnOnce(&mut FaultConfig)) {
        let mut state = self.lock();
        state.sync();
        change(&mut state.faults);
        state.refresh();
    }

    /// Every write the servos executed, oldest first (the last 100 000).
    pub fn write_log(&self) -> Vec<WriteRecord> {
        self.lock().writes.iter().cloned().collect()
    }

    /// Forgets the logged writes.
    pub fn clear_write_log(&self) {
        self.lock().writes.clear();
    }

    /// How many logged writes to servo `id` touched its EEPROM area.
    pub fn eeprom_writes(&self, id: u8) -> usize {
        self.lock()
            .writes
            .iter()
            .filter(|record| record.id == id && record.touches_eeprom())
            .count()
    }

    /// Whether received bytes are echoed back (cheaper than cloning [`FaultConfig`]).
    pub(crate) fn echoes(&self) -> bool {
        self.lock().faults.echo
    }

    /// Whether replies are delayed by their wire time and the servo's return delay.
    pub fn wire_timing(&self) -> bool {
        self.lock().wire_timing
    }

    /// Turns wire timing on or off.
    pub fn set_wire_timing(&self, enabled: bool) {
        self.lock().wire_timing = enabled;
    }

    /// Line rate the host talks at.
    pub fn baud(&self) -> u32 {
        self.lock().baud
    }

    /// Changes the host line rate (servos set to another rate stop hearing the host). On a
    /// pseudo-terminal the rate the driver configures replaces it before every frame.
    pub fn set_baud(&self, baud: u32) {
        self.lock().baud = baud;
    }

    /// The port goes away (adapter unplugged): the serving transport closes. The servos keep
    /// their state (they keep power); see [`ServoBus::replug`].
    pub fn unplug(&self) {
        self.plug_token().cancel();
    }

    /// After [`ServoBus::unplug`], the adapter is plugged in again: the bus may be served anew
    /// (on a new transport). Does nothing while the bus is plugged in.
    pub fn replug(&self) {
        let mut plug = self.plug.lock().unwrap_or_else(PoisonError::into_inner);
        if plug.is_cancelled() {
            *plug = CancellationToken::new();
        }
    }

    /// Whether the adapter is unplugged now ([`ServoBus::unplug`] and no replug since).
    pub fn is_unplugged(&self) -> bool {
        self.plug_token().is_cancelled()
    }

    /// The token of the current plug-in: a transport serves until it is cancelled, so a
    /// replug does not revive a transport served before the unplug.
    pub(crate) fn plug_token(&self) -> CancellationToken {
        self.plug.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn lock(&self) -> MutexGuard<'_, BusState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn inspect<T>(&self, id: u8, read: impl FnOnce(&Servo) -> T) -> Result<T, EmuError> {
        let mut state = self.lock();
        state.sync();
        state
            .servos
            .iter()
            .find(|servo| servo.id() == id)
            .map(read)
            .ok_or(EmuError::NoSuchServo(id))
    }

    fn modify(&self, id: u8, change: impl Fn(&mut Servo)) -> Result<(), EmuError> {
        let mut state = self.lock();
        state.sync();
        let mut found = false;
        for servo in state.servos.iter_mut().filter(|servo| servo.id() == id) {
            change(servo);
            found = true;
        }
        state.refresh();
        if found { Ok(()) } else { Err(EmuError::NoSuchServo(id)) }
    }
}
