//! The list of every setting (key, flag, default, meaning) drawn from the options themselves:
//! the help's defaults, the config file's keys, and the manual's configuration table (printed
//! by `fakesim-hil config-table`, checked by [`check_manual`]).

use crate::config::options::{DaemonOptions, defaults};
use clap::{Args, Command};
use serde_json::Value;

/// Keys the config file takes that have no flag, with their meaning and default.
const FILE_ONLY: [(&str, &str, &str); 3] = [
    (
        "servos",
        "Table of connect-time servo settings: return-delay, acceleration, max-acceleration, p, i, \
         d, and `[servos.gripper]` max-torque, protection-current, overload-torque.",
        "LeRobot's SO follower",
    ),
    (
        "stall",
        "The stall guard's limits per joint, `[stall.LABEL]` (shoulder_pan .. gripper): load-percent, \
         error-rad, window-s. A joint at or above the load, that far from its goal, for the window, has its \
         torque switched off and the stop latched (hil).",
        "70 %, 0.1 rad, 2 s; gripper 40 %, 0.1 rad, 1.5 s",
    ),
    (
        "variations",
        "Table of the ranges each episode's look is drawn within from its seed: light-tilt-deg, \
         light-intensity = [low, high], part-color and object-color (steps of 255 per channel), \
         camera-shift-mm, camera-turn-deg, backdrop-brightness = [low, high]; an unset key does not vary.",
        "nothing varies",
    ),
];

/// The flag that names the config file, not a key of it.
const CONFIG_FLAG: &str = "config";

/// One setting, as the manual's configuration table lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// Its key in the config file, if the file takes it.
    pub key: Option<String>,
    /// Its flag's long name (without the dashes), if the command line takes it.
    pub flag: Option<String>,
    /// Its default, if it has one.
    pub default: Option<String>,
    /// What it means: the flag's help without the default.
    pub doc: String,
}

/// Every setting of the daemon: each flag (in the help's order), then the file-only keys.
pub fn listing() -> Vec<Setting> {
    let command = DaemonOptions::augment_args(Command::new("fakesim-hil"));
    let mut settings: Vec<Setting> = command
        .get_arguments()
        .filter_map(|arg| {
            let flag = arg.get_long()?.to_owned();
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            let (doc, stated) = split_default(&help);
            Some(Setting {
                key: (flag != CONFIG_FLAG).then(|| flag.clone()),
                default: default_of(&flag).or(stated),
                flag: Some(flag),
                doc,
            })
        })
        .collect();
    settings.extend(FILE_ONLY.map(|(key, doc, default)| Setting {
        key: Some(key.to_owned()),
        flag: None,
        default: Some(default.to_owned()),
        doc: doc.to_owned(),
    }));
    settings
}

/// The help of `command`'s flags with the default each has in [`defaults`] appended, but for
/// the flags named in `except` (whose default is another there).
pub fn with_defaults(command: Command, except: &[&str]) -> Command {
    command.mut_args(|arg| {
        let default = arg
            .get_long()
            .filter(|long| !except.contains(long))
            .and_then(default_of);
        match (default, arg.get_help().map(ToString::to_string)) {
            (Some(default), Some(help)) => arg.help(format!("{help} [default: {default}]")),
            _ => arg,
        }
    })
}

/// The settings as a Markdown table: `key | flag | default | meaning`.
pub fn markdown() -> String {
    let code = |text: &Option<String>, prefix: &str| text.as_ref().map_or(String::new(), |t| format!("`{prefix}{t}`"));
    let mut out = String::from("| key | flag | default | meaning |\n|---|---|---|---|\n");
    for setting in listing() {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            code(&setting.key, ""),
            code(&setting.flag, "--"),
            code(&setting.default, ""),
            setting.doc.replace('|', "\\|")
        ));
    }
    out
}

/// Checks a Markdown page's `key | flag | default | meaning` table against [`listing`]: every
/// setting has its row, with the same flag and default, and no row names another; each
/// difference is one line of the error.
pub fn check_manual(page: &str) -> Result<(), Vec<String>> {
    let rows = manual_rows(page).ok_or_else(|| vec!["no `key | flag | default | meaning` table".to_owned()])?;
    let mut problems = Vec::new();
    let settings = listing();
    for setting in &settings {
        let name = setting
            .key
            .as_ref()
            .or(setting.flag.as_ref())
            .cloned()
            .unwrap_or_default();
        let row = rows.iter().find(|row| {
            (setting.key.is_some() && row.key == setting.key) || (setting.key.is_none() && row.flag == setting.flag)
        });
        match row {
            None => problems.push(format!("{name}: no row")),
            Some(row) if row.flag != setting.flag => {
                problems.push(format!(
                    "{name}: flag {:?} in the page, {:?} in the code",
                    row.flag, setting.flag
                ));
            }
            Some(row) if row.default != setting.default => problems.push(format!(
                "{name}: default {:?} in the page, {:?} in the code",
                row.default, setting.default
            )),
            Some(_) => {}
        }
    }
    for row in &rows {
        let known = settings
            .iter()
            .any(|s| (row.key.is_some() && s.key == row.key) || (row.key.is_none() && s.flag == row.flag));
        if !known {
            problems.push(format!("row {:?} / {:?}: no such setting", row.key, row.flag));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems) }
}

