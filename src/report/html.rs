//! `leaderboard.html`: one self-contained page (inline CSS and SVG; no scripts, fonts or
//! images from anywhere), safe to publish as it is.

use super::{NELO_UNDEFINED_NOTE, ReportContext, num, pm};
use crate::record::FaultKind;
use crate::stats::Standings;
use std::fmt::Write;

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d2330;background:#fff}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #dde;padding-bottom:.2rem}
.meta,.note{color:#556;font-size:.9rem}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}
th,td{padding:.25rem .6rem;border-bottom:1px solid #e4e6ee;text-align:right;white-space:nowrap}
th{background:#f3f4f8}td.name,th.name{text-align:left;max-width:20rem;overflow:hidden;text-overflow:ellipsis}
tr:nth-child(even) td{background:#fafbfd}
.matrix td{text-align:center}.matrix td.name{text-align:left}.matrix td.self{background:#eee}
.good{color:#0a6b2f}.bad{color:#a0241b}
svg text{font-family:inherit;font-size:12px;fill:#1d2330}
";

pub(crate) fn leaderboard_html(s: &Standings, ctx: &ReportContext) -> String {
    let mut o = String::new();
    let title = esc(&ctx.title);
    let date = humantime::format_rfc3339_seconds(ctx.generated);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    let rating = match &s.anchor {
        Some((name, elo)) => format!("anchored at {} = {elo}", esc(name)),
        None => "mean-centred".to_string(),
    };
    let _ = writeln!(
        o,
        "<p class=\"meta\">{} games · generated {date} · Elo: joint Bradley-Terry maximum likelihood, {rating}, \
         95% intervals from the Fisher information</p>",
        s.games
    );

    // Standings.
    let _ = writeln!(
        o,
        "<section id=\"standings\">\n<h2>Standings</h2>\n<table id=\"standings-table\">\n<thead><tr>\
         <th>#</th><th class=\"name\">Engine</th><th>Elo</th><th>nElo</th><th>Games</th><th>W</th><th>D</th><th>L</th>\
         <th>Score</th><th>Mean margin</th></tr></thead>\n<tbody>"
    );
    for r in &s.rows {
        let name = esc(&r.engine);
        let _ = writeln!(
            o,
            "<tr class=\"engine-row\" data-rank=\"{}\"><td>{}</td><td class=\"name\" title=\"{name}\">{name}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td><td>{}</td></tr>",
            r.rank,
            r.rank,
            esc(&pm(r.elo, 1)),
            esc(&pm(r.nelo, 1)),
            r.wdl.games(),
            r.wdl.wins,
            r.wdl.draws,
            r.wdl.losses,
            num(100.0 * r.wdl.score(), 1),
            esc(&pm(r.margin, 2)),
        );
    }
    let _ = writeln!(o, "</tbody>\n</table>");
    if s.groups.len() > 1 {
        let _ = writeln!(
            o,
            "<p class=\"note\">The engines form {} groups that never met; ratings are comparable only within a group:</p>\n<ul>",
            s.groups.len()
        );
        for (i, g) in s.groups.iter().enumerate() {
            let names: Vec<String> = g.engines.iter().map(|n| esc(n)).collect();
            let _ = writeln!(o, "<li>group {}: {}</li>", i + 1, names.join(", "));
        }
        let _ = writeln!(o, "</ul>");
    }
    if s.groups.iter().any(|g| g.regularized) {
        let _ = writeln!(
            o,
            "<p class=\"note\">Some engines won or lost every game against the rest of their group: \
             one virtual draw per pairing was added there to keep the ratings finite.</p>"
        );
    }
    if s.rows.iter().any(|r| r.nelo.value.is_nan()) {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(NELO_UNDEFINED_NOTE));
    }
    let _ = writeln!(o, "</section>");

    // Chart.
    let _ = writeln!(
        o,
        "<section id=\"chart\">\n<h2>Elo with 95% interval</h2>\n{}\n</section>",
        chart(s)
    );

    // Head to head.
    let _ = writeln!(
        o,
        "<section id=\"h2h\">\n<h2>Head to head</h2>\n<p class=\"note\">Score of the row's engine against \
         the column's engine, with wins-draws-losses; hover for the Elo difference.</p>\n\
         <table class=\"matrix\" id=\"h2h-table\">\n<thead><tr><th class=\"name\">Engine</th>"
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
            match s.h2h(a.index, b.index) {
                Some(h) => {
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
                        esc(&pm(w.elo(), 1)),
                        num(100.0 * score, 1),
                        w.wins,
                        w.draws,
                        w.losses
                    );
                }
                None => o.push_str("<td></td>"),
            }
        }
        let _ = writeln!(o, "</tr>");
    }
    let _ = writeln!(o, "</tbody>\n</table>\n</section>");

    // Faults.
    let _ = write!(
        o,
        "<section id=\"faults\">\n<h2>Faults</h2>\n<table id=\"faults-table\">\n<thead><tr><th class=\"name\">Engine</th>"
    );
    for kind in FaultKind::ALL {
        let _ = write!(o, "<th>{}</th>", super::fault_label(kind));
    }
    let _ = writeln!(o, "</tr></thead>\n<tbody>");
    for r in &s.rows {
        let _ = write!(o, "<tr><td class=\"name\">{}</td>", esc(&r.engine));
        for kind in FaultKind::ALL {
            let _ = write!(o, "<td>{}</td>", r.faults.count(kind));
        }
        let _ = writeln!(o, "</tr>");
    }
    let _ = writeln!(o, "</tbody>\n</table>\n</section>");

    // Settings.
    let _ = writeln!(o, "<section id=\"settings\">\n<h2>Settings</h2>");
    if ctx.settings.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note\">No tournament.toml was found next to the results.</p>"
        );
    }
    for sec in &ctx.settings {
        let _ = writeln!(o, "<h3>{}</h3>\n<table>", esc(&sec.label));
        for (k, v) in &sec.entries {
            let _ = writeln!(
                o,
                "<tr><th class=\"name\">{}</th><td class=\"name\">{}</td></tr>",
                esc(k),
                esc(v)
            );
        }
        let _ = writeln!(o, "</table>");
    }
    let _ = writeln!(
        o,
        "<p class=\"meta\">Games counted: {} · duplicate ids ignored: {} · interrupted or self-play games ignored: {} · \
         games without their pair partner: {}</p>\n</section>\n</body>\n</html>",
        s.games, s.duplicates, s.ignored, s.unpaired
    );
    o
}

/// A round step (1, 2 or 5 times a power of ten) giving about `target` ticks over `range`.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// A horizontal chart: one line per engine, its Elo as a dot and its interval as a bar.
fn chart(s: &Standings) -> String {
    let label_w = 190.0;
    let plot_w = 560.0;
    let row_h = 24.0;
    let top = 10.0;
    let n = s.rows.len().max(1) as f64;
    let height = top + n * row_h + 34.0;
    let width = label_w + plot_w + 70.0;
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for r in &s.rows {
        if r.elo.value.is_finite() {
            let e = if r.elo.error.is_finite() {
                r.elo.error
            } else {
                0.0
            };
            lo = lo.min(r.elo.value - e);
            hi = hi.max(r.elo.value + e);
        }
    }
    if hi - lo < 20.0 {
        lo -= 10.0;
        hi += 10.0;
    }
    let step = nice_step(hi - lo, 6.0);
    lo = (lo / step).floor() * step;
    hi = (hi / step).ceil() * step;
    let x = |v: f64| label_w + (v - lo) / (hi - lo) * plot_w;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg id=\"elo-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"Elo of each engine with its 95% interval\">"
    );
    let axis_y = top + n * row_h;
    let mut t = lo;
    while t <= hi + step * 1e-6 {
        let xt = x(t);
        let stroke = if t.abs() < step * 1e-6 {
            "#889"
        } else {
            "#e4e6ee"
        };
        let _ = writeln!(
            o,
            "<line x1=\"{xt:.1}\" y1=\"{top}\" x2=\"{xt:.1}\" y2=\"{axis_y}\" stroke=\"{stroke}\"/>\
             <text x=\"{xt:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            axis_y + 16.0,
            t.round()
        );
        t += step;
    }
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">Elo</text>",
        label_w + plot_w / 2.0,
        axis_y + 31.0
    );
    for (i, r) in s.rows.iter().enumerate() {
        let y = top + i as f64 * row_h + row_h / 2.0;
        let label: String = r.engine.chars().take(28).collect();
        let _ = writeln!(
            o,
            "<g class=\"chart-row\" data-rank=\"{}\"><title>{}: {}</title>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}. {}</text>",
            r.rank,
            esc(&r.engine),
            esc(&pm(r.elo, 1)),
            label_w - 8.0,
            y + 4.0,
            r.rank,
            esc(&label)
        );
        if r.elo.value.is_finite() {
            let cx = x(r.elo.value);
            if r.elo.error.is_finite() && r.elo.error > 0.0 {
                let (x1, x2) = (x(r.elo.value - r.elo.error), x(r.elo.value + r.elo.error));
                let _ = write!(
                    o,
                    "<line x1=\"{x1:.1}\" y1=\"{y:.1}\" x2=\"{x2:.1}\" y2=\"{y:.1}\" stroke=\"#5470c6\" stroke-width=\"3\"/>\
                     <line x1=\"{x1:.1}\" y1=\"{:.1}\" x2=\"{x1:.1}\" y2=\"{:.1}\" stroke=\"#5470c6\"/>\
                     <line x1=\"{x2:.1}\" y1=\"{:.1}\" x2=\"{x2:.1}\" y2=\"{:.1}\" stroke=\"#5470c6\"/>",
                    y - 6.0,
                    y + 6.0,
                    y - 6.0,
                    y + 6.0
                );
            }
            let _ = write!(
                o,
                "<circle cx=\"{cx:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"#1d2330\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                label_w + plot_w + 8.0,
                y + 4.0,
                r.elo.value.round()
            );
        }
        let _ = writeln!(o, "</g>");
    }
    o.push_str("</svg>");
    o
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
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(600.0, 6.0), 100.0);
        assert_eq!(nice_step(130.0, 6.0), 50.0);
        assert_eq!(nice_step(12.0, 6.0), 2.0);
    }
}
