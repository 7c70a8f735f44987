//! How options whose flags take text (addresses, names, targets) are read from and written to
//! the config file's values, and `[lock-task]` as the three values of its flag.

use fakesim_episode::tasks::TaskRef;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::PathBuf;
use std::str::FromStr;

/// A file named for a camera: `CAMERA=FILE` on the command line, `camera = "file"` in a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CameraFile {
    /// The camera's name.
    pub camera: String,
    /// The file.
    pub file: PathBuf,
}

impl FromStr for CameraFile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.split_once('=') {
            Some((camera, file)) if !camera.is_empty() && !file.is_empty() => Ok(CameraFile {
                camera: camera.to_owned(),
                file: PathBuf::from(file),
            }),
            _ => Err(format!("{text:?} is not CAMERA=FILE (e.g. agentview=photo.png)")),
        }
    }
}

/// A table of camera = "file" as the values of a repeated `CAMERA=FILE` flag.
pub fn camera_file_table<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<CameraFile>>, D::Error> {
    Ok(
        Option::<BTreeMap<String, PathBuf>>::deserialize(deserializer)?.map(|table| {
            table
                .into_iter()
                .map(|(camera, file)| CameraFile { camera, file })
                .collect()
        }),
    )
}

/// A value given as text in the file, parsed as its flag parses it.
pub fn parsed<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    Option::<String>::deserialize(deserializer)?
        .map(|text| text.parse().map_err(|e| D::Error::custom(format!("{text:?}: {e:#}"))))
        .transpose()
}

/// A value written as its flag spells it.
pub fn shown<S: Serializer, T: Display>(value: &Option<T>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => serializer.collect_str(value),
        None => serializer.serialize_none(),
    }
}

/// `[lock-task]` (suite, task-index, init-state-index) as the three values of `--lock-task`.
pub fn lock_task_table<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    Ok(Option::<TaskRef>::deserialize(deserializer)?.map(|task| {
        vec![
            task.suite,
            task.task_index.to_string(),
            task.init_state_index.to_string(),
        ]
    }))
}