/// A row of the manual's table, its cells without code marks and the flag without dashes.
#[derive(Debug)]
struct Row {
    key: Option<String>,
    flag: Option<String>,
    default: Option<String>,
}

/// The rows of the first table whose header is `key | flag | default | meaning`.
fn manual_rows(page: &str) -> Option<Vec<Row>> {
    let cells = |line: &str| -> Vec<String> {
        let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
        inner.split('|').map(|cell| cell.trim().to_owned()).collect()
    };
    let mut lines = page.lines().skip_while(|line| {
        let header: Vec<String> = cells(line).iter().map(|c| c.to_lowercase()).collect();
        header != ["key", "flag", "default", "meaning"]
    });
    lines.next()?;
    let cell = |text: &str, dashes: bool| {
        let text = text.trim_matches('`').trim();
        let text = if dashes { text.trim_start_matches("--") } else { text };
        (!text.is_empty() && text != "-" && text != "—").then(|| text.to_owned())
    };
    Some(
        lines
            .skip(1)
            .take_while(|line| line.trim_start().starts_with('|'))
            .map(|line| {
                let row = cells(line);
                let at = |i: usize| row.get(i).map_or("", String::as_str);
                Row {
                    key: cell(at(0), false),
                    flag: cell(at(1), true),
                    default: cell(at(2), false),
                }
            })
            .collect(),
    )
}

/// The default [`defaults`] gives the option of this long name, as its flag would spell it (a
/// switch, off unless given, has none).
fn default_of(long: &str) -> Option<String> {
    let defaults = serde_json::to_value(defaults()).ok()?;
    match defaults.get(long)? {
        Value::Null | Value::Bool(false) => None,
        Value::String(text) => Some(text.clone()),
        Value::Number(number) if number.is_f64() => number.as_f64().map(|value| value.to_string()),
        other => Some(other.to_string()),
    }
}

/// A help text without its trailing `[default: ...]`, and that default.
fn split_default(help: &str) -> (String, Option<String>) {
    match help.split_once(" [default: ") {
        Some((doc, rest)) => {
            let (default, after) = rest.split_once(']').unwrap_or((rest, ""));
            (format!("{doc}{after}"), Some(default.to_owned()))
        }
        None => (help.to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_and_key_is_listed_once_with_its_default() {
        let settings = listing();
        let find = |key: &str| settings.iter().find(|s| s.key.as_deref() == Some(key)).unwrap();
        assert_eq!(find("max-steps").default.as_deref(), Some("300"));
        assert_eq!(find("listen").default.as_deref(), Some("127.0.0.1:50051"));
        assert_eq!(find("render-quality").default.as_deref(), Some("full"));
        assert_eq!(find("live-view").default.as_deref(), Some("off"));
        assert_eq!(find("servos").flag, None);
        assert!(!find("live-view").doc.contains("[default"), "{}", find("live-view").doc);
        let config = settings.iter().find(|s| s.flag.as_deref() == Some("config")).unwrap();
        assert_eq!(config.key, None);
        let mut names: Vec<_> = settings.iter().map(|s| (s.key.clone(), s.flag.clone())).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
        assert!(settings.iter().all(|s| !s.doc.is_empty()));
    }

    #[test]
    fn the_generated_table_passes_the_check_and_a_stale_one_does_not() {
        let page = format!("# Configuration\n\nSome prose.\n\n{}\nMore prose.\n", markdown());
        assert_eq!(check_manual(&page), Ok(()));
        let stale = page
            .replace(
                "| `max-steps` | `--max-steps` | `300` |",
                "| `max-steps` | `--max-steps` | `200` |",
            )
            .replace("| `baud` |", "| `bauds` |");
        let problems = check_manual(&stale).unwrap_err();
        assert!(
            problems.iter().any(|p| p.starts_with("max-steps: default")),
            "{problems:?}"
        );
        assert!(problems.iter().any(|p| p == "baud: no row"), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("\"bauds\"")), "{problems:?}");
        assert!(check_manual("no table here").is_err());
    }

    #[test]
    fn the_manual_lists_every_setting_with_its_flag_and_default() {
        let page = include_str!("../../../../docs/src/configuration.md");
        if let Err(problems) = check_manual(page) {
            panic!(
                "docs/src/configuration.md is out of date (`fakesim-hil config-table` prints the table):\n{}",
                problems.join("\n")
            );
        }
    }

    #[test]
    fn the_help_shows_the_defaults() {
        let command = with_defaults(
            DaemonOptions::augment_args(Command::new("fakesim-hil")),
            &["port", "baud"],
        );
        let help = |long: &str| {
            let arg = command.get_arguments().find(|a| a.get_long() == Some(long)).unwrap();
            arg.get_help().unwrap().to_string()
        };
        assert!(help("max-steps").ends_with("[default: 300]"), "{}", help("max-steps"));
        assert!(
            help("shadow-drift").ends_with("[default: 0.02]"),
            "{}",
            help("shadow-drift")
        );
        assert!(
            help("shadow-load").ends_with("[default: 30]"),
            "{}",
            help("shadow-load")
        );
        assert!(!help("port").contains("[default"), "{}", help("port"));
        assert!(!help("baud").contains("[default"), "{}", help("baud"));
        assert!(!help("lease-in-sim").contains("[default"), "{}", help("lease-in-sim"));
    }
}
