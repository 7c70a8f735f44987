//! LeRobotDataset episodes (format v3.0, and v2.1's one file per episode) as recordings.
//!
//! `lerobot-record` stores, per frame `t` at the dataset's fps, `observation.state` read
//! *before* frame `t`'s action is sent and `action` (for teleoperation the leader's reading,
//! before any clipping): so `action[t]` is answered by `state[t+1]` or later, not by
//! `state[t]`. A frame becomes a reading at its timestamp and a goal written just after it.

use super::{Units, read_error};
use crate::error::IdentifyError;
use crate::recording::Recording;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest `meta/info.json` read (bytes).
const MAX_INFO_BYTES: u64 = 4 << 20;
/// Most parquet files under `data/` read.
const MAX_FILES: usize = 10_000;

/// One frame: timestamp, state, action (LeRobot units).
type Frame = (f64, [f64; 6], [f64; 6]);

/// Reads episodes of the dataset at `root` (every one when `episodes` is empty).
pub fn read(root: &Path, episodes: &[u64], units: &Units) -> Result<Vec<Recording>, IdentifyError> {
    let info_path = root.join("meta").join("info.json");
    let err = |what: String| read_error(&info_path, what);
    let size = std::fs::metadata(&info_path).map_err(|e| err(e.to_string()))?.len();
    if size > MAX_INFO_BYTES {
        return Err(err(format!("{size} bytes; not a dataset's info")));
    }
    let text = std::fs::read_to_string(&info_path).map_err(|e| err(e.to_string()))?;
    let info: serde_json::Value = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
    let version = info["codebase_version"].as_str().unwrap_or("");
    if version != "v3.0" && version != "v2.1" {
        return Err(err(format!("codebase_version {version:?}; this reads v3.0 and v2.1")));
    }
    for key in ["action", "observation.state"] {
        let shape = info["features"][key]["shape"]
            .as_array()
            .map(|s| s.iter().filter_map(|x| x.as_u64()).collect::<Vec<_>>());
        if shape.as_deref() != Some(&[6]) {
            return Err(err(format!("feature {key:?} is not six values (shape {shape:?})")));
        }
    }
    let mut files = Vec::new();
    collect_parquet(&root.join("data"), &mut files)?;
    files.sort();
    let mut by_episode: BTreeMap<u64, Vec<Frame>> = BTreeMap::new();
    for file in &files {
        read_file(file, episodes, &mut by_episode)?;
    }
    if let Some(missing) = episodes.iter().find(|e| !by_episode.contains_key(e)) {
        return Err(err(format!("no frames of episode {missing} under data/")));
    }
    Ok(by_episode
        .into_iter()
        .map(|(episode, mut frames)| {
            frames.sort_by(|a, b| a.0.total_cmp(&b.0));
            Recording {
                name: format!("{} episode {episode}", root.display()),
                arm: units.arm(),
                goals: frames.iter().map(|f| (f.0, units.to_rad(&f.2))).collect(),
                readings: frames.iter().map(|f| (f.0, units.to_rad(&f.1))).collect(),
                torque: None,
                load: None,
            }
        })
        .collect())
}

fn collect_parquet(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), IdentifyError> {
    let entries = std::fs::read_dir(dir).map_err(|e| read_error(dir, e.to_string()))?;
    for entry in entries {
        let path = entry.map_err(|e| read_error(dir, e.to_string()))?.path();
        if path.is_dir() {
            collect_parquet(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "parquet") {
            if out.len() >= MAX_FILES {
                return Err(read_error(dir, format!("more than {MAX_FILES} parquet files")));
            }
            out.push(path);
        }
    }
    Ok(())
}

fn read_file(path: &Path, episodes: &[u64], out: &mut BTreeMap<u64, Vec<Frame>>) -> Result<(), IdentifyError> {
    let err = |what: String| read_error(path, what);
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let reader = SerializedFileReader::new(file).map_err(|e| err(e.to_string()))?;
    let rows = reader.get_row_iter(None).map_err(|e| err(e.to_string()))?;
    for row in rows {
        let row = row.map_err(|e| err(e.to_string()))?;
        let (mut episode, mut t, mut state, mut action) = (None, None, None, None);
        for (name, field) in row.get_column_iter() {
            match name.as_str() {
                "episode_index" => episode = integer(field),
                "timestamp" => t = number(field),
                "observation.state" => state = six(field),
                "action" => action = six(field),
                _ => {}
            }
        }
        let (Some(episode), Some(t), Some(state), Some(action)) = (episode, t, state, action) else {
            return Err(err(
                "a row without episode_index, timestamp, six observation.state or six action values".into(),
            ));
        };
        if episodes.is_empty() || episodes.contains(&episode) {
            out.entry(episode).or_default().push((t, state, action));
        }
    }
    Ok(())
}

fn integer(field: &Field) -> Option<u64> {
    match field {
        Field::Long(v) => u64::try_from(*v).ok(),
        Field::Int(v) => u64::try_from(*v).ok(),
        _ => None,
    }
}

fn number(field: &Field) -> Option<f64> {
    match field {
        Field::Float(v) => Some(f64::from(*v)),
        Field::Double(v) => Some(*v),
        Field::Float16(v) => Some(f64::from(v.to_f32())),
        _ => None,
    }
}

fn six(field: &Field) -> Option<[f64; 6]> {
    let Field::ListInternal(list) = field else { return None };
    let values: Vec<f64> = list.elements().iter().filter_map(number).collect();
    values.try_into().ok()
}
