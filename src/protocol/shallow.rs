//! Unknown fields must be ignored however deeply they nest, but a JSON parser that builds
//! or skips values recursively stops at some depth (serde_json at 128). This module drops
//! the top-level fields of an object whose values nest too deeply, without recursion, so
//! that the rest of the message can be read: a known field nested that deep is still an
//! error, since it is then missing.

/// The object in `line` without its top-level fields whose values nest deeper than a
/// parser allows; `None` when `line` is not an object or no field was dropped.
pub(crate) fn without_deep_fields(line: &str) -> Option<String> {
    const MAX_DEPTH: usize = 100;
    let bytes = line.as_bytes();
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if bytes[start] != b'{' {
        return None;
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut dropped = false;
    // Byte offsets of the current field and the deepest nesting seen inside its value.
    let mut field_start = start + 1;
    let mut deepest = 1usize;
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' if depth == 1 => {
                // The end of the object: the last field, if any.
                let field = line[field_start..i].trim();
                if !field.is_empty() {
                    if deepest > MAX_DEPTH {
                        dropped = true;
                    } else {
                        kept.push(field);
                    }
                }
                let rest = line[i + 1..].trim();
                if !rest.is_empty() || !dropped {
                    return None;
                }
                return Some(format!("{{{}}}", kept.join(",")));
            }
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 1 => {
                let field = line[field_start..i].trim();
                if deepest > MAX_DEPTH {
                    dropped = true;
                } else {
                    kept.push(field);
                }
                field_start = i + 1;
                deepest = 1;
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_fields_are_dropped_and_the_rest_kept() {
        let deep = format!("{}1{}", "[".repeat(500), "]".repeat(500));
        let line = format!(r#"{{"type":"move","x":{deep},"pit":4,"s":"a,{{[\"b"}}"#);
        assert_eq!(
            without_deep_fields(&line).unwrap(),
            r#"{"type":"move","pit":4,"s":"a,{[\"b"}"#
        );
        let last = format!(r#"{{"type":"move","pit":4,"x":{deep}}}"#);
        assert_eq!(
            without_deep_fields(&last).unwrap(),
            r#"{"type":"move","pit":4}"#
        );
        // Nothing to drop, not an object, or trailing junk: no rewrite.
        assert_eq!(without_deep_fields(r#"{"type":"move","pit":4}"#), None);
        assert_eq!(without_deep_fields("[1]"), None);
        assert_eq!(without_deep_fields(&format!("{last} x")), None);
    }
}
