//! The `hello-fields` step: what an engine's `hello` line must and should hold.

use super::Failure;
use crate::protocol::{EngineOption, OptionKind};
use serde_json::Value;

/// Checks the fields of an engine's `hello` line. Returns warnings for what the protocol
/// allows but advises against: a missing or empty `version` or `author`, no `options`.
pub(super) fn hello_fields(line: &str) -> Result<Vec<String>, Failure> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| Failure::with_line(e.to_string(), line))?;
    let mut warnings = Vec::new();
    match value.get("name") {
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Err(Failure::with_line(
                "\"name\" is empty or only blanks (the protocol asks for a name that is not empty)",
                line,
            ));
        }
        // Kept as it is, but a tournament shows it cleaned and cut: say so.
        Some(Value::String(s)) => match crate::record::shown_name(s) {
            None => warnings.push(
                "\"name\" holds only characters that cannot be shown: tournaments name the \
                 engine after its program"
                    .to_string(),
            ),
            Some(shown) if shown != s.trim() => {
                let cut = format!(
                    "a name is cut to {} characters",
                    crate::record::MAX_NAME_CHARS
                );
                let dropped = "characters that cannot be shown are dropped";
                let why = match (
                    s.chars().any(crate::record::name::is_unsafe),
                    crate::record::name::shown_uncut(s).chars().count()
                        > crate::record::MAX_NAME_CHARS,
                ) {
                    (true, true) => format!("{dropped}, and {cut}"),
                    (true, false) => dropped.to_string(),
                    (false, _) => cut,
                };
                warnings.push(format!("\"name\" is shown as \"{shown}\" ({why})"));
            }
            Some(_) => {}
        },
        _ => {
            return Err(Failure::with_line(
                "\"name\" is missing or not a string",
                line,
            ));
        }
    }
    for key in ["version", "author"] {
        match value.get(key) {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(Value::String(_)) => warnings.push(format!("empty {key}")),
            None => warnings.push(format!("no {key}")),
            Some(_) => {
                return Err(Failure::with_line(
                    format!("\"{key}\" is not a string"),
                    line,
                ));
            }
        }
    }
    let options = match value.get("options") {
        Some(Value::Array(options)) => options.as_slice(),
        None => {
            warnings.push("no options (use [] for none)".to_string());
            &[]
        }
        Some(_) => {
            return Err(Failure::with_line(
                "\"options\" is not an array (use [] for none)",
                line,
            ));
        }
    };
    let mut names = std::collections::HashSet::new();
    for raw in options {
        let opt: EngineOption = serde_json::from_value(raw.clone())
            .map_err(|e| Failure::with_line(format!("bad option {raw}: {e}"), line))?;
        if !names.insert(opt.name.clone()) {
            return Err(Failure::with_line(
                format!("option {:?} is declared twice", opt.name),
                line,
            ));
        }
        if let OptionKind::Int { min, max, .. } = &opt.kind
            && min > max
        {
            return Err(Failure::with_line(
                format!("option {:?}: min {min} > max {max}", opt.name),
                line,
            ));
        }
        opt.validate(&opt.default_value()).map_err(|e| {
            Failure::with_line(format!("option {:?}: default: {e}", opt.name), line)
        })?;
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_fields_are_checked() {
        let ok = r#"{"type":"hello","protocol":1,"name":"n","version":"1","author":"a","options":[{"name":"d","type":"int","default":3,"min":1,"max":9}]}"#;
        assert!(hello_fields(ok).is_ok());
        assert_eq!(hello_fields(ok).unwrap(), Vec::<String>::new());
        let no_author = r#"{"type":"hello","protocol":1,"name":"n","version":"1","options":[]}"#;
        assert_eq!(hello_fields(no_author).unwrap(), ["no author"]);
        let minimal = r#"{"type":"hello","protocol":1,"name":"n"}"#;
        assert_eq!(
            hello_fields(minimal).unwrap(),
            ["no version", "no author", "no options (use [] for none)"]
        );
        let empty_name =
            r#"{"type":"hello","protocol":1,"name":"","version":"1","author":"a","options":[]}"#;
        assert!(
            hello_fields(empty_name)
                .unwrap_err()
                .reason
                .contains("\"name\" is empty")
        );
        let escapes = r#"{"type":"hello","protocol":1,"name":"\u001b\u202e","version":"1","author":"a","options":[]}"#;
        let w = hello_fields(escapes).unwrap();
        assert!(
            w.len() == 1 && w[0].contains("only characters that cannot be shown"),
            "{w:?}"
        );
        // Long only because of its escape sequence: nothing is cut.
        let long_escape = format!(
            r#"{{"type":"hello","protocol":1,"name":"a\u001b[{}mb","version":"1","author":"a","options":[]}}"#,
            "1;".repeat(40)
        );
        let w = hello_fields(&long_escape).unwrap();
        assert_eq!(
            w,
            [r#""name" is shown as "ab" (characters that cannot be shown are dropped)"#]
        );
        // Shown as a terminal would show it, not with Rust's escapes of accents.
        let accented = r#"{"type":"hello","protocol":1,"name":"e\u0301\u001b[0m","version":"1","author":"a","options":[]}"#;
        let w = hello_fields(accented).unwrap();
        assert!(
            w.len() == 1 && w[0].contains("shown as \"e\u{301}\""),
            "{w:?}"
        );
        let colored = r#"{"type":"hello","protocol":1,"name":"\u001b[31mred","version":"1","author":"a","options":[]}"#;
        let w = hello_fields(colored).unwrap();
        assert!(w.len() == 1 && w[0].contains(r#"shown as "red""#), "{w:?}");
        let long = format!(
            r#"{{"type":"hello","protocol":1,"name":"{}","version":"1","author":"a","options":[]}}"#,
            "x".repeat(200)
        );
        let w = hello_fields(&long).unwrap();
        assert!(
            w.len() == 1 && w[0].ends_with("(a name is cut to 64 characters)"),
            "{w:?}"
        );
        let bad_author = r#"{"type":"hello","protocol":1,"name":"n","author":7}"#;
        assert!(hello_fields(bad_author).is_err());
        let bad_default = r#"{"type":"hello","protocol":1,"name":"n","version":"1","author":"a","options":[{"name":"d","type":"int","default":30,"min":1,"max":9}]}"#;
        assert!(
            hello_fields(bad_default)
                .unwrap_err()
                .reason
                .contains("default")
        );
    }
}
