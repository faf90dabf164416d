//! Engine names and other text that comes from engines: what a name may hold, and how any
//! engine text is made safe to show on a terminal, in a file or on a page.
//!
//! A name is at most [`MAX_NAME_CHARS`] characters, none of them a control character, a
//! bidirectional override or a line separator: such characters would rewrite a terminal
//! line, reorder a leaderboard row or break a CSV line. Free text from engines (fault
//! details, offending lines, log messages) is kept, but shown through [`clean_text`], which
//! writes those characters as escapes (the escaping itself is [`kalaha_core::text`], which
//! the solver's errors use too).

pub use kalaha_core::text::{clean_message, clean_text, is_unsafe, shown_path};
use std::borrow::Cow;

/// The longest engine name, in characters (a longer `hello` name is cut to this length).
pub const MAX_NAME_CHARS: usize = 64;

/// Why a name cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("the name is empty")]
    Empty,
    #[error("the name is {0} characters long; the maximum is {MAX_NAME_CHARS}")]
    TooLong(usize),
    #[error("the name holds the character {0:?}, which cannot be shown safely")]
    Unsafe(char),
    #[error(
        "the name begins or ends with a blank character: it would read as another name (the \
         one without it) on a leaderboard and in games.csv; leave it out"
    )]
    Padded,
}

/// Checks that `name` can name an engine in every report.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.chars().all(looks_blank) {
        return Err(NameError::Empty);
    }
    if let Some(c) = name.chars().find(|&c| is_unsafe(c)) {
        return Err(NameError::Unsafe(c));
    }
    if name.starts_with(looks_blank) || name.ends_with(looks_blank) {
        return Err(NameError::Padded);
    }
    let n = name.chars().count();
    if n > MAX_NAME_CHARS {
        return Err(NameError::TooLong(n));
    }
    Ok(())
}

/// Warnings for names that differ but look alike (the same [`look_alike_key`]): `hard` and
/// `h\u{430}rd`, with a Cyrillic a, read the same on a leaderboard and are two engines, as
/// do `first` and `first\u{301}` (an accent) or `fir\u{ad}st` (a soft hyphen, which shows
/// as nothing). Each names the look-alikes with their characters beyond ASCII escaped.
pub fn look_alike_warnings<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    look_alike_groups(names)
        .into_iter()
        .map(|names| {
            let shown: Vec<String> = names
                .iter()
                .map(|n| format!("\"{}\"", escaped(n)))
                .collect();
            format!(
                "the engine names {} look alike but are different engines: rename one \
                 (name=) so that people can tell them apart",
                shown.join(" and ")
            )
        })
        .collect()
}

/// The groups of two or more different names among `names` that look alike (the same
/// [`look_alike_key`]), each in the order the names first came.
pub fn look_alike_groups<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Vec<&'a str>> {
    let mut by_skeleton: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for name in names {
        let same = by_skeleton.entry(look_alike_key(name)).or_default();
        if !same.contains(&name) {
            same.push(name);
        }
    }
    by_skeleton
        .into_values()
        .filter(|names| names.len() > 1)
        .collect()
}

/// What `name` looks like, as far as a reader can tell names apart: two names with the same
/// key look alike. The key is the confusable skeleton of Unicode Technical Standard #39
/// (`h\u{430}rd` is `hard`) of the name taken apart (NFKD: `\u{ff48}ard`, in full-width
/// letters, and the ligature `\u{fb01}rst` are `hard` and `first`), without
///
/// - the accents and other marks of the combining diacritical blocks (`first\u{301}` is
///   `first`; so is `f\u{ee}rst`, whose `\u{ee}` comes apart into `i` and a circumflex):
///   beside each other in a table they read as one name. The vowel signs of other
///   scripts, which are letters of their own, are kept;
/// - the default-ignorable code points, which show as nothing: the soft hyphen, the
///   combining grapheme joiner, variation selectors, the Hangul fillers, tags, and the
///   zero-width characters that [`check_name`] refuses but an engine's `hello` may hold.
pub fn look_alike_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let seen = |c: &char| !is_diacritic(*c) && !is_default_ignorable(*c);
    let bare: String = name.nfkd().filter(seen).collect();
    unicode_security::skeleton(&bare).filter(seen).collect()
}

