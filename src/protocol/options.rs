//! Engine options: how an engine declares them in its `hello` (`protocol.md`, section 4),
//! how a value is checked against a declaration, and how a value written as text (on the
//! command line or in a configuration file) becomes the JSON the declaration asks for.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An option an engine declares in its `hello`: `{"name":..,"type":..,"default":..,...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineOption {
    pub name: String,
    #[serde(flatten)]
    pub kind: OptionKind,
}

/// The type of an option, with its default and allowed values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum OptionKind {
    Int {
        default: i64,
        min: i64,
        max: i64,
    },
    Bool {
        default: bool,
    },
    String {
        default: String,
    },
    Choice {
        default: String,
        values: Vec<String>,
    },
}

impl EngineOption {
    /// The declared default as a JSON value.
    pub fn default_value(&self) -> Value {
        match &self.kind {
            OptionKind::Int { default, .. } => Value::from(*default),
            OptionKind::Bool { default } => Value::from(*default),
            OptionKind::String { default } | OptionKind::Choice { default, .. } => {
                Value::from(default.as_str())
            }
        }
    }

    /// Checks a value against the declaration.
    pub fn validate(&self, value: &Value) -> Result<(), String> {
        match &self.kind {
            OptionKind::Int { min, max, .. } => match value.as_i64() {
                Some(v) if (*min..=*max).contains(&v) => Ok(()),
                _ => Err(format!(
                    "expected an integer from {min} to {max}, got {value}"
                )),
            },
            OptionKind::Bool { .. } => match value {
                Value::Bool(_) => Ok(()),
                _ => Err(format!("expected true or false, got {value}")),
            },
            OptionKind::String { .. } => match value {
                Value::String(_) => Ok(()),
                _ => Err(format!("expected a string, got {value}")),
            },
            OptionKind::Choice { values, .. } => match value.as_str() {
                Some(v) if values.iter().any(|c| c == v) => Ok(()),
                _ => Err(format!(
                    "expected one of {}, got {value}",
                    crate::record::shown_values(values)
                )),
            },
        }
    }

    /// Reads a value written as text (`8`, `true`, `sharp`) as the declared type, and
    /// checks it.
    pub fn parse_text(&self, text: &str) -> Result<Value, String> {
        let name = &self.name;
        let value = match &self.kind {
            OptionKind::Int { .. } => text
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("option {name}: {text:?} is not an integer"))?,
            OptionKind::Bool { .. } => match text.trim() {
                "true" | "1" | "on" | "yes" => Value::from(true),
                "false" | "0" | "off" | "no" => Value::from(false),
                _ => return Err(format!("option {name}: {text:?} is not true or false")),
            },
            OptionKind::String { .. } | OptionKind::Choice { .. } => Value::from(text),
        };
        self.validate(&value)
            .map_err(|reason| format!("option {name}: {reason}"))?;
        Ok(value)
    }
}

/// The declaration named `name` among `declared`, or an error listing what there is.
pub fn find_option<'a>(
    declared: &'a [EngineOption],
    name: &str,
) -> Result<&'a EngineOption, String> {
    declared.iter().find(|o| o.name == name).ok_or_else(|| {
        let known: Vec<&str> = declared.iter().map(|o| o.name.as_str()).collect();
        format!(
            "unknown option {name:?} (the engine declares: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn int() -> EngineOption {
        EngineOption {
            name: "depth".into(),
            kind: OptionKind::Int {
                default: 3,
                min: 1,
                max: 9,
            },
        }
    }

    #[test]
    fn values_are_validated() {
        assert!(int().validate(&json!(9)).is_ok());
        assert!(int().validate(&json!(10)).is_err());
        assert!(int().validate(&json!("3")).is_err());
        let choice = EngineOption {
            name: "style".into(),
            kind: OptionKind::Choice {
                default: "a".into(),
                values: vec!["a".into(), "b".into()],
            },
        };
        assert!(choice.validate(&json!("b")).is_ok());
        assert!(choice.validate(&json!("c")).is_err());
        assert_eq!(choice.default_value(), json!("a"));
    }

    #[test]
    fn text_becomes_the_declared_type() {
        assert_eq!(int().parse_text(" 7 "), Ok(json!(7)));
        assert!(
            int()
                .parse_text("x")
                .unwrap_err()
                .contains("not an integer")
        );
        assert!(int().parse_text("99").unwrap_err().contains("from 1 to 9"));
        let b = EngineOption {
            name: "book".into(),
            kind: OptionKind::Bool { default: true },
        };
        assert_eq!(b.parse_text("off"), Ok(json!(false)));
        let e = find_option(&[int()], "hash").unwrap_err();
        assert!(e.contains("declares: depth"), "{e}");
        assert!(find_option(&[], "hash").unwrap_err().contains("none"));
    }
}
