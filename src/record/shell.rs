//! Words for commands that kalaha suggests (`kalaha tournament --resume DIR`), quoted so
//! that they are safe on a terminal and can be pasted into a shell.

use std::path::Path;

/// Quotes a word for a POSIX shell when needed. A word holding characters that are not
/// shown raw (control bytes, bidirectional marks) is written `$'...'` with those
/// characters as escapes: safe on a terminal, and bash, zsh and ksh read it back as the
/// same word.
pub(crate) fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=".contains(c))
    {
        s.to_string()
    } else if !s.chars().any(crate::record::name::is_unsafe) {
        format!("'{}'", s.replace('\'', "'\\''"))
    } else {
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if crate::record::name::is_unsafe(c) => {
                    let code = c as u32;
                    out.push_str(&match code {
                        0..0x80 => format!("\\x{code:02x}"),
                        0x80..0x10000 => format!("\\u{code:04x}"),
                        _ => format!("\\U{code:08x}"),
                    });
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    }
}

/// A path as a word of a suggested command (see [`shell_word`]).
pub(crate) fn shell_path(path: &Path) -> String {
    shell_word(&path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suggested command is safe on a terminal and names the same folder when pasted
    /// into a shell.
    #[test]
    fn shell_words_are_safe_and_read_back_by_the_shell() {
        assert_eq!(shell_word("results/run-1"), "results/run-1");
        assert_eq!(shell_word("my run"), "'my run'");
        for word in [
            "it's mine",
            "a\u{1b}]0;x\u{7}b",
            "r\u{202e}\nX\\'y",
            "\u{85}z",
        ] {
            let quoted = shell_word(word);
            assert!(
                !quoted.chars().any(crate::record::name::is_unsafe),
                "{quoted:?}"
            );
            let Ok(o) = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {quoted}")])
                .output()
            else {
                continue; // no bash here
            };
            assert_eq!(String::from_utf8_lossy(&o.stdout), word, "{quoted}");
        }
    }
}
