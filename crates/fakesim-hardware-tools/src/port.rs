//! Serial ports: finding the USB adapters and opening one, with an explanation of what to
//! check when it fails.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use feetech::bus::{Bus, BusConfig, BusError};
use tokio_serial::{SerialPortType, SerialStream};

/// USB-serial adapters used on SO-101 arms: (vendor, product, name).
const KNOWN_ADAPTERS: [(u16, u16, &str); 2] = [
    (0x1a86, 0x55d3, "CH343, e.g. Waveshare Bus Servo Adapter"),
    (0x1a86, 0x7523, "CH340, e.g. Feetech URT-1"),
];

/// Where the stable per-adapter names live.
const BY_ID_DIR: &str = "/dev/serial/by-id";

/// Device name prefixes of USB-serial adapters (CDC-ACM and usb-serial drivers).
const USB_TTY_PREFIXES: [&str; 2] = ["ttyACM", "ttyUSB"];

/// A serial port found on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundPort {
    /// Device path to open.
    pub path: PathBuf,
    /// What is known about it (USB ids, adapter, serial number, stable name).
    pub description: String,
}

/// The USB serial ports of this machine, sorted by path. Uses sysfs (no libudev needed) and
/// falls back to the `ttyACM*` / `ttyUSB*` device names in `/dev`.
pub fn list_ports() -> Vec<FoundPort> {
    let aliases = by_id_aliases();
    let mut ports = usb_ports_from_sysfs().unwrap_or_else(usb_ports_from_dev);
    for port in &mut ports {
        if let Some(alias) = std::fs::canonicalize(&port.path).ok().and_then(|p| aliases.get(&p)) {
            port.description.push_str(&format!(", stable name {}", alias.display()));
        }
    }
    ports.sort_by(|a, b| a.path.cmp(&b.path));
    ports
}

/// USB ports as the serialport crate enumerates them from `/sys/class/tty`; `None` when
/// that is not possible here.
fn usb_ports_from_sysfs() -> Option<Vec<FoundPort>> {
    // The enumeration panics when /sys/class/tty is missing (some containers).
    if !Path::new("/sys/class/tty").is_dir() {
        return None;
    }
    let ports = tokio_serial::available_ports()
        .map_err(|error| tracing::debug!(%error, "cannot enumerate serial ports"))
        .ok()?;
    Some(
        ports
            .into_iter()
            .filter_map(|port| match port.port_type {
                SerialPortType::UsbPort(usb) => Some(FoundPort {
                    path: PathBuf::from(port.port_name),
                    description: describe_usb(usb.vid, usb.pid, usb.product.as_deref(), usb.serial_number.as_deref()),
                }),
                _ => None,
            })
            .collect(),
    )
}

/// `USB 1a86:55d3 (CH343 ...), serial 5A46...`.
fn describe_usb(vid: u16, pid: u16, product: Option<&str>, serial: Option<&str>) -> String {
    let adapter = KNOWN_ADAPTERS
        .iter()
        .find(|(v, p, _)| *v == vid && *p == pid)
        .map(|(_, _, name)| *name)
        .or(product)
        .unwrap_or("unknown adapter");
    let mut text = format!("USB {vid:04x}:{pid:04x} ({adapter})");
    if let Some(serial) = serial {
        text.push_str(&format!(", serial {serial}"));
    }
    text
}

/// `/dev/ttyACM*` and `/dev/ttyUSB*`.
fn usb_ports_from_dev() -> Vec<FoundPort> {
    let Ok(entries) = std::fs::read_dir("/dev") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            USB_TTY_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        })
        .map(|entry| FoundPort {
            path: entry.path(),
            description: "USB serial".to_owned(),
        })
        .collect()
}

/// Device path -> its `/dev/serial/by-id/...` name.
fn by_id_aliases() -> BTreeMap<PathBuf, PathBuf> {
    let Ok(entries) = std::fs::read_dir(BY_ID_DIR) else {
        return BTreeMap::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| Some((std::fs::canonicalize(entry.path()).ok()?, entry.path())))
        .collect()
}

/// Opens the servo bus on `path` at `baud`; a failure explains what to check.
pub fn open_bus(path: &Path, baud: u32, config: BusConfig) -> anyhow::Result<Bus<SerialStream>> {
    Bus::open(path, baud, config).map_err(|error| match error {
        BusError::PortGone(io) => explain_open_failure(path, &io),
        other => anyhow!("cannot open {}: {other}", path.display()),
    })
}

/// Turns the error of opening `path` into a message naming the port and what to check.
fn explain_open_failure(path: &Path, error: &io::Error) -> anyhow::Error {
    let port = path.display();
    let message = error.to_string();
    if !path.exists() {
        return anyhow!(
            "{port} does not exist. Is the adapter plugged in? `fakesim-hil scan` lists the serial \
             ports found (also `ls /dev/ttyACM* /dev/ttyUSB* {BY_ID_DIR}`). A CH340 adapter that \
             appears and vanishes at once is being taken by brltty (see udev/README.md)."
        );
    }
    if error.kind() == io::ErrorKind::PermissionDenied {
        return anyhow!(
            "permission denied opening {port} ({message}). Add yourself to the dialout group \
             (`sudo usermod -aG dialout $USER`, then log out and back in) or install \
             udev/99-fakesim-hil-so101.rules (see udev/README.md)."
        );
    }
    // Opening an existing tty that another process holds exclusively fails with EBUSY, which
    // the serial library reports as "not found".
    if error.kind() == io::ErrorKind::NotFound || message.to_lowercase().contains("busy") {
        return anyhow!(
            "{port} is busy ({message}): another program holds it. ModemManager probes new serial \
             ports for about 20 s after they appear (the udev rules in udev/ make it ignore the \
             servo adapters), brltty grabs CH340 adapters, or another fakesim-hil or LeRobot \
             process is using the arm. `fuser -v {port}` shows who has it open."
        );
    }
    anyhow!("cannot open {port}: {message}. Check that it is a serial port (a USB adapter or a pseudo-terminal).")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_adapters_are_named() {
        assert_eq!(
            describe_usb(0x1a86, 0x55d3, Some("USB Single Serial"), Some("5A46082515")),
            "USB 1a86:55d3 (CH343, e.g. Waveshare Bus Servo Adapter), serial 5A46082515"
        );
        assert_eq!(
            describe_usb(0x0403, 0x6001, Some("FT232R"), None),
            "USB 0403:6001 (FT232R)"
        );
    }

    #[test]
    fn open_failures_name_the_port_and_the_remedy() {
        let missing = Path::new("/dev/fakesim-no-such-port");
        let error = explain_open_failure(missing, &io::Error::from(io::ErrorKind::NotFound)).to_string();
        assert!(error.starts_with("/dev/fakesim-no-such-port does not exist"), "{error}");

        let existing = Path::new("/dev/null");
        let denied = explain_open_failure(existing, &io::Error::from(io::ErrorKind::PermissionDenied)).to_string();
        assert!(denied.contains("/dev/null") && denied.contains("dialout"), "{denied}");

        let busy = explain_open_failure(existing, &io::Error::other("Device or resource busy")).to_string();
        assert!(
            busy.contains("/dev/null is busy") && busy.contains("ModemManager"),
            "{busy}"
        );
    }
}
