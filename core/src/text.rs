//! Text made safe to show: free text from engines, and paths, with the characters that
//! could rewrite a terminal line or reorder a report written as escapes.

use std::borrow::Cow;

/// Characters that are never shown raw: control characters, bidirectional marks,
/// embeddings, overrides and isolates, zero-width characters (which make two names look
/// alike), and the Unicode line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200b}'
                ..='\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{2060}' | '\u{feff}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Text from an engine with every unsafe character written as an escape (`\u{1b}`), so
/// it cannot move a cursor, set a window title, reorder a line or end one.
pub fn clean_text(text: &str) -> Cow<'_, str> {
    escape_where(text, is_unsafe)
}

/// A message of kalaha's own (an error or a warning, which may quote a path or a line it
/// was given) made safe like [`clean_text`], keeping its own line breaks and tabs.
pub fn clean_message(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| is_unsafe(c) && c != '\n' && c != '\t')
}

fn escape_where(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A path as kalaha prints it: made safe like [`clean_text`] (a folder's name is the
/// user's, or an engine's, to choose).
pub fn shown_path(path: &std::path::Path) -> String {
    clean_text(&path.display().to_string()).into_owned()
}
