//! One constant per STS3215 register, and the list of all of them.

use super::{Access, Area, Register};

/// First RAM address: everything below lives in EEPROM.
pub const FIRST_RAM_ADDRESS: u8 = 40;

/// Builds a register; the area follows from the address.
const fn reg(name: &'static str, address: u8, size: u8, access: Access, sign_bit: Option<u8>) -> Register {
    let area = if address < FIRST_RAM_ADDRESS {
        Area::Eeprom
    } else {
        Area::Ram
    };
    Register {
        name,
        address,
        size,
        access,
        area,
        sign_bit,
    }
}

/// Firmware major version.
pub const FIRMWARE_MAJOR_VERSION: Register = reg("Firmware_Major_Version", 0, 1, Access::Read, None);
/// Firmware minor version.
pub const FIRMWARE_MINOR_VERSION: Register = reg("Firmware_Minor_Version", 1, 1, Access::Read, None);
/// Byte order of 16-bit values (0 = little-endian on STS).
pub const ENDIANNESS: Register = reg("Endianness", 2, 1, Access::Read, None);
/// Model number (777 for the STS3215).
pub const MODEL_NUMBER: Register = reg("Model_Number", 3, 2, Access::Read, None);
/// Servo id (0..=253, factory 1).
pub const ID: Register = reg("ID", 5, 1, Access::ReadWrite, None);
/// Baud rate index (see `BAUD_RATES`).
pub const BAUD_RATE: Register = reg("Baud_Rate", 6, 1, Access::ReadWrite, None);
/// Return delay (reserved on STS; 2 us units on SMS).
pub const RETURN_DELAY_TIME: Register = reg("Return_Delay_Time", 7, 1, Access::ReadWrite, None);
/// 0 = reply only to READ/PING, 1 = reply to everything but broadcasts.
pub const RESPONSE_STATUS_LEVEL: Register = reg("Response_Status_Level", 8, 1, Access::ReadWrite, None);
/// Lower position limit in steps (calibration `range_min`).
pub const MIN_POSITION_LIMIT: Register = reg("Min_Position_Limit", 9, 2, Access::ReadWrite, None);
/// Upper position limit in steps (calibration `range_max`).
pub const MAX_POSITION_LIMIT: Register = reg("Max_Position_Limit", 11, 2, Access::ReadWrite, None);
/// Temperature limit in degrees Celsius.
pub const MAX_TEMPERATURE_LIMIT: Register = reg("Max_Temperature_Limit", 13, 1, Access::ReadWrite, None);
/// Upper input voltage limit in 0.1 V.
pub const MAX_VOLTAGE_LIMIT: Register = reg("Max_Voltage_Limit", 14, 1, Access::ReadWrite, None);
/// Lower input voltage limit in 0.1 V.
pub const MIN_VOLTAGE_LIMIT: Register = reg("Min_Voltage_Limit", 15, 1, Access::ReadWrite, None);
/// Torque limit copied to `TORQUE_LIMIT` at power-on, 0.1 %.
pub const MAX_TORQUE_LIMIT: Register = reg("Max_Torque_Limit", 16, 2, Access::ReadWrite, None);
/// Special function bits (bit 4 = multi-turn feedback).
pub const PHASE: Register = reg("Phase", 18, 1, Access::ReadWrite, None);
/// Status bits that release torque.
pub const UNLOADING_CONDITION: Register = reg("Unloading_Condition", 19, 1, Access::ReadWrite, None);
/// Status bits that flash the LED.
pub const LED_ALARM_CONDITION: Register = reg("LED_Alarm_Condition", 20, 1, Access::ReadWrite, None);
/// Position loop proportional gain.
pub const P_COEFFICIENT: Register = reg("P_Coefficient", 21, 1, Access::ReadWrite, None);
/// Position loop derivative gain.
pub const D_COEFFICIENT: Register = reg("D_Coefficient", 22, 1, Access::ReadWrite, None);
/// Position loop integral gain.
pub const I_COEFFICIENT: Register = reg("I_Coefficient", 23, 1, Access::ReadWrite, None);
/// Minimum output at start-up, 0.1 %.
pub const MINIMUM_STARTUP_FORCE: Register = reg("Minimum_Startup_Force", 24, 2, Access::ReadWrite, None);
/// Clockwise dead zone in steps.
pub const CW_DEAD_ZONE: Register = reg("CW_Dead_Zone", 26, 1, Access::ReadWrite, None);
/// Counter-clockwise dead zone in steps.
pub const CCW_DEAD_ZONE: Register = reg("CCW_Dead_Zone", 27, 1, Access::ReadWrite, None);
/// Over-current threshold, 6.5 mA per count.
pub const PROTECTION_CURRENT: Register = reg("Protection_Current", 28, 2, Access::ReadWrite, None);
/// Angular resolution multiplier.
pub const ANGULAR_RESOLUTION: Register = reg("Angular_Resolution", 30, 1, Access::ReadWrite, None);
/// Position correction: present = actual - offset (sign bit 11).
pub const HOMING_OFFSET: Register = reg("Homing_Offset", 31, 2, Access::ReadWrite, Some(11));
/// 0 position, 1 wheel, 2 PWM, 3 step.
pub const OPERATING_MODE: Register = reg("Operating_Mode", 33, 1, Access::ReadWrite, None);
/// Torque after overload protection trips, %.
pub const PROTECTIVE_TORQUE: Register = reg("Protective_Torque", 34, 1, Access::ReadWrite, None);
/// Time above `OVERLOAD_TORQUE` before protection trips, 10 ms.
pub const PROTECTION_TIME: Register = reg("Protection_Time", 35, 1, Access::ReadWrite, None);
/// Overload threshold, %.
pub const OVERLOAD_TORQUE: Register = reg("Overload_Torque", 36, 1, Access::ReadWrite, None);
/// Speed loop proportional gain (wheel mode).
pub const VELOCITY_P_COEFFICIENT: Register = reg(
    "Velocity_closed_loop_P_proportional_coefficient",
    37,
    1,
    Access::ReadWrite,
    None,
);
/// Time above the protection current before tripping, 10 ms.
pub const OVER_CURRENT_PROTECTION_TIME: Register = reg("Over_Current_Protection_Time", 38, 1, Access::ReadWrite, None);
/// Speed loop integral gain (wheel mode).
pub const VELOCITY_I_COEFFICIENT: Register = reg(
    "Velocity_closed_loop_I_integral_coefficient",
    39,
    1,
    Access::ReadWrite,
    None,
);
/// 0 off, 1 on, 128 = make the current position read 2048.
pub const TORQUE_ENABLE: Register = reg("Torque_Enable", 40, 1, Access::ReadWrite, None);
/// Acceleration, about 100 steps/s^2 per unit (0 = maximum).
pub const ACCELERATION: Register = reg("Acceleration", 41, 1, Access::ReadWrite, None);
/// Target position in steps (sign bit 15).
pub const GOAL_POSITION: Register = reg("Goal_Position", 42, 2, Access::ReadWrite, Some(15));
/// Move time (PWM duty in mode 2).
pub const GOAL_TIME: Register = reg("Goal_Time", 44, 2, Access::ReadWrite, None);
/// Speed limit, 50 steps/s per unit (sign bit 15; 0 = maximum).
pub const GOAL_VELOCITY: Register = reg("Goal_Velocity", 46, 2, Access::ReadWrite, Some(15));
/// Torque limit, 0.1 %.
pub const TORQUE_LIMIT: Register = reg("Torque_Limit", 48, 2, Access::ReadWrite, None);
/// EEPROM lock: 0 = EEPROM writes persist, 1 = locked.
pub const LOCK: Register = reg("Lock", 55, 1, Access::ReadWrite, None);
/// Present position in steps (sign bit 15).
pub const PRESENT_POSITION: Register = reg("Present_Position", 56, 2, Access::Read, Some(15));
/// Present speed, 50 steps/s per unit (sign bit 15).
pub const PRESENT_VELOCITY: Register = reg("Present_Velocity", 58, 2, Access::Read, Some(15));
/// Present load, 0.1 % of PWM duty (sign bit 10).
pub const PRESENT_LOAD: Register = reg("Present_Load", 60, 2, Access::Read, Some(10));
/// Input voltage in 0.1 V.
pub const PRESENT_VOLTAGE: Register = reg("Present_Voltage", 62, 1, Access::Read, None);
/// Temperature in degrees Celsius.
pub const PRESENT_TEMPERATURE: Register = reg("Present_Temperature", 63, 1, Access::Read, None);
/// 1 while a REG_WRITE waits for ACTION.
pub const ASYNC_WRITE_FLAG: Register = reg("Async_Write_Flag", 64, 1, Access::Read, None);
/// Error bits (same layout as a status packet's ERROR byte).
pub const STATUS: Register = reg("Status", 65, 1, Access::Read, None);
/// 1 while the servo is moving.
pub const MOVING: Register = reg("Moving", 66, 1, Access::Read, None);
/// Goal position currently tracked (sign bit 15).
pub const PRESENT_GOAL_POSITION: Register = reg("Present_Goal_Position", 67, 2, Access::Read, Some(15));
/// Present current, 6.5 mA per count (sign bit 15).
pub const PRESENT_CURRENT: Register = reg("Present_Current", 69, 2, Access::Read, Some(15));
/// Speed above which `MOVING` is set (factory).
pub const MOVING_VELOCITY_THRESHOLD: Register = reg("Moving_Velocity_Threshold", 80, 1, Access::ReadWrite, None);
/// Control period in ms (factory).
pub const DTS: Register = reg("DTs", 81, 1, Access::ReadWrite, None);
/// Speed unit factor (factory).
pub const VELOCITY_UNIT_FACTOR: Register = reg("Velocity_Unit_factor", 82, 1, Access::ReadWrite, None);
/// Hardware timing in ns (factory).
pub const HTS: Register = reg("Hts", 83, 1, Access::ReadWrite, None);
/// Maximum speed (factory).
pub const MAXIMUM_VELOCITY_LIMIT: Register = reg("Maximum_Velocity_Limit", 84, 1, Access::ReadWrite, None);
/// Maximum acceleration (factory; LeRobot writes 254).
pub const MAXIMUM_ACCELERATION: Register = reg("Maximum_Acceleration", 85, 1, Access::ReadWrite, None);
/// Acceleration multiplier (factory).
pub const ACCELERATION_MULTIPLIER: Register = reg("Acceleration_Multiplier", 86, 1, Access::ReadWrite, None);

