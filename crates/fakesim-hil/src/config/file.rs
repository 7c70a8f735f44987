//! The `--config` file: TOML whose keys are the daemon's flags (plus file-only tables), read
//! into the same options the flags fill; unknown keys are refused by name.

use crate::config::options::DaemonOptions;
use crate::config::table::listing;
use anyhow::{Context, bail};
use std::path::Path;

/// Reads the options a config file sets.
pub fn read(path: &Path) -> anyhow::Result<DaemonOptions> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
    parse(&text).with_context(|| format!("invalid config file {}", path.display()))
}

/// The options a config file's text sets.
fn parse(text: &str) -> anyhow::Result<DaemonOptions> {
    let file: toml::Table = toml::from_str(text)?;
    let keys: Vec<String> = listing().into_iter().filter_map(|setting| setting.key).collect();
    if let Some(unknown) = file.keys().find(|key| !keys.contains(key)) {
        let expected: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
        bail!("unknown field `{unknown}`, expected one of {}", expected.join(", "));
    }
    Ok(toml::Value::Table(file).try_into()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_land_in_their_groups_and_unknown_ones_are_named() {
        let options = parse("max-steps = 7\nshadow-ticks = 2\nlease-in-sim = true\nmode = \"hil\"\n").unwrap();
        assert_eq!(options.twin.max_steps, Some(7));
        assert_eq!(options.shadow.shadow_ticks, Some(2));
        assert!(options.access.lease_in_sim);
        assert_eq!(options.arm.mode, Some(fakesim_bridge::hil::Mode::Hil));
        let err = parse("config = \"other.toml\"\n").unwrap_err();
        assert!(format!("{err:#}").contains("unknown field `config`"), "{err:#}");
        let err = parse("mode = \"fast\"\n").unwrap_err();
        assert!(format!("{err:#}").contains("expected sim, mirror or hil"), "{err:#}");
    }
}
