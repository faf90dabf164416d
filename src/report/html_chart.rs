//! The leaderboard's chart: one line per engine (the best rated, at most
//! [`CHART_MAX_ENGINES`]), its Elo as a dot and its 95% interval as a bar, drawn as inline
//! SVG that scales down to the width of the page.

use super::html::esc;
use super::{CHART_MAX_ENGINES, pm};
use crate::record::fit_width;
use crate::stats::{StandingRow, Standings};
use std::fmt::Write;

/// Characters of a name shown beside its line (the whole name is in the tooltip).
const LABEL_CHARS: usize = 20;

/// A round step (1, 2 or 5 times a power of ten) giving about `target` ticks over `range`.
pub(crate) fn nice_step(range: f64, target: f64) -> f64 {
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

/// The Elo range the axis covers, rounded out to whole steps: (low, high, step).
fn axis(rows: &[StandingRow]) -> (f64, f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for r in rows {
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
    let step = nice_step(hi - lo, 5.0);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

/// The chart as an `<svg>` element.
pub(crate) fn chart(s: &Standings) -> String {
    let rows = &s.rows[..s.rows.len().min(CHART_MAX_ENGINES)];
    // About 530 units wide: on a 400 px phone the text still reads at 9 px.
    let (label_w, plot_w, value_w) = (170.0, 316.0, 44.0);
    let (row_h, top) = (22.0, 8.0);
    let n = rows.len().max(1) as f64;
    let axis_y = top + n * row_h;
    let height = axis_y + 34.0;
    let width = label_w + plot_w + value_w;
    let (lo, hi, step) = axis(rows);
    let x = |v: f64| label_w + (v - lo) / (hi - lo) * plot_w;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg id=\"elo-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" \
         height=\"{height}\" viewBox=\"0 0 {width} {height}\" style=\"max-width:{width}px\" \
         role=\"img\" aria-label=\"Elo of each engine with its 95% interval\">"
    );
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
    for (i, r) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h + row_h / 2.0;
        let name = super::safe(&r.engine);
        let _ = writeln!(
            o,
            "<g class=\"chart-row\" data-rank=\"{}\"><title>{}: {}</title>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}. {}</text>",
            r.rank,
            esc(&name),
            esc(&pm(r.elo, 1)),
            label_w - 8.0,
            y + 4.0,
            r.rank,
            esc(&fit_width(&name, LABEL_CHARS))
        );
        if r.elo.value.is_finite() {
            interval(&mut o, r, y, x);
            let _ = write!(
                o,
                "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"#1d2330\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                x(r.elo.value),
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

/// The bar of an engine's 95% interval, with whiskers.
fn interval(o: &mut String, r: &StandingRow, y: f64, x: impl Fn(f64) -> f64) {
    if !(r.elo.error.is_finite() && r.elo.error > 0.0) {
        return;
    }
    let (x1, x2) = (x(r.elo.value - r.elo.error), x(r.elo.value + r.elo.error));
    let (y1, y2) = (y - 6.0, y + 6.0);
    let _ = write!(
        o,
        "<line x1=\"{x1:.1}\" y1=\"{y:.1}\" x2=\"{x2:.1}\" y2=\"{y:.1}\" stroke=\"#5470c6\" stroke-width=\"3\"/>\
         <line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x1:.1}\" y2=\"{y2:.1}\" stroke=\"#5470c6\"/>\
         <line x1=\"{x2:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"#5470c6\"/>"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(600.0, 6.0), 100.0);
        assert_eq!(nice_step(130.0, 6.0), 50.0);
        assert_eq!(nice_step(12.0, 6.0), 2.0);
    }
}
