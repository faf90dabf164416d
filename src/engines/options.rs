//! Helpers shared by the built-in engines to declare and parse their options.

use crate::protocol::{EngineOption, OptionKind};
use serde_json::Value;

/// An integer option with its default and range.
pub(crate) fn int_option(name: &str, default: i64, min: i64, max: i64) -> EngineOption {
    EngineOption {
        name: name.to_string(),
        kind: OptionKind::Int { default, min, max },
    }
}

/// Reads an integer option value (a JSON number, or a string holding one) within `min..=max`.
pub(crate) fn parse_int(name: &str, value: &Value, min: i64, max: i64) -> Result<i64, String> {
    let n = match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("option {name}: expected an integer, got {value}"))?;
    if !(min..=max).contains(&n) {
        return Err(format!(
            "option {name}: {n} is out of range, it must be between {min} and {max}"
        ));
    }
    Ok(n)
}

/// The error for an option the engine does not have.
pub(crate) fn unknown_option(engine: &str, name: &str, options: &[EngineOption]) -> String {
    let names: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
    if names.is_empty() {
        format!("engine {engine} has no options (got {name:?})")
    } else {
        format!(
            "engine {engine} has no option {name:?}: its options are {}",
            names.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_parse_from_numbers_and_strings_within_range() {
        assert_eq!(parse_int("depth", &json!(6), 0, 10), Ok(6));
        assert_eq!(parse_int("depth", &json!("7"), 0, 10), Ok(7));
        assert!(
            parse_int("depth", &json!(11), 0, 10)
                .unwrap_err()
                .contains("between 0 and 10")
        );
        assert!(
            parse_int("depth", &json!(true), 0, 10)
                .unwrap_err()
                .contains("expected an integer")
        );
    }
}
