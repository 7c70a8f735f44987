//! Everything the twin refuses or fails at, with messages a caller can act on.

use thiserror::Error;

use fakesim_arm::quote::Quoted;
use fakesim_arm::values::ValueError;

/// Why a twin call was refused or failed. A refused call changed nothing.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TwinError {
    /// A name no model object can carry (it holds a NUL byte).
    #[error("{kind} name {name:?} contains a NUL byte")]
    InvalidName {
        /// What kind of thing was looked up.
        kind: &'static str,
        /// The name as given.
        name: String,
    },
    /// A name or value that does not fit (unknown names, wrong lengths, non-finite or
    /// out-of-range values).
    #[error(transparent)]
    Value(#[from] ValueError),
    /// A count outside what a verb accepts.
    #[error("{what}={value} outside [{lo}, {hi}]")]
    CountOutOfRange {
        /// The parameter.
        what: &'static str,
        /// The value as given.
        value: u64,
        /// Smallest accepted.
        lo: u64,
        /// Largest accepted.
        hi: u64,
    },
    /// A control period outside what a tick may last.
    #[error("period_s={period_s} outside [{lo}, {hi}] s (from one physics step to {hi} s; 0 is the model's tick)")]
    PeriodOutOfRange {
        /// The period as given (s).
        period_s: f64,
        /// Shortest: one physics step (s).
        lo: f64,
        /// Longest (s).
        hi: f64,
    },
    /// A saved state that belongs to another model.
    #[error("state {} was saved against another model; save it again", Quoted(.name))]
    StaleState {
        /// The state's name.
        name: String,
    },
    /// An image size the offscreen buffer cannot hold.
    #[error("image size {width}x{height} outside 1x1..{max_width}x{max_height}")]
    ImageSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// Largest width.
        max_width: u32,
        /// Largest height.
        max_height: u32,
    },
    /// Rendering cannot work on this machine (no EGL device, for example); physics still works.
    #[error("rendering unavailable: {0}")]
    RenderUnavailable(String),
    /// Too many frames wait for the render threads to let a call's frames in; nothing was
    /// drawn, nor run.
    #[error(
        "the renderer is busy: {queued} frames wait for it or are reserved (at most {capacity}); retry in {retry_after_ms} ms"
    )]
    RenderBusy {
        /// Frames waiting or reserved.
        queued: usize,
        /// Most frames that may wait or be reserved.
        capacity: usize,
        /// When there should be room, at the mean drawing time (ms).
        retry_after_ms: u64,
    },
    /// The call's deadline passed before its images were drawn; they were not drawn.
    #[error("the call's deadline passed before its images were drawn")]
    DeadlinePassed,
    /// A camera's backdrop photo cannot be read, or does not fit the frame asked for.
    #[error("{0}")]
    Backdrop(String),
    /// The scene file could not be loaded.
    #[error("cannot load scene: {0}")]
    Scene(String),
    /// A twin thread panicked running the call; the thread caught it and keeps serving.
    #[error("the twin's {thread} thread failed running this call ({message}); it keeps serving")]
    Fault {
        /// `physics`, `render` or `preview`.
        thread: &'static str,
        /// The panic's message.
        message: String,
    },
    /// The twin's thread is gone (the daemon is shutting down).
    #[error("the twin has stopped")]
    Stopped,
}