/// A mark of the combining diacritical blocks (Combining Diacritical Marks, its Extended,
/// Supplement and For Symbols blocks, the Combining Half Marks).
fn is_diacritic(c: char) -> bool {
    matches!(
        c,
        '\u{300}'..='\u{36f}'
            | '\u{1ab0}'..='\u{1aff}'
            | '\u{1dc0}'..='\u{1dff}'
            | '\u{20d0}'..='\u{20ff}'
            | '\u{fe20}'..='\u{fe2f}'
    )
}

/// A code point of Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties):
/// a renderer shows nothing for it.
fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// `name` with every character beyond ASCII written as `\u{...}`.
pub fn escaped(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == '\\' {
                // So that no name reads as another's escape.
                "\\\\".to_string()
            } else if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\u{{{:x}}}", c as u32)
            }
        })
        .collect()
}

/// A name an engine sent about itself, made usable: terminal escape sequences and other
/// unsafe characters dropped, surrounding blanks trimmed, cut to [`MAX_NAME_CHARS`]. `None`
/// when nothing is left.
pub fn shown_name(name: &str) -> Option<String> {
    let kept: String = shown_uncut(name).chars().take(MAX_NAME_CHARS).collect();
    let kept = kept.trim_end().to_string();
    (!kept.chars().all(looks_blank)).then_some(kept)
}

/// Characters that show as nothing, besides white space: the Hangul fillers, the blank
/// Braille pattern and the Mongolian and Khmer vowel signs that render empty. A name of
/// only these reads as a blank row.
fn looks_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180e}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{ffa0}'
        )
}

/// `name` as [`shown_name`] shows it before the cut to [`MAX_NAME_CHARS`].
pub fn shown_uncut(name: &str) -> String {
    let kept: String = without_escape_sequences(name)
        .filter(|&c| !is_unsafe(c))
        .collect();
    kept.trim().to_string()
}

/// The characters of `text` outside terminal escape sequences (ECMA-48): a control
/// sequence (`ESC [` or CSI, parameters, then one final character), a string command
/// (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`, up to BEL or `ESC \`), or `ESC` and one
/// more character. Dropping only the escape byte would leave `[31m` in a name.
fn without_escape_sequences(text: &str) -> impl Iterator<Item = char> + '_ {
    enum State {
        Text,
        Escape,
        Control,
        Command,
        CommandEscape,
    }
    // The state a character that starts a sequence leads to, wherever it comes: an
    // unfinished sequence ends where the next one starts.
    fn starts(c: char) -> Option<State> {
        match c {
            '\u{1b}' => Some(State::Escape),
            '\u{9b}' => Some(State::Control),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => Some(State::Command),
            _ => None,
        }
    }
    fn after_escape(c: char) -> State {
        match c {
            '[' => State::Control,
            ']' | 'P' | 'X' | '^' | '_' => State::Command,
            c => starts(c).unwrap_or(State::Text),
        }
    }
    let mut state = State::Text;
    text.chars().filter(move |&c| {
        let (next, keep) = match state {
            State::Text => match starts(c) {
                Some(next) => (next, false),
                None => (State::Text, true),
            },
            State::Escape => (after_escape(c), false),
            // Parameter and intermediate characters go on and a final character ends it;
            // anything else ends it and is text again.
            State::Control => match c {
                '\u{20}'..='\u{3f}' => (State::Control, false),
                '\u{40}'..='\u{7e}' => (State::Text, false),
                c => match starts(c) {
                    Some(next) => (next, false),
                    None => (State::Text, true),
                },
            },
            State::Command => match c {
                '\u{7}' | '\u{9c}' => (State::Text, false),
                '\u{1b}' => (State::CommandEscape, false),
                '\u{9b}' => (State::Control, false),
                _ => (State::Command, false),
            },
            // `ESC \` ends the string; any other escape starts a sequence of its own.
            State::CommandEscape => match c {
                '\\' => (State::Text, false),
                c => (after_escape(c), false),
            },
        };
        state = next;
        keep
    })
}

/// Shortens a line for a record or a message, marking the cut.
pub fn truncate(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_string();
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &line[..end], line.len())
}

/// The longest piece of a line from an engine shown in a message or note, in bytes.
pub const MAX_SHOWN_LINE: usize = 1000;

