//! Standings for a terminal: a table that fits a given width (names cut with `…`, at most
//! a given number of rows), and a one-line summary.

use super::{num, pm};
use crate::record::{clean_text, fit_width};
use crate::stats::Standings;

/// The columns besides the name take this many characters (with their separators).
const FIXED: usize = 3 + 2 + 2 + 13 + 2 + 6 + 2 + 6 + 2 + 7 + 2 + 6;

/// A name as a terminal shows it: safe and at most `width` columns wide (a wide letter, as
/// in `ｈａｒｄ`, takes two).
fn shown(name: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let name = clean_text(name);
    let mut out = fit_width(&name, width).into_owned();
    let columns = |s: &str| s.chars().map(|c| c.width().unwrap_or(0)).sum::<usize>();
    while columns(&out) > width {
        out.pop();
        if out.pop().is_some() {
            out.push('…');
        }
    }
    out
}

/// [`shown`], padded with spaces to `width` columns, for a column of a table.
fn padded(name: &str, width: usize) -> String {
    let mut out = shown(name, width);
    let pad = width.saturating_sub(unicode_width::UnicodeWidthStr::width(out.as_str()));
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

/// The standings as a table at most `width` characters wide with at most `max_rows`
/// engines (the rest summed up in a last line), best first (by Elo, as every report).
pub(crate) fn standings_table(s: &Standings, width: usize, max_rows: usize) -> String {
    // A name that looks like another is shown escaped, as on the pages.
    let renamed = super::look_alike_renames(s);
    let shown = |name: &str| renamed.get(name).map_or(name, String::as_str).to_string();
    let longest = s
        .rows
        .iter()
        .map(|r| unicode_width::UnicodeWidthStr::width(&*clean_text(&shown(&r.engine))))
        .max()
        .unwrap_or(0);
    let name_width = longest
        .max(6)
        .min(width.saturating_sub(FIXED).max(8))
        .min(crate::record::MAX_NAME_CHARS);
    // Else a finite Elo beside a score of 100% reads as a mistake (the leaderboard's notes
    // say more). The note takes an engine's line where lines are counted.
    let note = s.groups.iter().any(|g| g.regularized);
    let max_rows = match note && max_rows < s.rows.len() {
        true => max_rows.saturating_sub(1).max(1),
        false => max_rows,
    };
    let mut out = format!(
        "{:>3}  {:<name_width$}  {:>13}  {:>6}  {:>6}  {:>7}  {:>6}\n",
        "#", "engine", "elo", "games", "score", "margin", "faults"
    );
    for r in s.rows.iter().take(max_rows) {
        out.push_str(&format!(
            "{:>3}  {}  {:>13}  {:>6}  {:>5}%  {:>7}  {:>6}\n",
            r.rank,
            padded(&shown(&r.engine), name_width),
            pm(r.elo, 0),
            r.wdl.games(),
            num(100.0 * r.wdl.score(), 1),
            num(r.margin.value, 2),
            r.faults.total(),
        ));
    }
    if s.rows.len() > max_rows {
        out.push_str(&format!("     ... {} more\n", s.rows.len() - max_rows));
    }
    if note {
        out.push_str(
            "(elo counts one unplayed draw a pairing: an engine won or lost every game)\n",
        );
    }
    out
}

/// The standings on one line: `name elo±error` per engine, best first.
pub(crate) fn standings_line(s: &Standings) -> String {
    s.rows
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                shown(&r.engine, crate::record::MAX_NAME_CHARS),
                pm(r.elo, 0).replace(" ± ", "±")
            )
        })
        .collect::<Vec<_>>()
        .join("  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wide letters take two columns: a name of them is cut and padded by the columns it
    /// takes, so the columns after it line up.
    #[test]
    fn wide_letters_keep_the_columns_in_line() {
        use unicode_width::UnicodeWidthStr;
        assert_eq!(padded("ｈａｒｄ", 10).width(), 10);
        assert_eq!(padded("ｈａｒｄ", 5).width(), 5);
        assert_eq!(padded("hard", 6), "hard  ");
        assert_eq!(shown("hard", 6), "hard");
        // The one-line standings are not a table: a name is not padded there.
        let line = standings_line(&super::super::tests::sample());
        assert!(line.contains("  plain -30"), "{line}");
        assert!(
            shown("ｈａｒｄｅｒ", 5).ends_with('…'),
            "{}",
            shown("ｈａｒｄｅｒ", 5)
        );
    }

    #[test]
    fn tables_fit_the_width_and_the_rows() {
        let s = super::super::tests::sample();
        let t = standings_table(&s, 80, 24);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert_eq!(t.lines().count(), 5);
        let t = standings_table(&s, 50, 2);
        assert!(t.lines().all(|l| l.chars().count() <= 8 + FIXED), "{t}");
        assert!(t.ends_with("... 2 more\n"), "{t}");
        assert!(standings_line(&s).contains("plain"));
    }

    /// A finite Elo beside a score of 100% comes with the words that explain it, and only
    /// then.
    #[test]
    fn virtual_draws_are_noted_under_the_table() {
        let s = super::super::tests::sample();
        assert!(!standings_table(&s, 80, 24).contains("unplayed draw"));
        let table = standings_table(&super::super::tests::swept(), 80, 24);
        assert!(
            table.ends_with("an engine won or lost every game)\n"),
            "{table}"
        );
        assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    }

    /// `hard` and `h\u{430}rd` (a Cyrillic a) are two engines: the table shows the
    /// look-alike escaped, as the pages do.
    #[test]
    fn a_look_alike_name_is_shown_escaped_in_the_table() {
        let mut t = crate::stats::Tally::new();
        t.add(&crate::record::GameRow {
            game: "t-1",
            pair: Some(1),
            south: "hard",
            north: "h\u{430}rd",
            result: crate::record::GameResult::SouthWins,
            south_score: Some(30),
            north_score: Some(18),
            termination: crate::record::Termination::Normal,
            loser: None,
            repeat: false,
        });
        // A third engine whose name is that escape typed out is shown otherwise.
        t.add(&crate::record::GameRow {
            game: "t-2",
            pair: Some(1),
            south: r"h\u{430}rd",
            north: "hard",
            result: crate::record::GameResult::SouthWins,
            south_score: Some(30),
            north_score: Some(18),
            termination: crate::record::Termination::Normal,
            loser: None,
            repeat: false,
        });
        let table = standings_table(&t.standings(None).unwrap(), 100, 10);
        assert!(table.contains(r" h\u{430}rd "), "{table}");
        assert!(table.contains(r" h\\u{430}rd "), "{table}");
        assert!(!table.contains("h\u{430}rd"), "{table}");
        assert!(table.contains(" hard "), "{table}");
    }

    #[test]
    fn hostile_names_are_cut_and_escaped() {
        let mut t = crate::stats::Tally::new();
        let long = "n".repeat(70_000);
        let evil = "x\u{1b}]0;pwned\u{7}";
        for (i, (a, b)) in [(long.as_str(), evil), (evil, long.as_str())]
            .iter()
            .enumerate()
        {
            let id = format!("t-{}", i + 1);
            t.add(&crate::record::GameRow {
                game: &id,
                pair: Some(1),
                south: a,
                north: b,
                result: crate::record::GameResult::SouthWins,
                south_score: Some(30),
                north_score: Some(18),
                termination: crate::record::Termination::Normal,
                loser: None,
                repeat: false,
            });
        }
        let s = t.standings(None).unwrap();
        let table = standings_table(&s, 80, 10);
        assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
        assert!(
            !table.contains('\u{1b}') && !table.contains('\u{7}'),
            "{table:?}"
        );
        assert!(!standings_line(&s).contains('\u{1b}'));
    }
}
