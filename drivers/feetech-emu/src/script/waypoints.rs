//! Timed waypoints from a CSV file: a header `time_s,LABEL,...` (labels as in the calibration,
//! LeRobot's `.pos` suffix allowed), then one line per waypoint; `#` starts a comment.

use std::path::Path;

use feetech::calibration::Calibration;

use super::{Script, ScriptError, ScriptUnits};

/// The first column's name.
const TIME_COLUMN: &str = "time_s";

/// The joint a column names: its label, with or without LeRobot's `.pos` suffix.
pub(crate) fn joint_label(column: &str) -> &str {
    column.strip_suffix(".pos").unwrap_or(column)
}

/// Reads a waypoint file; positions are in `units` for the arm holding `calibration`.
pub(crate) fn load(path: &Path, calibration: &Calibration, units: ScriptUnits) -> Result<Script, ScriptError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse(&text, calibration, units).map_err(|(line, reason)| ScriptError::Waypoints {
        path: path.display().to_string(),
        line,
        reason,
    })
}

/// Parses the file's text; a refusal gives the one-based line and the reason.
fn parse(text: &str, calibration: &Calibration, units: ScriptUnits) -> Result<Script, (usize, String)> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line.split('#').next().unwrap_or("").trim()))
        .filter(|(_, line)| !line.is_empty());
    let (header_line, header) = lines.next().ok_or((1, "no header line".to_owned()))?;
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    if columns.first() != Some(&TIME_COLUMN) || columns.len() < 2 {
        return Err((
            header_line,
            format!("the header must be {TIME_COLUMN},LABEL[,LABEL...]"),
        ));
    }
    let mut joints = Vec::new();
    for column in columns.iter().skip(1) {
        let label = joint_label(column);
        let motor = calibration
            .motors
            .get(label)
            .ok_or_else(|| (header_line, format!("`{column}` is not a joint of the arm")))?;
        if joints.iter().any(|(known, _)| *known == label) {
            return Err((header_line, format!("`{label}` is given twice")));
        }
        joints.push((label, *motor));
    }
    let (mut times, mut frames) = (Vec::new(), Vec::new());
    for (number, line) in lines {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != columns.len() {
            return Err((number, format!("{} values for {} columns", fields.len(), columns.len())));
        }
        let number_at = |index: usize| {
            let field = fields.get(index).copied().unwrap_or("");
            field
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| (number, format!("`{field}` is not a number")))
        };
        let time = number_at(0)?;
        if time < 0.0 || times.last().is_some_and(|last| time <= *last) {
            return Err((number, format!("time {time} s does not follow the one before")));
        }
        let mut frame = Vec::with_capacity(joints.len());
        for (index, (label, motor)) in joints.iter().enumerate() {
            let value = number_at(index + 1)?;
            frame.push(units.steps(label, motor, value).map_err(|e| (number, e.to_string()))?);
        }
        times.push(time);
        frames.push(frame);
    }
    if frames.is_empty() {
        return Err((header_line, "no waypoint after the header".to_owned()));
    }
    let ids = joints.iter().map(|(_, motor)| motor.id).collect();
    Ok(Script::track(ids, times, frames, false))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

    use super::*;
    use crate::VirtualSo101;

    #[test]
    fn waypoints_parse_in_lerobot_units_and_refuse_nonsense() {
        let calibration = VirtualSo101::calibration();
        let text = "# a wave\ntime_s, elbow_flex.pos, gripper\n0, 0, 0\n2, 45, 100 # open\n";
        let script = parse(text, &calibration, ScriptUnits::Degrees).unwrap();
        assert_eq!(script.ids(), [3, 6]);
        let elbow = calibration.motors["elbow_flex"];
        let middle = f64::from(elbow.range_min + elbow.range_max) / 2.0;
        let at = |s: f64| script.position(3, Duration::from_secs_f64(s)).unwrap();
        assert!((at(0.0) - middle).abs() <= 0.5);
        assert!((at(2.0) - (middle + 45.0 * 4095.0 / 360.0)).abs() <= 0.5);
        let gripper = calibration.motors["gripper"];
        assert_eq!(
            script.position(6, Duration::from_secs(5)),
            Some(f64::from(gripper.range_max))
        );
        let refusals = [
            ("", 1),
            ("t,elbow_flex\n0,0", 1),
            ("time_s,knee\n0,0", 1),
            ("time_s,elbow_flex,elbow_flex.pos\n0,0,0", 1),
            ("time_s,elbow_flex\n0,0\n0,1", 3),
            ("time_s,elbow_flex\n0,x", 2),
            ("time_s,elbow_flex\n0,1,2", 2),
            ("time_s,elbow_flex\n", 1),
        ];
        for (bad, line) in refusals {
            let refused = parse(bad, &calibration, ScriptUnits::Degrees).unwrap_err();
            assert_eq!(refused.0, line, "{bad:?}: {refused:?}");
        }
    }
}