/// The most values of a list from an engine (an option's choices) shown in a message.
pub const MAX_SHOWN_VALUES: usize = 20;

/// A line from an engine as a message shows it: cut to [`MAX_SHOWN_LINE`] bytes (the cut
/// says how long the line was) and made safe with [`clean_text`].
pub fn shown_line(line: &str) -> String {
    clean_text(&truncate(line, MAX_SHOWN_LINE)).into_owned()
}

/// Values from an engine (an option's choices) as a message lists them: the first
/// `MAX_SHOWN_VALUES` (20), each made safe, then how many more there are.
pub fn shown_values(values: &[String]) -> String {
    let mut s = values
        .iter()
        .take(MAX_SHOWN_VALUES)
        .map(|v| shown_line(v))
        .collect::<Vec<_>>()
        .join(", ");
    if values.len() > MAX_SHOWN_VALUES {
        s.push_str(&format!(" and {} more", values.len() - MAX_SHOWN_VALUES));
    }
    s
}

/// `text` in at most `width` characters: cut with `…` when longer.
pub fn fit_width(text: &str, width: usize) -> Cow<'_, str> {
    if text.chars().count() <= width {
        return Cow::Borrowed(text);
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    let mut s: String = text.chars().take(width - 1).collect();
    s.push('…');
    Cow::Owned(s)
}

