//! Errors of the emulator library.

/// Everything that can go wrong while setting up or serving a virtual bus.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// The pseudo-terminal could not be created or configured.
    #[error("pseudo-terminal {step}: {source}")]
    Pty {
        /// Which step failed (e.g. "open master").
        step: &'static str,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The symbolic link to the pseudo-terminal could not be made or moved.
    #[error("link {}: {source}", path.display())]
    Link {
        /// The link's path.
        path: std::path::PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// Reading from or writing to the transport failed.
    #[error("transport i/o: {0}")]
    Io(#[from] std::io::Error),
    /// No emulated servo has this id.
    #[error("no emulated servo with id {0}")]
    NoSuchServo(u8),
    /// The serving task panicked or was aborted.
    #[error("serving task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// A register access outside the 256-byte control table.
    #[error("address range {addr}+{len} lies outside the control table")]
    OutOfTable {
        /// Start address.
        addr: u8,
        /// Number of bytes.
        len: usize,
    },
    /// The calibration to emulate cannot be loaded or held by servos.
    #[error("calibration to emulate: {0}")]
    Calibration(#[from] feetech::calibration::CalibrationError),
    /// `--unplug-at S..E` without `--link`: the new device would have a new name.
    #[error(
        "--unplug-at {}..{}: plugging the adapter in again needs --link PATH (the new pseudo-terminal gets a new /dev/pts name; the link is the path a driver reopens)",
        at.as_secs_f64(),
        replug_at.as_secs_f64()
    )]
    ReplugWithoutLink {
        /// Unplugged at, since start.
        at: std::time::Duration,
        /// Plugged in again at, since start.
        replug_at: std::time::Duration,
    },
    /// A joint offset, obstacle or slip names a joint the arm does not have.
    #[error("--{flag} {label}: no such joint in the calibration")]
    UnknownJoint {
        /// The option that named it (without the dashes).
        flag: &'static str,
        /// The joint as given.
        label: String,
    },
}
