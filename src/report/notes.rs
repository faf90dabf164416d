//! The explanations at the end of a leaderboard: how the numbers are computed, what a
//! column means, what was left out and why. One text for the Markdown and the HTML page
//! (plain text; each writer escapes it).

use super::{CHART_MAX_ENGINES, MATRIX_MAX_ENGINES, safe};
use crate::stats::Standings;

/// Names listed per group in the note on groups that never met.
const GROUP_NAMES_LISTED: usize = 20;

/// Whether the page has the head-to-head matrix and the pairings table.
pub(crate) fn shows_pairings(s: &Standings) -> bool {
    s.rows.len() <= MATRIX_MAX_ENGINES && !s.pairings().is_empty()
}

/// The notes, in the order they are shown.
pub(crate) fn notes(s: &Standings) -> Vec<String> {
    let mut out = Vec::new();
    let centre = match &s.anchor {
        Some((name, elo)) => format!("anchored at {} = {elo}", safe(name)),
        None => "centred on a mean of 0".to_string(),
    };
    out.push(format!(
        "Engines are ranked by Elo: one Bradley-Terry maximum-likelihood fit of all games \
         together (a win is worth 1 point, a draw ½), {centre}; equal Elo by score, then by \
         margin. ± is the half-width of the 95% \
         interval. Score is the share of points won; margin is the mean number of seeds by \
         which the engine's store beat the opponent's, over the games that ended on the board \
         (not those lost by a fault)."
    ));
    if shows_pairings(s) {
        out.push(
            "Pairings: the Elo difference, nElo and LOS of two engines come from their game \
             pairs (each opening played twice, with the seats swapped) when pairs were \
             completed, otherwise from single games. nElo (normalized Elo) measures the \
             score's distance from ½ in standard deviations of the results, scaled to equal \
             Elo for close engines that never draw, so it does not depend on the draw ratio. \
             It is given per pairing only: an engine's results pooled over different opponents \
             are not on one scale. LOS is the likelihood that the first engine is the stronger \
             one. Pentanomial counts are the game pairs that scored 0, ½, 1, 1½ and 2 points."
                .to_string(),
        );
        if s.pairings().iter().any(|h| h.tally.nelo().value.is_nan()) {
            out.push(
                "nElo is shown as ? for a pairing whose results have no spread (one engine won \
                 every game or pair, or every one was drawn): its normalized Elo is undefined \
                 (h2h.csv leaves nelo and nelo_error empty)."
                    .to_string(),
            );
        }
    } else if !s.pairings().is_empty() {
        out.push(format!(
            "With {} engines this page lists no pairings and no head-to-head matrix (they are \
             written for up to {MATRIX_MAX_ENGINES} engines): h2h.csv holds all {} pairings \
             with their Elo difference, LOS, nElo and pentanomial counts.",
            s.rows.len(),
            s.pairings().len()
        ));
    }
    if s.rows.len() > CHART_MAX_ENGINES {
        out.push(format!(
            "The chart shows the {CHART_MAX_ENGINES} best-rated of the {} engines.",
            s.rows.len()
        ));
    }
    if s.groups.len() > 1 {
        let groups: Vec<String> = s
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let mut names: Vec<String> = g
                    .engines
                    .iter()
                    .take(GROUP_NAMES_LISTED)
                    .map(|n| safe(n).into_owned())
                    .collect();
                if g.engines.len() > GROUP_NAMES_LISTED {
                    names.push(format!("and {} more", g.engines.len() - GROUP_NAMES_LISTED));
                }
                format!("group {}: {}", i + 1, names.join(", "))
            })
            .collect();
        out.push(format!(
            "The engines form {} groups that never met; ratings compare only within a group \
             (standings.csv has each engine's group). {}.",
            s.groups.len(),
            groups.join("; ")
        ));
    }
    if s.groups.iter().any(|g| g.regularized) {
        out.push(
            "Virtual draws: some engines won every game, or lost every game, against the \
             others of their group, which would put their Elo at infinity. So in that group \
             each pairing that met counts one more game, a draw that was never played, in the \
             Elo fit only; it keeps the ratings finite and pulls them slightly together (less \
             the more games were played). Games, scores, W/D/L and the CSV files count only \
             the games played."
                .to_string(),
        );
    }
    out.push(
        "Faults (timeouts, illegal moves, protocol errors, crashes, stalls) lose the game; \
         the faults table lists the engines that had any."
            .to_string(),
    );
    out.push(format!(
        "Games counted: {}; duplicate game ids ignored: {}; interrupted games and games of an \
         engine against itself ignored: {}; games whose pair partner is missing: {}.",
        s.games, s.duplicates, s.ignored, s.unpaired
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_draws_are_explained_only_where_they_were_added() {
        let virtual_note = |s: &Standings| {
            notes(s)
                .into_iter()
                .find(|n| n.starts_with("Virtual draws"))
        };
        assert!(virtual_note(&crate::report::tests::sample()).is_none());
        // One engine won every game: only then are draws added, in the Elo only.
        let s = crate::report::tests::swept();
        let note = virtual_note(&s).expect("a note on virtual draws");
        assert!(
            note.contains("never played") && note.contains("Elo fit only"),
            "{note}"
        );
        assert!(note.contains("count only the games played"), "{note}");
    }
}
