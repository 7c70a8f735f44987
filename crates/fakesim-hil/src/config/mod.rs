//! The daemon's configuration: the options (each a flag and a config-file key, defined once),
//! the config file, the listing of every setting, and the settings resolved from them.

mod file;
mod listen;
mod options;
mod settings;
mod sources;
mod table;
mod text;

pub use listen::ListenAddr;
pub use options::{AccessOptions, ArmOptions, DaemonOptions, ShadowOptions, TwinOptions, defaults};
pub use settings::Settings;
pub use sources::TableSource;
pub use table::{Setting, check_manual, listing, markdown, with_defaults};
pub use text::CameraFile;