/// Every register, in address order.
pub const ALL: &[Register] = &[
    FIRMWARE_MAJOR_VERSION,
    FIRMWARE_MINOR_VERSION,
    ENDIANNESS,
    MODEL_NUMBER,
    ID,
    BAUD_RATE,
    RETURN_DELAY_TIME,
    RESPONSE_STATUS_LEVEL,
    MIN_POSITION_LIMIT,
    MAX_POSITION_LIMIT,
    MAX_TEMPERATURE_LIMIT,
    MAX_VOLTAGE_LIMIT,
    MIN_VOLTAGE_LIMIT,
    MAX_TORQUE_LIMIT,
    PHASE,
    UNLOADING_CONDITION,
    LED_ALARM_CONDITION,
    P_COEFFICIENT,
    D_COEFFICIENT,
    I_COEFFICIENT,
    MINIMUM_STARTUP_FORCE,
    CW_DEAD_ZONE,
    CCW_DEAD_ZONE,
    PROTECTION_CURRENT,
    ANGULAR_RESOLUTION,
    HOMING_OFFSET,
    OPERATING_MODE,
    PROTECTIVE_TORQUE,
    PROTECTION_TIME,
    OVERLOAD_TORQUE,
    VELOCITY_P_COEFFICIENT,
    OVER_CURRENT_PROTECTION_TIME,
    VELOCITY_I_COEFFICIENT,
    TORQUE_ENABLE,
    ACCELERATION,
    GOAL_POSITION,
    GOAL_TIME,
    GOAL_VELOCITY,
    TORQUE_LIMIT,
    LOCK,
    PRESENT_POSITION,
    PRESENT_VELOCITY,
    PRESENT_LOAD,
    PRESENT_VOLTAGE,
    PRESENT_TEMPERATURE,
    ASYNC_WRITE_FLAG,
    STATUS,
    MOVING,
    PRESENT_GOAL_POSITION,
    PRESENT_CURRENT,
    MOVING_VELOCITY_THRESHOLD,
    DTS,
    VELOCITY_UNIT_FACTOR,
    HTS,
    MAXIMUM_VELOCITY_LIMIT,
    MAXIMUM_ACCELERATION,
    ACCELERATION_MULTIPLIER,
];
