//! JSON lets a string escape half of a UTF-16 surrogate pair (`"\ud800"`), which is what
//! some encoders write for a string that holds one; serde_json refuses such a line. A lone
//! half is replaced with U+FFFD, as an invalid byte of a `log` line is, so that a field the
//! referee ignores cannot make a message a fault (a known field is then read with the
//! replacement character in it, and judged as it is).

/// `line` with every escaped lone surrogate replaced by `\ufffd`; `None` when it has none.
pub(crate) fn without_lone_surrogates(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let escape = |i: usize| -> Option<u32> {
        let digits = b.get(i..i + 6)?;
        if digits[0] != b'\\' || digits[1] != b'u' {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&digits[2..]).ok()?, 16).ok()
    };
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut changed = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match escape(i) {
            Some(0xD800..=0xDBFF) => {
                if escape(i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) {
                    out.extend_from_slice(&b[i..i + 12]);
                    i += 12;
                } else {
                    out.extend_from_slice(b"\\ufffd");
                    changed = true;
                    i += 6;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                out.extend_from_slice(b"\\ufffd");
                changed = true;
                i += 6;
            }
            Some(_) => {
                out.extend_from_slice(&b[i..i + 6]);
                i += 6;
            }
            // Another escape (`\\`, `\"`, ...): both bytes, so that an escaped backslash
            // is not read as the start of one.
            None => {
                out.extend_from_slice(&b[i..(i + 2).min(b.len())]);
                i += 2;
            }
        }
    }
    // Only ASCII was replaced by ASCII: still UTF-8.
    changed.then(|| String::from_utf8(out).expect("ASCII replaced by ASCII"))
}

#[cfg(test)]
mod tests {
    use super::without_lone_surrogates as fix;

    #[test]
    fn lone_halves_become_replacement_characters_and_pairs_stay() {
        assert_eq!(fix(r#"{"x":"\ud800"}"#).unwrap(), r#"{"x":"\ufffd"}"#);
        assert_eq!(fix(r#"{"x":"\udc00a"}"#).unwrap(), r#"{"x":"\ufffda"}"#);
        assert_eq!(
            fix(r#"{"x":"\ud800\u0041"}"#).unwrap(),
            r#"{"x":"\ufffd\u0041"}"#
        );
        assert_eq!(fix(r#"{"x":"\ud83d\ude00"}"#), None);
        // An escaped backslash before `ud800` is text, not an escape.
        assert_eq!(fix(r#"{"x":"\\ud800"}"#), None);
        assert_eq!(fix(r#"{"x":"\\\ud800"}"#).unwrap(), r#"{"x":"\\\ufffd"}"#);
        assert_eq!(fix("plain"), None);
        assert_eq!(fix("\\"), None);
    }
}
