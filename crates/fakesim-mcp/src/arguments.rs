//! Tool arguments that fail to parse become the `invalid_argument` tool error (with the same
//! structure as every other refusal) instead of a bare SDK message.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;

/// The longest parse error quoted back to the client.
const MAX_DETAIL: usize = 300;

/// Arguments of type `T`, or why they do not parse; its input schema is `T`'s.
#[derive(Debug)]
pub struct Checked<T>(pub Result<T, String>);

impl<T: JsonSchema> JsonSchema for Checked<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Checked<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Checked(serde_json::from_value(value).map_err(|e| {
            let detail = e.to_string();
            match detail.char_indices().nth(MAX_DETAIL) {
                Some((cut, _)) => format!("{}...", &detail[..cut]),
                None => detail,
            }
        })))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::tools::{GripperArgs, MoveArgs};

    #[test]
    fn good_arguments_parse_and_bad_ones_say_why_briefly() {
        let good: Checked<MoveArgs> = serde_json::from_str(r#"{"delta_xyz": [0, 0.1, 0]}"#).unwrap();
        assert_eq!(good.0.unwrap().delta_xyz, [0.0, 0.1, 0.0]);
        let short: Checked<MoveArgs> = serde_json::from_str(r#"{"delta_xyz": [0, 0.1]}"#).unwrap();
        let detail = short.0.unwrap_err();
        assert!(detail.contains("length 2"), "{detail}");
        let long = format!(r#"{{"command": "{}"}}"#, "x".repeat(5000));
        let bad: Checked<GripperArgs> = serde_json::from_str(&long).unwrap();
        let detail = bad.0.unwrap_err();
        assert!(
            detail.len() < MAX_DETAIL + 10 && detail.starts_with("unknown variant"),
            "{detail}"
        );
    }

    #[test]
    fn the_schema_is_the_arguments_schema() {
        let checked = schemars::schema_for!(Checked<MoveArgs>);
        let plain = schemars::schema_for!(MoveArgs);
        assert_eq!(checked, plain);
    }
}
