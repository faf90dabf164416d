//! `leaderboard.md`.

use super::{NELO_UNDEFINED_NOTE, ReportContext, num, pm};
use crate::record::FaultKind;
use crate::stats::Standings;
use std::fmt::Write;

/// Escapes text for a Markdown table cell (also safe when the Markdown is rendered to HTML).
pub(crate) fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn leaderboard_md(s: &Standings, ctx: &ReportContext) -> String {
    let mut o = String::new();
    let date = humantime::format_rfc3339_seconds(ctx.generated);
    let _ = writeln!(o, "# {}\n", md(&ctx.title));
    let _ = writeln!(
        o,
        "{} games, generated {date}. Elo: joint Bradley-Terry maximum likelihood{}, 95% intervals.\n",
        s.games,
        match &s.anchor {
            Some((name, elo)) => format!(", anchored at {} = {elo}", md(name)),
            None => ", mean 0".to_string(),
        }
    );
    let _ = writeln!(o, "## Standings\n");
    let _ = writeln!(
        o,
        "| # | Engine | Elo | nElo | Games | W | D | L | Score | Margin |"
    );
    let _ = writeln!(o, "|--:|:--|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in &s.rows {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {}% | {} |",
            r.rank,
            md(&r.engine),
            pm(r.elo, 1),
            pm(r.nelo, 1),
            r.wdl.games(),
            r.wdl.wins,
            r.wdl.draws,
            r.wdl.losses,
            num(100.0 * r.wdl.score(), 1),
            pm(r.margin, 2),
        );
    }
    if s.groups.len() > 1 {
        let _ = writeln!(
            o,
            "\nThe engines form {} groups that never met; ratings are comparable only within a group:\n",
            s.groups.len()
        );
        for (i, g) in s.groups.iter().enumerate() {
            let names: Vec<String> = g.engines.iter().map(|n| md(n)).collect();
            let _ = writeln!(o, "- group {}: {}", i + 1, names.join(", "));
        }
    }
    if s.groups.iter().any(|g| g.regularized) {
        let _ = writeln!(
            o,
            "\nSome engines won or lost every game against the rest of their group: one virtual \
             draw per pairing was added there to keep the ratings finite."
        );
    }
    if s.rows.iter().any(|r| r.nelo.value.is_nan()) {
        let _ = writeln!(o, "\n{NELO_UNDEFINED_NOTE}");
    }

    let _ = writeln!(o, "\n## Head to head\n");
    let _ = writeln!(
        o,
        "Score of the row's engine against the column's, with W-D-L.\n"
    );
    let mut head = String::from("| Engine |");
    let mut rule = String::from("|:--|");
    for r in &s.rows {
        let _ = write!(head, " {} |", r.rank);
        rule.push_str(":-:|");
    }
    let _ = writeln!(o, "{head}\n{rule}");
    for a in &s.rows {
        let _ = write!(o, "| {}. {} |", a.rank, md(&a.engine));
        for b in &s.rows {
            match s.h2h(a.index, b.index) {
                Some(h) => {
                    let w = h.tally.wdl;
                    let _ = write!(
                        o,
                        " {}% ({}-{}-{}) |",
                        num(100.0 * w.score(), 1),
                        w.wins,
                        w.draws,
                        w.losses
                    );
                }
                None => o.push_str(" |"),
            }
        }
        o.push('\n');
    }

    let _ = writeln!(o, "\n## Faults\n");
    let _ = write!(o, "| Engine |");
    for kind in FaultKind::ALL {
        let _ = write!(o, " {} |", super::fault_label(kind));
    }
    let _ = writeln!(o, "\n|:--|{}", "--:|".repeat(FaultKind::ALL.len()));
    for r in &s.rows {
        let _ = write!(o, "| {} |", md(&r.engine));
        for kind in FaultKind::ALL {
            let _ = write!(o, " {} |", r.faults.count(kind));
        }
        o.push('\n');
    }

    if !ctx.settings.is_empty() {
        let _ = writeln!(o, "\n## Settings");
        for sec in &ctx.settings {
            let _ = writeln!(o, "\n### {}\n", md(&sec.label));
            let _ = writeln!(o, "| Setting | Value |\n|:--|:--|");
            for (k, v) in &sec.entries {
                let _ = writeln!(o, "| {} | {} |", md(k), md(v));
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_cells() {
        assert_eq!(md("a|b<c>"), "a\\|b&lt;c&gt;");
        assert_eq!(md("x\ny"), "x y");
    }
}