/// `n` and a noun, plural unless `n` is 1: `1 opening`, `2 openings` (nouns whose plural
/// adds an `s`).
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular() {
        assert_eq!(counted(1, "opening"), "1 opening");
        assert_eq!(counted(0, "table"), "0 tables");
        assert_eq!(counted(2, "thread"), "2 threads");
    }

    /// A name that shows as nothing is no name, whatever blank-looking characters make it.
    #[test]
    fn a_name_of_blank_looking_characters_is_empty() {
        for blank in [
            "\u{3164}",
            "\u{2800}\u{2800}",
            " \u{ffa0} ",
            "\u{115f}\u{1160}",
        ] {
            assert_eq!(shown_name(blank), None, "{blank:?}");
            assert_eq!(check_name(blank), Err(NameError::Empty), "{blank:?}");
        }
        assert_eq!(shown_name("a\u{3164}b").as_deref(), Some("a\u{3164}b"));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("hard").is_ok());
        assert!(check_name("Dvärg v2 (ö)").is_ok());
        assert_eq!(check_name(" "), Err(NameError::Empty));
        assert_eq!(check_name("a\nb"), Err(NameError::Unsafe('\n')));
        assert_eq!(check_name(" hard"), Err(NameError::Padded));
        assert_eq!(check_name("hard\u{3000}"), Err(NameError::Padded));
        assert_eq!(
            check_name("evil\u{202e}lmth"),
            Err(NameError::Unsafe('\u{202e}'))
        );
        assert_eq!(
            check_name(&"x".repeat(70_000)),
            Err(NameError::TooLong(70_000))
        );
        assert!(check_name(&"é".repeat(MAX_NAME_CHARS)).is_ok());
    }

    #[test]
    fn a_message_keeps_its_line_breaks_and_escapes_the_rest() {
        assert_eq!(
            clean_message("no folder a\u{1b}[2Jb\r\nhint:\tgive one"),
            "no folder a\\u{1b}[2Jb\\u{d}\nhint:\tgive one"
        );
        assert!(matches!(clean_message("plain\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn engine_text_is_made_safe() {
        assert_eq!(shown_name("  x\u{1b}]0;title\u{7}y  ").unwrap(), "xy");
        assert_eq!(shown_name("\u{1b}[31mevil\u{1b}[0m").unwrap(), "evil");
        assert_eq!(shown_name("\u{1b}[1;31;4mred\u{9b}2Jx").unwrap(), "redx");
        assert_eq!(shown_name("a\u{1b}]8;;u\u{1b}\\b\u{1b}cd").unwrap(), "abd");
        // A sequence cut short at the end of the name takes nothing after it.
        assert_eq!(shown_name("ok\u{1b}[3"), Some("ok".to_string()));
        assert_eq!(shown_name("\u{1b}]0;only a title"), None);
        // An unfinished sequence ends where the next one starts.
        assert_eq!(shown_name("a\u{1b}[\u{1b}[31mb").unwrap(), "ab");
        assert_eq!(shown_name("x\u{1b}]0;t\u{1b}[31my").unwrap(), "xy");
        assert_eq!(shown_name("a\u{1b}[\u{9b}1mb").unwrap(), "ab");
        assert_eq!(shown_name("a\u{1b}\u{1b}[1mb").unwrap(), "ab");
        // A character no sequence can hold ends it and is kept.
        assert_eq!(shown_name("a\u{1b}[1\u{e9}mb").unwrap(), "a\u{e9}mb");
        assert_eq!(
            shown_name(&format!("{}ok", "\u{1b}[".repeat(300_000))).unwrap(),
            "k"
        );
        assert_eq!(
            shown_name(&"n".repeat(70_000)).unwrap().chars().count(),
            MAX_NAME_CHARS
        );
        assert_eq!(shown_name("\u{202e}\n"), None);
        assert_eq!(clean_text("plain"), "plain");
        assert_eq!(clean_text("a\u{1b}[2Jb\0"), "a\\u{1b}[2Jb\\u{0}");
        assert_eq!(clean_text("x\u{2028}y"), "x\\u{2028}y");
        for c in [
            '\u{061c}', '\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{feff}',
        ] {
            assert_eq!(shown_name(&format!("a{c}b")).unwrap(), "ab", "{c:?}");
            assert_eq!(check_name(&format!("a{c}b")), Err(NameError::Unsafe(c)));
        }
        let long = format!("\u{1b}{}", "x".repeat(5000));
        let shown = shown_line(&long);
        assert!(shown.starts_with("\\u{1b}x") && shown.ends_with("(5001 bytes)"));
        assert!(shown.len() < MAX_SHOWN_LINE + 40, "{}", shown.len());
        let many: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        assert_eq!(shown_values(&many[..3]), "0, 1, 2");
        assert!(shown_values(&many).ends_with("18, 19 and 5 more"));
        assert_eq!(fit_width("abcdef", 4), "abc…");
        assert_eq!(fit_width("abc", 4), "abc");
    }
}

#[cfg(test)]
mod look_alike_tests {
    use super::*;

    #[test]
    fn names_that_look_alike_are_warned_about_with_escapes() {
        let w = look_alike_warnings(["hard", "h\u{430}rd", "medium", "hard"]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("\"hard\" and \"h\\u{430}rd\""), "{}", w[0]);
        assert!(look_alike_warnings(["easy", "medium", "hard"]).is_empty());
        assert!(look_alike_warnings(["rn", "m"]).len() == 1);
    }

    /// Names that differ by an accent, by a character that shows as nothing or by a
    /// compatibility form of a letter look alike, and the warning shows the difference.
    #[test]
    fn accents_invisible_characters_and_compatibility_forms_look_alike() {
        for (plain, other, shown) in [
            ("first", "first\u{301}", "first\\u{301}"),
            ("first", "f\u{ee}rst", "f\\u{ee}rst"),
            ("first", "fir\u{ad}st", "fir\\u{ad}st"),
            ("first", "fir\u{34f}st", "fir\\u{34f}st"),
            ("easy", "eas\u{fe0f}y", "eas\\u{fe0f}y"),
            ("easy", "easy\u{e0041}", "easy\\u{e0041}"),
            ("easy", "ea\u{200b}sy", "ea\\u{200b}sy"),
            ("hard", "\u{ff48}ard", "\\u{ff48}ard"),
            ("first", "\u{fb01}rst", "\\u{fb01}rst"),
            ("hard", "h\u{430}\u{308}rd", "h\\u{430}\\u{308}rd"),
        ] {
            let w = look_alike_warnings([plain, other]);
            assert_eq!(w.len(), 1, "{plain:?} and {other:?}: {w:?}");
            assert!(
                w[0].contains(&format!("\"{plain}\" and \"{shown}\"")),
                "{}",
                w[0]
            );
        }
        // Different names, with accents or in other scripts, stay apart.
        assert!(look_alike_warnings(["Dv\u{e4}rg", "Zwerg", "hard", "hardy"]).is_empty());
        assert!(look_alike_warnings(["\u{915}", "\u{915}\u{93f}"]).is_empty());
        assert!(look_alike_warnings(["first", "first"]).is_empty());
    }
}
