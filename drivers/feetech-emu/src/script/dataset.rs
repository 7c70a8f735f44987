//! Replaying the `action` column of one episode of a LeRobotDataset (v2.1 or v3.0 layout) at
//! the dataset's fps: `meta/info.json` gives the fps and the action names, the parquet files
//! under `data/` the frames (every file is read, as v3.0 keeps several episodes in one file).

use std::fs::File;
use std::path::{Path, PathBuf};

use feetech::calibration::Calibration;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use parquet::schema::types::Type;

use super::waypoints::joint_label;
use super::{Script, ScriptError, ScriptUnits};

/// The columns read from each data file.
const EPISODE: &str = "episode_index";
const FRAME: &str = "frame_index";
const ACTION: &str = "action";

/// Fastest frame rate accepted from `info.json`.
const MAX_FPS: f64 = 1000.0;

/// Builds the script replaying episode `episode` of the dataset at `root`.
pub(crate) fn load(
    root: &Path,
    episode: u64,
    calibration: &Calibration,
    units: ScriptUnits,
) -> Result<Script, ScriptError> {
    let refuse = |path: &Path, reason: String| ScriptError::Dataset {
        path: path.display().to_string(),
        reason,
    };
    let info_path = root.join("meta").join("info.json");
    let info = std::fs::read_to_string(&info_path).map_err(|source| ScriptError::Io {
        path: info_path.display().to_string(),
        source,
    })?;
    let (fps, names) = read_info(&info).map_err(|reason| refuse(&info_path, reason))?;
    let mut motors = Vec::with_capacity(names.len());
    for name in &names {
        let label = joint_label(name);
        let motor = calibration
            .motors
            .get(label)
            .ok_or_else(|| ScriptError::UnknownJoint(name.clone()))?;
        motors.push((label, *motor));
    }
    let mut rows: Vec<(i64, Vec<f64>)> = Vec::new();
    for file in parquet_files(&root.join("data")).map_err(|e| refuse(root, e.to_string()))? {
        // The parquet reader is not ours: a file it trips over is refused, not a crash.
        let read = std::panic::catch_unwind(|| read_episode(&file, episode));
        let found = read.unwrap_or_else(|_| Err("the parquet reader failed on this file".to_owned()));
        rows.extend(found.map_err(|reason| refuse(&file, reason))?);
    }
    if rows.is_empty() {
        return Err(refuse(root, format!("no frame of episode {episode}")));
    }
    rows.sort_by_key(|(frame, _)| *frame);
    let mut times = Vec::with_capacity(rows.len());
    let mut frames = Vec::with_capacity(rows.len());
    for (index, (_, action)) in rows.iter().enumerate() {
        if action.len() != motors.len() {
            return Err(refuse(
                root,
                format!("an action of {} values for {} names", action.len(), motors.len()),
            ));
        }
        let frame = motors
            .iter()
            .zip(action)
            .map(|((label, motor), value)| units.steps(label, motor, *value))
            .collect::<Result<Vec<f64>, _>>()?;
        times.push(index as f64 / fps);
        frames.push(frame);
    }
    let ids = motors.iter().map(|(_, motor)| motor.id).collect();
    Ok(Script::track(ids, times, frames, false))
}

