//! The summary of a match between two engines, as users of fastchess and cutechess read it
//! first: the Elo difference with its interval, nElo, LOS, the draw ratio, the games and the
//! pentanomial counts of the game pairs.

use super::{pm, safe};
use crate::stats::{PairingTally, Standings};

/// The summary of `first` against `second` (by name, from `first`'s point of view), or
/// `None` if they did not meet.
///
/// ```text
/// Results of hard vs random: 20 games, 10 game pairs
/// Elo difference: +240.8 ± 70.1 (95%), nElo: +310.5 ± 87.7 (from game pairs)
/// LOS: 100.00 %, draw ratio: 5.00 %, pairs ratio: 9.00
/// Games: W 18, D 1, L 1, points 18.5 (92.50 %)
/// Pentanomial [0, ½, 1, 1½, 2 points a pair]: [0, 0, 1, 2, 7]
/// ```
pub(crate) fn match_summary(s: &Standings, first: &str, second: &str) -> Option<String> {
    let index = |name: &str| s.rows.iter().find(|r| r.engine == name).map(|r| r.index);
    let h = s.h2h(index(first)?, index(second)?)?;
    Some(format_summary(&safe(first), &safe(second), &h.tally))
}

fn format_summary(first: &str, second: &str, t: &PairingTally) -> String {
    let (w, p) = (t.wdl, t.penta);
    let mut o = format!(
        "Results of {first} vs {second}: {} game{}",
        w.games(),
        if w.games() == 1 { "" } else { "s" }
    );
    if t.by_pairs() {
        o.push_str(&format!(
            ", {} game pair{}",
            p.pairs(),
            if p.pairs() == 1 { "" } else { "s" }
        ));
    }
    // Counted by game pairs, the spread is that of the pairs' scores: four games won,
    // drawn, drawn and lost in two pairs of 1 point each have none.
    let no_spread = if t.by_pairs() {
        "no spread in the results: every game pair scored the same"
    } else {
        "no spread in the results: every game ended the same"
    };
    let nelo = t.nelo();
    let nelo = if nelo.value.is_nan() {
        format!("undefined ({no_spread})")
    } else {
        pm(nelo, 1)
    };
    let elo = t.elo();
    let elo = if elo.error.is_finite() {
        format!("{} (95%)", pm(elo, 1))
    } else {
        format!("{} (no interval: {no_spread})", pm(elo, 1))
    };
    o.push_str(&format!(
        "\nElo difference: {elo}, nElo: {nelo} (from {})",
        if t.by_pairs() { "game pairs" } else { "games" }
    ));
    o.push_str(&format!(
        "\nLOS: {:.2} %, draw ratio: {:.2} %",
        100.0 * t.los(),
        100.0 * w.draw_ratio()
    ));
    if t.by_pairs() {
        let c = p.0;
        let (good, bad) = (c[3] + c[4], c[0] + c[1]);
        let ratio = match (good, bad) {
            (0, 0) => "-".to_string(),
            (_, 0) => "∞".to_string(),
            (g, b) => format!("{:.2}", g as f64 / b as f64),
        };
        o.push_str(&format!(", pairs ratio: {ratio}"));
    }
    o.push_str(&format!(
        "\nGames: W {}, D {}, L {}, points {} ({:.2} %)",
        w.wins,
        w.draws,
        w.losses,
        w.points(),
        100.0 * w.score()
    ));
    if t.by_pairs() {
        let c = p.0;
        o.push_str(&format!(
            "\nPentanomial [0, ½, 1, 1½, 2 points a pair]: [{}, {}, {}, {}, {}]",
            c[0], c[1], c[2], c[3], c[4]
        ));
    }
    o.push('\n');
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{GameResult, GameRow, Termination};
    use crate::stats::Tally;

    fn play(results: &[(&str, &str, GameResult)]) -> Standings {
        let mut t = Tally::new();
        for (k, (south, north, result)) in results.iter().enumerate() {
            t.add(&GameRow {
                game: &format!("m-{}", k + 1),
                pair: Some(k as u64 / 2 + 1),
                south,
                north,
                result: *result,
                south_score: Some(30),
                north_score: Some(18),
                termination: Termination::Normal,
                loser: None,
                repeat: false,
            });
        }
        t.standings(None).unwrap()
    }

    /// Pairs of 1 point each (a win and a loss, a draw and a draw) have no spread although
    /// the games do: the summary says it is the pairs.
    #[test]
    fn pairs_that_all_score_the_same_are_named_as_the_reason() {
        use GameResult::*;
        let games = [
            ("a", "b", SouthWins),
            ("b", "a", SouthWins),
            ("a", "b", Draw),
            ("b", "a", Draw),
        ];
        let text = match_summary(&play(&games), "a", "b").unwrap();
        assert!(text.contains("W 1, D 2, L 1"), "{text}");
        assert!(
            text.contains(
                "(no interval: no spread in the results: every game pair scored the same)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_clean_sweep_has_los_100_and_no_nelo() {
        use GameResult::*;
        let games: Vec<_> = (0..10)
            .flat_map(|_| [("hard", "random", SouthWins), ("random", "hard", NorthWins)])
            .collect();
        let s = play(&games);
        let text = match_summary(&s, "hard", "random").unwrap();
        assert!(
            text.starts_with("Results of hard vs random: 20 games, 10 game pairs\n"),
            "{text}"
        );
        assert!(
            text.contains("LOS: 100.00 %, draw ratio: 0.00 %, pairs ratio: ∞"),
            "{text}"
        );
        assert!(text.contains("nElo: undefined"), "{text}");
        assert!(text.contains("Elo difference: +∞"), "{text}");
        assert!(
            text.contains("Games: W 20, D 0, L 0, points 20 (100.00 %)"),
            "{text}"
        );
        assert!(text.contains("[0, 0, 0, 0, 10]"), "{text}");
        let other_way = match_summary(&s, "random", "hard").unwrap();
        assert!(other_way.contains("LOS: 0.00 %"), "{other_way}");
        assert!(match_summary(&s, "hard", "nobody").is_none());
    }

    #[test]
    fn a_close_match_reads_like_fastchess() {
        use GameResult::*;
        let mut games = Vec::new();
        for k in 0..8 {
            let (a, b) = match k % 4 {
                0 => (SouthWins, Draw),      // 1½ for new
                1 => (Draw, Draw),           // 1
                2 => (NorthWins, NorthWins), // 1 (a win each)
                _ => (SouthWins, SouthWins), // 1
            };
            games.push(("new", "old", a));
            games.push(("old", "new", b));
        }
        let s = play(&games);
        let text = match_summary(&s, "new", "old").unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[1].starts_with("Elo difference: +"), "{text}");
        assert!(lines[1].ends_with("(from game pairs)"), "{text}");
        assert!(
            lines[2].starts_with("LOS: ") && lines[2].contains("draw ratio: 37.50 %"),
            "{text}"
        );
        assert!(lines[4].ends_with("[0, 0, 6, 2, 0]"), "{text}");
        // Escapes what an engine could put in a name.
        let s = play(&[("x\u{1b}[2J", "y", SouthWins)]);
        let text = match_summary(&s, "x\u{1b}[2J", "y").unwrap();
        assert!(
            !text.contains('\u{1b}') && text.contains("(from games)"),
            "{text}"
        );
    }
}
