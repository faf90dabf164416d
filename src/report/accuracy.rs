//! The exact analysis in the leaderboards: seeds lost per move in the standings (a column)
//! and a section with the accuracy of every engine and, on the page, a chart of it.

use super::html::esc;
use super::markdown::md;
use super::num;
use crate::record::fit_width;
use crate::stats::{Accuracy, AccuracyTable, BLUNDER_SEEDS, Standings};
use std::fmt::Write;

/// The engines of the standings that have analysed moves, in standings order.
fn analysed<'a>(s: &'a Standings, t: &'a AccuracyTable) -> Vec<(&'a str, &'a Accuracy)> {
    s.rows
        .iter()
        .filter_map(|r| {
            Some((
                r.engine.as_str(),
                t.get(&r.engine).filter(|a| a.moves + a.estimated > 0)?,
            ))
        })
        .collect()
}

/// An engine's seeds lost per move for the standings table (empty if not analysed).
pub(crate) fn loss_cell(t: Option<&AccuracyTable>, engine: &str) -> String {
    t.and_then(|t| t.get(engine))
        .filter(|a| a.moves > 0)
        .map_or(String::new(), |a| num(a.loss_per_move(), 3))
}

/// What the section's numbers are, starting with how many of the analysed moves were
/// solved exactly: all of them, or how many were not (unsolved or estimated).
fn explain(rows: &[(&str, &Accuracy)]) -> String {
    let exact: u64 = rows.iter().map(|(_, a)| a.moves).sum();
    let unsolved: u64 = rows.iter().map(|(_, a)| a.unsolved).sum();
    let estimated: u64 = rows.iter().map(|(_, a)| a.estimated).sum();
    let first = if unsolved + estimated == 0 {
        "Every sowing of the games was solved exactly".to_string()
    } else {
        let mut not = Vec::new();
        if estimated > 0 {
            not.push(format!("{estimated} estimated"));
        }
        if unsolved > 0 {
            not.push(format!("{unsolved} unsolved"));
        }
        format!(
            "{exact} of the engines' {} analysed moves were solved exactly ({})",
            exact + unsolved + estimated,
            not.join(", ")
        )
    };
    format!(
        "{first}: a move's loss is the value of the position for the mover under perfect play \
         by both sides (final store difference) minus the value after the move. Loss/move is \
         the mean over the engine's exactly solved moves (openings not counted); perfect moves \
         lose nothing. Where the solver did not finish, the loss is estimated by the engines' \
         search to a fixed depth: those moves are counted apart, under Estimated (with their \
         estimated seeds lost per move), and in none of the other columns; moves neither \
         solved nor estimated are counted under Unsolved"
    )
}

fn blunder_words() -> String {
    format!("blunders lose {BLUNDER_SEEDS} seeds or more")
}

/// The estimated seeds lost per move, empty without estimated moves.
fn estimated_cell(a: &Accuracy) -> String {
    if a.estimated == 0 {
        String::new()
    } else {
        num(a.estimated_loss_per_move(), 3)
    }
}

/// The Markdown section.
pub(crate) fn md_section(o: &mut String, s: &Standings, t: &AccuracyTable) {
    let rows = analysed(s, t);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n## Accuracy against perfect play\n");
    let _ = writeln!(o, "{}; {}.\n", explain(&rows), blunder_words());
    let _ = writeln!(
        o,
        "| Engine | Moves | Seeds lost/move | Perfect moves | Blunders | Unsolved | Estimated | Estimated loss/move |"
    );
    let _ = writeln!(o, "|:--|--:|--:|--:|--:|--:|--:|--:|");
    for (name, a) in rows {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {}% | {} | {} | {} | {} |",
            md(name),
            a.moves,
            num(a.loss_per_move(), 3),
            num(100.0 * a.perfect_share(), 1),
            a.blunders,
            a.unsolved,
            a.estimated,
            estimated_cell(a)
        );
    }
}

/// The HTML section: the table and a bar chart of seeds lost per move.
pub(crate) fn html_section(o: &mut String, s: &Standings, t: &AccuracyTable) {
    let rows = analysed(s, t);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "<section id=\"accuracy\">\n<h2>Accuracy against perfect play</h2>\n<p class=\"note\">{}; {}.</p>\n\
         <div class=\"wrap\">\n<table id=\"accuracy-table\">\n<thead><tr><th class=\"name\">Engine</th>\
         <th>Moves</th><th>Seeds lost/move</th><th>Perfect moves</th><th>Blunders</th><th>Unsolved</th><th>Estimated</th><th>Estimated loss/move</th></tr></thead>\n<tbody>",
        esc(&explain(&rows)),
        esc(&blunder_words())
    );
    for (name, a) in &rows {
        let _ = writeln!(
            o,
            "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            a.moves,
            num(a.loss_per_move(), 3),
            num(100.0 * a.perfect_share(), 1),
            a.blunders,
            a.unsolved,
            a.estimated,
            estimated_cell(a)
        );
    }
    let _ = writeln!(
        o,
        "</tbody>\n</table>\n</div>\n{}\n</section>",
        chart(&rows)
    );
}

/// Horizontal bars of seeds lost per move, one per engine, as inline SVG.
fn chart(rows: &[(&str, &Accuracy)]) -> String {
    let (label_w, plot_w, value_w, row_h) = (170.0, 316.0, 50.0, 22.0);
    let max = rows
        .iter()
        .map(|(_, a)| a.loss_per_move())
        .fold(0.0f64, f64::max)
        .max(0.1);
    let h = rows.len() as f64 * row_h + 8.0;
    let mut o = format!(
        "<svg id=\"accuracy-chart\" viewBox=\"0 0 {} {h}\" width=\"100%\" role=\"img\" \
         aria-label=\"Seeds lost per move\" style=\"max-width:{}px;font-size:11px\">",
        label_w + plot_w + value_w,
        label_w + plot_w + value_w
    );
    for (i, (name, a)) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * row_h;
        let w = (a.loss_per_move() / max * plot_w).max(1.0);
        let _ = write!(
            o,
            "<g><title>{}: {} seeds lost per move</title>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" fill=\"#4a6fd0\"/>\
             <text x=\"{:.1}\" y=\"{}\">{}</text></g>",
            esc(name),
            num(a.loss_per_move(), 3),
            label_w - 6.0,
            y + 15.0,
            esc(&fit_width(name, 20)),
            y + 4.0,
            row_h - 8.0,
            label_w + w + 4.0,
            y + 15.0,
            num(a.loss_per_move(), 2)
        );
    }
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_says_how_many_moves_were_not_solved() {
        let solved = Accuracy {
            moves: 40,
            ..Accuracy::default()
        };
        let text = explain(&[("a", &solved), ("b", &solved)]);
        assert!(
            text.starts_with("Every sowing of the games was solved exactly: "),
            "{text}"
        );
        let partly = Accuracy {
            moves: 30,
            unsolved: 8,
            estimated: 2,
            ..Accuracy::default()
        };
        let text = explain(&[("a", &solved), ("b", &partly)]);
        assert!(
            text.starts_with(
                "70 of the engines' 80 analysed moves were solved exactly (2 estimated, 8 \
                 unsolved): "
            ),
            "{text}"
        );
        assert!(!text.contains("Every sowing"), "{text}");
    }
}