/// The fps and the action names from `meta/info.json`.
fn read_info(text: &str) -> Result<(f64, Vec<String>), String> {
    let info: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let fps = info
        .get("fps")
        .and_then(serde_json::Value::as_f64)
        .filter(|fps| *fps > 0.0 && *fps <= MAX_FPS)
        .ok_or("no fps in (0, 1000]")?;
    let names = info
        .pointer("/features/action/names")
        .ok_or("no features.action.names")?;
    // v2.0 datasets wrap the list as {"motors": [...]}.
    let list = match names {
        serde_json::Value::Object(map) if map.len() == 1 => map.values().next(),
        other => Some(other),
    };
    let names = list
        .and_then(serde_json::Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .filter(|names| !names.is_empty())
        .ok_or("features.action.names is not a list of names")?;
    Ok((fps, names))
}

/// Every `.parquet` file under `dir`, in path order.
fn parquet_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The (frame index, action) rows of `episode` in one data file.
fn read_episode(path: &Path, episode: u64) -> Result<Vec<(i64, Vec<f64>)>, String> {
    let mut rows = Vec::new();
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = SerializedFileReader::new(file).map_err(|e| e.to_string())?;
    let schema = reader.metadata().file_metadata().schema();
    let wanted: Vec<_> = schema
        .get_fields()
        .iter()
        .filter(|field| [EPISODE, FRAME, ACTION].contains(&field.name()))
        .cloned()
        .collect();
    if !wanted.iter().any(|f| f.name() == ACTION) {
        return Err(format!("no `{ACTION}` column"));
    }
    let projection = Type::group_type_builder(schema.name())
        .with_fields(wanted)
        .build()
        .map_err(|e| e.to_string())?;
    let episode = i64::try_from(episode).map_err(|e| e.to_string())?;
    for (position, row) in reader
        .get_row_iter(Some(projection))
        .map_err(|e| e.to_string())?
        .enumerate()
    {
        let row = row.map_err(|e| e.to_string())?;
        let (mut this_episode, mut frame, mut action) = (0, None, None);
        for (name, field) in row.get_column_iter() {
            match name.as_str() {
                EPISODE => this_episode = integer(field).ok_or(format!("`{EPISODE}` is not an integer"))?,
                FRAME => frame = integer(field),
                _ => action = Some(numbers(field).ok_or(format!("`{ACTION}` is not a list of numbers"))?),
            }
        }
        if this_episode == episode
            && let Some(action) = action
        {
            rows.push((frame.unwrap_or(i64::try_from(position).unwrap_or(i64::MAX)), action));
        }
    }
    Ok(rows)
}

/// An integer column's value.
fn integer(field: &Field) -> Option<i64> {
    match field {
        Field::Int(v) => Some(i64::from(*v)),
        Field::Long(v) => Some(*v),
        Field::UInt(v) => Some(i64::from(*v)),
        Field::ULong(v) => i64::try_from(*v).ok(),
        _ => None,
    }
}

/// A list column of floats.
fn numbers(field: &Field) -> Option<Vec<f64>> {
    let Field::ListInternal(list) = field else {
        return None;
    };
    list.elements()
        .iter()
        .map(|element| match element {
            Field::Float(v) => Some(f64::from(*v)),
            Field::Double(v) => Some(*v),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::VirtualSo101;

    #[test]
    fn info_gives_the_fps_and_the_action_names_of_either_layout() {
        let v3 =
            r#"{"fps": 30, "features": {"action": {"dtype": "float32", "names": ["elbow_flex.pos", "gripper.pos"]}}}"#;
        assert_eq!(
            read_info(v3).unwrap(),
            (30.0, vec!["elbow_flex.pos".to_owned(), "gripper.pos".to_owned()])
        );
        let v2 = r#"{"fps": 50, "features": {"action": {"names": {"motors": ["gripper"]}}}}"#;
        assert_eq!(read_info(v2).unwrap(), (50.0, vec!["gripper".to_owned()]));
        for bad in [
            "{",
            r#"{"features": {"action": {"names": ["gripper"]}}}"#,
            r#"{"fps": 0, "features": {"action": {"names": ["gripper"]}}}"#,
            r#"{"fps": 30, "features": {}}"#,
            r#"{"fps": 30, "features": {"action": {"names": []}}}"#,
        ] {
            assert!(read_info(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_dataset_that_cannot_be_replayed_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let calibration = VirtualSo101::calibration();
        let load = |episode| load(dir.path(), episode, &calibration, ScriptUnits::Degrees);
        assert!(matches!(load(0), Err(ScriptError::Io { .. })));
        std::fs::create_dir_all(dir.path().join("meta")).unwrap();
        std::fs::create_dir_all(dir.path().join("data/chunk-000")).unwrap();
        let info = r#"{"fps": 30, "features": {"action": {"names": ["knee.pos"]}}}"#;
        std::fs::write(dir.path().join("meta/info.json"), info).unwrap();
        assert!(matches!(load(0), Err(ScriptError::UnknownJoint(name)) if name == "knee.pos"));
        let info = r#"{"fps": 30, "features": {"action": {"names": ["gripper.pos"]}}}"#;
        std::fs::write(dir.path().join("meta/info.json"), info).unwrap();
        let refused = load(3).unwrap_err().to_string();
        assert!(refused.ends_with("no frame of episode 3"), "{refused}");
        std::fs::write(dir.path().join("data/chunk-000/file-000.parquet"), b"not parquet").unwrap();
        let refused = load(0).unwrap_err().to_string();
        assert!(refused.contains("file-000.parquet"), "{refused}");
    }
}
