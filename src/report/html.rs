//! `leaderboard.html`: one self-contained page (inline CSS and SVG; no scripts, fonts or
//! images from anywhere), safe to publish as it is, readable from a phone (every table
//! scrolls inside its own box, the chart scales) to a desktop.
//!
//! Sections: standings, chart, pairings and head-to-head matrix (small fields only), faults,
//! settings of each run with its engines, and the notes that explain the numbers.

use super::html_chart::chart;
use super::notes::{notes, shows_pairings};
use super::settings::{EngineInfo, SettingsSection};
use super::{ReportContext, num, pm, safe};
use crate::record::FaultKind;
use crate::stats::{AccuracyTable, PairingTally, Standings};
use std::collections::HashMap;
use std::fmt::Write;

/// Escapes text for HTML element content and quoted attribute values; control characters
/// and bidirectional overrides are written as visible escapes first.
pub(crate) fn esc(s: &str) -> String {
    let s = safe(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.25rem 2rem;color:#1d2330;background:#fff;line-height:1.45;overflow-wrap:anywhere}
h1{font-size:1.7rem;margin:.6rem 0 .2rem;line-height:1.2}
h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #dde;padding-bottom:.2rem}
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}h4{font-size:.95rem;margin:1rem 0 .3rem;color:#445}
.meta,.note{color:#556;font-size:.9rem}
.warning{background:#fff4d6;border-left:4px solid #c80;padding:.4rem .7rem}
.wrap{overflow-x:auto;max-width:100%;margin:.5rem 0}
table{border-collapse:collapse;font-size:.9rem}
th,td{padding:.25rem .6rem;border-bottom:1px solid #e4e6ee;text-align:right;white-space:nowrap;vertical-align:top}
th{background:#f3f4f8}
td.name,th.name{text-align:left;max-width:20rem;overflow:hidden;text-overflow:ellipsis}
td.text{text-align:left;white-space:normal;min-width:6rem;max-width:24rem}
tr:nth-child(even) td{background:#fafbfd}
.ver{color:#667;font-size:.8rem;margin-left:.35rem}
.matrix td{text-align:center}.matrix td.name{text-align:left}.matrix td.self{background:#eee}
.good{color:#0a6b2f}.bad{color:#a0241b}
#elo-chart{display:block;width:100%;height:auto}
svg text{font-family:inherit;font-size:12px;fill:#1d2330}
dl.settings{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.15rem 1.2rem;margin:.3rem 0;font-size:.92rem}
dl.settings dt{color:#445}dl.settings dd{margin:0}
ol.notes{padding-left:1.3rem;font-size:.92rem;color:#334}ol.notes li{margin:.35rem 0}
@media (max-width:40rem){body{padding:.6rem .7rem 1.5rem}h1{font-size:1.35rem}th,td{padding:.2rem .4rem}
dl.settings{grid-template-columns:1fr}dl.settings dd{margin:0 0 .4rem .8rem}}
@media (max-width:31.25rem){th,td{padding:.2rem .3rem}#standings-table .ver{display:none}}
";

/// The whole page.
pub(crate) fn leaderboard_html(s: &Standings, ctx: &ReportContext) -> String {
    let mut o = String::with_capacity(4096 + 400 * s.rows.len());
    let title = esc(&ctx.page_title());
    let date = humantime::format_rfc3339_seconds(ctx.generated);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>{title}</h1>\n\
         <p class=\"meta\">{} engines · {} games · ranked by Elo (see the notes at the end) · generated {date}</p>\n",
        s.rows.len(),
        s.games
    );
    for w in &ctx.warnings {
        let _ = writeln!(
            o,
            "<p class=\"warning\"><strong>Warning:</strong> {}</p>",
            esc(w)
        );
    }
    let engines = engine_infos(ctx);
    standings_section(&mut o, s, &engines, ctx.accuracy.as_ref());
    let _ = writeln!(
        o,
        "<section id=\"chart\">\n<h2>Elo with 95% interval</h2>\n{}\n</section>",
        chart(s)
    );
    if let Some(t) = &ctx.accuracy {
        super::accuracy::html_section(&mut o, s, t);
    }
    if shows_pairings(s) {
        pairings_section(&mut o, s);
        if s.rows.len() > 2 {
            matrix_section(&mut o, s);
        }
    }
    faults_section(&mut o, s);
    settings_section(&mut o, ctx);
    let _ = writeln!(
        o,
        "<section id=\"notes\">\n<h2>Notes</h2>\n<ol class=\"notes\">"
    );
    for note in notes(s) {
        let _ = writeln!(o, "<li>{}</li>", esc(&note));
    }
    let _ = writeln!(o, "</ol>\n</section>\n</main>\n</body>\n</html>");
    o
}

/// What the runs' settings say about each engine, by name (the first run that names it).
fn engine_infos(ctx: &ReportContext) -> HashMap<&str, &EngineInfo> {
    let mut map = HashMap::new();
    for e in ctx.settings.iter().flat_map(|s| &s.engines) {
        map.entry(e.name.as_str()).or_insert(e);
    }
    map
}

/// An engine's name cell, with its version when known and its author in the tooltip.
fn name_cell(name: &str, info: Option<&&EngineInfo>) -> String {
    let n = esc(name);
    let mut tip = n.clone();
    let mut version = String::new();
    if let Some(e) = info {
        if let Some(v) = &e.version {
            version = format!(" <span class=\"ver\">{}</span>", esc(v));
            let _ = write!(tip, " {}", esc(v));
        }
        if let Some(a) = &e.author {
            let _ = write!(tip, " by {}", esc(a));
        }
    }
    format!("<td class=\"name\" title=\"{tip}\">{n}{version}</td>")
}

fn standings_section(
    o: &mut String,
    s: &Standings,
    engines: &HashMap<&str, &EngineInfo>,
    acc: Option<&AccuracyTable>,
) {
    let loss_head = if acc.is_some() {
        "<th>Loss/move</th>"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "<section id=\"standings\">\n<h2>Standings</h2>\n<div class=\"wrap\">\n<table id=\"standings-table\">\n\
         <thead><tr><th>#</th><th class=\"name\">Engine</th><th>Elo</th><th>Score</th><th>Games</th><th>W</th>\
         <th>D</th><th>L</th><th>Margin</th><th>Faults</th>{loss_head}</tr></thead>\n<tbody>"
    );
    for r in &s.rows {
        let loss = match acc {
            Some(_) => format!("<td>{}</td>", super::accuracy::loss_cell(acc, &r.engine)),
            None => String::new(),
        };
        let _ = writeln!(
            o,
            "<tr class=\"engine-row\" data-rank=\"{}\"><td>{}</td>{}<td>{}</td><td>{}%</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{loss}</tr>",
            r.rank,
            r.rank,
            name_cell(&r.engine, engines.get(r.engine.as_str())),
            esc(&pm(r.elo, 1)),
            num(100.0 * r.wdl.score(), 1),
            r.wdl.games(),
            r.wdl.wins,
            r.wdl.draws,
            r.wdl.losses,
            esc(&pm(r.margin, 2)),
            r.faults.total(),
        );
    }
    let _ = writeln!(o, "</tbody>\n</table>\n</div>");
    if s.groups.len() > 1 {
        let _ = writeln!(
            o,
            "<p class=\"note\">The engines form {} groups that never met: ratings compare only \
             within a group (see the notes).</p>",
            s.groups.len()
        );
    }
    let _ = writeln!(o, "</section>");
}

/// A pairing's Elo difference, nElo and LOS cells.
fn pairing_cells(t: &PairingTally) -> String {
    format!(
        "<td>{}</td><td>{}</td><td>{}%</td>",
        esc(&pm(t.elo(), 1)),
        esc(&pm(t.nelo(), 1)),
        num(100.0 * t.los(), 1)
    )
}

fn pairings_section(o: &mut String, s: &Standings) {
    let _ = writeln!(
        o,
        "<section id=\"pairings\">\n<h2>Pairings</h2>\n<p class=\"note\">Each pairing from the \
         higher-ranked engine's side; statistics from game pairs where pairs were completed \
         (see the notes).</p>\n<div class=\"wrap\">\n<table id=\"pairings-table\">\n<thead><tr>\
         <th class=\"name\">Engine</th><th class=\"name\">Opponent</th><th>Games</th><th>W-D-L</th>\
         <th>Score</th><th>Elo diff</th><th>nElo</th><th>LOS</th><th>Pairs 0-½-1-1½-2</th></tr></thead>\n<tbody>"
    );
    for h in s.pairings() {
        let (a, b) = (s.row_of(h.engine_index), s.row_of(h.opponent_index));
        let t = &h.tally;
        let w = t.wdl;
        let c = t.penta.0;
        let _ = writeln!(
            o,
            "<tr class=\"pairing-row\"><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td>\
             <td>{}-{}-{}</td><td>{}%</td>{}<td>{}</td></tr>",
            esc(&a.engine),
            esc(&b.engine),
            w.games(),
            w.wins,
            w.draws,
            w.losses,
            num(100.0 * w.score(), 1),
            pairing_cells(t),
            if t.by_pairs() {
                format!("{}-{}-{}-{}-{}", c[0], c[1], c[2], c[3], c[4])
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(o, "</tbody>\n</table>\n</div>\n</section>");
}

fn matrix_section(o: &mut String, s: &Standings) {
    let _ = writeln!(
        o,
        "<section id=\"h2h\">\n<h2>Head to head</h2>\n<p class=\"note\">Score of the row's engine \
         against the column's, with wins-draws-losses; hover for the Elo difference.</p>\n\
         <div class=\"wrap\">\n<table class=\"matrix\" id=\"h2h-table\">\n<thead><tr><th class=\"name\">Engine</th>"
    );
    for r in &s.rows {
        let _ = write!(o, "<th title=\"{}\">{}</th>", esc(&r.engine), r.rank);
    }
    let _ = writeln!(o, "</tr></thead>\n<tbody>");
    for a in &s.rows {
        let _ = write!(
            o,
            "<tr><td class=\"name\">{}. {}</td>",
            a.rank,
            esc(&a.engine)
        );
        for b in &s.rows {
            if a.index == b.index {
                o.push_str("<td class=\"self\"></td>");
                continue;
            }
            let Some(h) = s.h2h(a.index, b.index) else {
                o.push_str("<td></td>");
                continue;
            };
            let w = h.tally.wdl;
            let score = w.score();
            let class = if score > 0.5 {
                "good"
            } else if score < 0.5 {
                "bad"
            } else {
                ""
            };
            let _ = write!(
                o,
                "<td class=\"{class}\" title=\"{} vs {}: Elo {}\">{}%<br><small>{}-{}-{}</small></td>",
                esc(&a.engine),
                esc(&b.engine),
                esc(&pm(h.tally.elo(), 1)),
                num(100.0 * score, 1),
                w.wins,
                w.draws,
                w.losses
            );
        }
        let _ = writeln!(o, "</tr>");
    }
    let _ = writeln!(o, "</tbody>\n</table>\n</div>\n</section>");
}

fn faults_section(o: &mut String, s: &Standings) {
    let _ = writeln!(o, "<section id=\"faults\">\n<h2>Faults</h2>");
    let faulty: Vec<_> = s.rows.iter().filter(|r| r.faults.total() > 0).collect();
    if faulty.is_empty() {
        let _ = writeln!(o, "<p>No engine had a fault.</p>\n</section>");
        return;
    }
    let _ = write!(
        o,
        "<div class=\"wrap\">\n<table id=\"faults-table\">\n<thead><tr><th class=\"name\">Engine</th>"
    );
    for kind in FaultKind::ALL {
        let _ = write!(o, "<th>{}</th>", super::fault_label(kind));
    }
    let _ = writeln!(o, "</tr></thead>\n<tbody>");
    for r in faulty {
        let _ = write!(o, "<tr><td class=\"name\">{}</td>", esc(&r.engine));
        for kind in FaultKind::ALL {
            let _ = write!(o, "<td>{}</td>", r.faults.count(kind));
        }
        let _ = writeln!(o, "</tr>");
    }
    let _ = writeln!(o, "</tbody>\n</table>\n</div>\n</section>");
}

fn settings_section(o: &mut String, ctx: &ReportContext) {
    let _ = writeln!(o, "<section id=\"settings\">\n<h2>Settings</h2>");
    if ctx.settings.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note\">No tournament.toml was found next to the results.</p>"
        );
    }
    let several = ctx.settings.len() > 1;
    let groups = |o: &mut String, groups: &[super::settings::SettingsGroup]| {
        for g in groups {
            let _ = writeln!(o, "<h4>{}</h4>\n<dl class=\"settings\">", esc(g.name));
            for (k, v) in &g.entries {
                let _ = writeln!(o, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
            }
            let _ = writeln!(o, "</dl>");
        }
    };
    let (shared, own) = super::settings::shared_and_own(&ctx.settings);
    if !shared.is_empty() {
        let _ = writeln!(o, "<h3>Every run</h3>");
        groups(o, &shared);
    }
    for (sec, own) in ctx.settings.iter().zip(&own) {
        if several {
            let _ = writeln!(o, "<h3>{}</h3>", esc(&sec.heading()));
        }
        groups(o, own);
        engines_table(o, sec);
    }
    let _ = writeln!(o, "</section>");
}

/// The engines of a run: version and author (from their `hello`), program, own time control
/// (with time odds), options.
fn engines_table(o: &mut String, sec: &SettingsSection) {
    if sec.engines.is_empty() {
        return;
    }
    let odds = sec.has_time_odds();
    let _ = write!(
        o,
        "<h4>Engines</h4>\n<div class=\"wrap\">\n<table class=\"engines\">\n<thead><tr><th class=\"name\">Engine</th>\
         <th class=\"name\">Version</th><th class=\"name\">Author</th><th class=\"name\">Program</th>"
    );
    if odds {
        o.push_str("<th class=\"name\">Time control</th>");
    }
    let _ = writeln!(o, "<th class=\"name\">Options</th></tr></thead>\n<tbody>");
    for e in &sec.engines {
        let cell = |v: &Option<String>| esc(v.as_deref().unwrap_or(""));
        let _ = write!(
            o,
            "<tr><td class=\"name\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td>",
            esc(&e.name),
            cell(&e.version),
            cell(&e.author),
            cell(&e.program)
        );
        if odds {
            let _ = write!(o, "<td class=\"text\">{}</td>", cell(&e.time_control));
        }
        let _ = writeln!(
            o,
            "<td class=\"text\">{}</td></tr>",
            esc(&e.options.join(", "))
        );
    }
    let _ = writeln!(o, "</tbody>\n</table>\n</div>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_is_self_contained() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(esc("a\u{202e}b\u{1b}c"), "a\\u{202e}b\\u{1b}c");
        let s = super::super::tests::sample();
        let page = leaderboard_html(&s, &ReportContext::default());
        assert!(page.contains("&lt;b&gt;evil&lt;/b&gt; &amp; co"));
        assert!(!page.contains("<b>evil"));
        assert!(!page.contains("<script"));
        assert!(!page.contains("src="));
        assert!(!page.contains("href="));
        assert!(!page.contains("@import"));
        assert!(!page.contains("url("));
        assert_eq!(page.matches("class=\"engine-row\"").count(), 4);
        assert_eq!(page.matches("class=\"chart-row\"").count(), 4);
        assert_eq!(page.matches("class=\"pairing-row\"").count(), 6);
        assert!(page.contains("id=\"h2h-table\""));
        // The notes come last.
        let notes = page.find("id=\"notes\"").unwrap();
        for id in [
            "standings",
            "chart",
            "pairings",
            "h2h",
            "faults",
            "settings",
        ] {
            assert!(page.find(&format!("id=\"{id}\"")).unwrap() < notes, "{id}");
        }
    }
}
