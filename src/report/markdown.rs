//! `leaderboard.md`: the same sections as the HTML page, as GitHub-flavoured Markdown.

use super::notes::{notes, shows_pairings};
use super::settings::SettingsSection;
use super::{ReportContext, num, pm, safe};
use crate::record::FaultKind;
use crate::stats::Standings;
use std::fmt::Write;

/// Escapes text for a Markdown table cell (also safe when the Markdown is rendered to HTML);
/// control characters and bidirectional overrides are written as visible escapes first.
/// Bare addresses (`http://x`, `www.x`, `a@b`) are broken up with escapes, so that no name
/// becomes a link where GitHub-flavoured Markdown would make one.
pub(crate) fn md(s: &str) -> String {
    let s = safe(s);
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        let www = c == '.'
            && i >= 3
            && s.get(i - 3..i)
                .is_some_and(|w| w.eq_ignore_ascii_case("www"));
        if www || c == '@' || (c == ':' && s[i..].starts_with("://")) {
            out.push('\\');
            out.push(c);
            continue;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn leaderboard_md(s: &Standings, ctx: &ReportContext) -> String {
    let mut o = String::with_capacity(2048 + 120 * s.rows.len());
    let date = humantime::format_rfc3339_seconds(ctx.generated);
    let _ = writeln!(o, "# {}\n", md(&ctx.page_title()));
    let _ = writeln!(
        o,
        "{} engines, {} games, ranked by Elo (see the notes at the end); generated {date}.\n",
        s.rows.len(),
        s.games
    );
    for w in &ctx.warnings {
        let _ = writeln!(o, "> **Warning:** {}\n", md(w));
    }
    let _ = writeln!(o, "## Standings\n");
    let acc = ctx.accuracy.as_ref();
    let (loss_head, loss_rule) = match acc {
        Some(_) => (" Loss/move |", "--:|"),
        None => ("", ""),
    };
    let _ = writeln!(
        o,
        "| # | Engine | Elo | Games | W | D | L | Score | Margin | Faults |{loss_head}"
    );
    let _ = writeln!(o, "|--:|:--|--:|--:|--:|--:|--:|--:|--:|--:|{loss_rule}");
    for r in &s.rows {
        let loss = match acc {
            Some(_) => format!(" {} |", super::accuracy::loss_cell(acc, &r.engine)),
            None => String::new(),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {}% | {} | {} |{loss}",
            r.rank,
            md(&r.engine),
            pm(r.elo, 1),
            r.wdl.games(),
            r.wdl.wins,
            r.wdl.draws,
            r.wdl.losses,
            num(100.0 * r.wdl.score(), 1),
            pm(r.margin, 2),
            r.faults.total(),
        );
    }
    if shows_pairings(s) {
        pairings(&mut o, s);
        if s.rows.len() > 2 {
            matrix(&mut o, s);
        }
    }
    if let Some(t) = acc {
        super::accuracy::md_section(&mut o, s, t);
    }
    faults(&mut o, s);
    let _ = writeln!(o, "\n## Settings");
    if ctx.settings.is_empty() {
        let _ = writeln!(o, "\nNo tournament.toml was found next to the results.");
    }
    let (shared, own) = super::settings::shared_and_own(&ctx.settings);
    if !shared.is_empty() {
        let _ = writeln!(o, "\n### Every run");
        groups(&mut o, &shared);
    }
    for (sec, own) in ctx.settings.iter().zip(&own) {
        if ctx.settings.len() > 1 {
            let _ = writeln!(o, "\n### {}", md(&sec.heading()));
        }
        groups(&mut o, own);
        engines(&mut o, sec);
    }
    let _ = writeln!(o, "\n## Notes\n");
    for (i, note) in notes(s).iter().enumerate() {
        let _ = writeln!(o, "{}. {}", i + 1, md(note));
    }
    o
}

fn pairings(o: &mut String, s: &Standings) {
    let _ = writeln!(
        o,
        "\n## Pairings\n\n| Engine | Opponent | Games | W-D-L | Score | Elo diff | nElo | LOS | Pairs 0-½-1-1½-2 |\n\
         |:--|:--|--:|:-:|--:|--:|--:|--:|:-:|"
    );
    for h in s.pairings() {
        let t = &h.tally;
        let (w, c) = (t.wdl, t.penta.0);
        let _ = writeln!(
            o,
            "| {} | {} | {} | {}-{}-{} | {}% | {} | {} | {}% | {} |",
            md(&s.row_of(h.engine_index).engine),
            md(&s.row_of(h.opponent_index).engine),
            w.games(),
            w.wins,
            w.draws,
            w.losses,
            num(100.0 * w.score(), 1),
            pm(t.elo(), 1),
            pm(t.nelo(), 1),
            num(100.0 * t.los(), 1),
            if t.by_pairs() {
                format!("{}-{}-{}-{}-{}", c[0], c[1], c[2], c[3], c[4])
            } else {
                String::new()
            }
        );
    }
}

fn matrix(o: &mut String, s: &Standings) {
    let _ = writeln!(
        o,
        "\n## Head to head\n\nScore of the row's engine against the column's, with W-D-L.\n"
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
}

fn faults(o: &mut String, s: &Standings) {
    let _ = writeln!(o, "\n## Faults\n");
    let faulty: Vec<_> = s.rows.iter().filter(|r| r.faults.total() > 0).collect();
    if faulty.is_empty() {
        let _ = writeln!(o, "No engine had a fault.");
        return;
    }
    let _ = write!(o, "| Engine |");
    for kind in FaultKind::ALL {
        let _ = write!(o, " {} |", super::fault_label(kind));
    }
    let _ = writeln!(o, "\n|:--|{}", "--:|".repeat(FaultKind::ALL.len()));
    for r in faulty {
        let _ = write!(o, "| {} |", md(&r.engine));
        for kind in FaultKind::ALL {
            let _ = write!(o, " {} |", r.faults.count(kind));
        }
        o.push('\n');
    }
}

fn groups(o: &mut String, groups: &[super::settings::SettingsGroup]) {
    for g in groups {
        let _ = writeln!(o, "\n**{}**\n", md(g.name));
        for (k, v) in &g.entries {
            let _ = writeln!(o, "- {}: {}", md(k), md(v));
        }
    }
}

fn engines(o: &mut String, sec: &SettingsSection) {
    if sec.engines.is_empty() {
        return;
    }
    let odds = sec.has_time_odds();
    let _ = writeln!(
        o,
        "\n**Engines**\n\n| Engine | Version | Author | Program |{} Options |\n|:--|:--|:--|:--|{}:--|",
        if odds { " Time control |" } else { "" },
        if odds { ":--|" } else { "" }
    );
    for e in &sec.engines {
        let cell = |v: &Option<String>| md(v.as_deref().unwrap_or(""));
        let _ = write!(
            o,
            "| {} | {} | {} | {} |",
            md(&e.name),
            cell(&e.version),
            cell(&e.author),
            cell(&e.program)
        );
        if odds {
            let _ = write!(o, " {} |", cell(&e.time_control));
        }
        let _ = writeln!(o, " {} |", md(&e.options.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_cells() {
        assert_eq!(md("a|b<c>"), "a\\|b&lt;c&gt;");
        assert_eq!(md("x\ny"), "x\\\\u{a}y");
        assert_eq!(md("evil\u{202e}txt"), "evil\\\\u{202e}txt");
        assert_eq!(md("http://evil.example"), "http\\://evil.example");
        assert_eq!(md("see WWW.evil.example"), "see WWW\\.evil.example");
        assert_eq!(md("me@evil.example"), "me\\@evil.example");
        assert_eq!(md("v1.2: fast"), "v1.2: fast");
    }
}
