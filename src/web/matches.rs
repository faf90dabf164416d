//! Matches of several games in `kalaha play`, chosen with `--match best-of-3` or on the
//! page: the score of the two players over the games of the match, whether it is decided,
//! and the line that says so. The games themselves are recorded like any game; the result
//! of every match of the session is written beside them, to `match.csv` ([`MatchView`]).

use super::Live;
use crate::record::{GameRecord, Termination};
use crate::rules::Side;
use crate::stats::Tally;
use crate::tournament::events::{Control, Event, StartInfo, View};
use serde::Serialize;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

/// How a match is won.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// At most N games; the most wins (a draw counts half to each). Decided as soon as
    /// the leader cannot be caught.
    BestOf(u32),
    /// The first to N wins (draws count for nobody).
    FirstTo(u32),
    /// N games; the most seeds in one's stores over them.
    SeedsOver(u32),
    /// The first to S seeds in one's stores over the games.
    SeedsTo(u32),
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        let s = s.trim();
        let number = |rest: &str| -> Result<u32, String> {
            match rest.parse::<u32>() {
                Ok(n) if (1..=1000).contains(&n) => Ok(n),
                _ => Err(format!("{rest:?} is not a number from 1 to 1000")),
            }
        };
        let formats = "best-of-N, first-to-N, seeds-over-N or seeds-to-S (e.g. best-of-3, \
                       first-to-3, seeds-over-5, seeds-to-100)";
        let (kind, rest) = s
            .rsplit_once('-')
            .ok_or_else(|| format!("{s:?} is not a match format: {formats}"))?;
        match kind {
            "best-of" => Ok(Format::BestOf(number(rest)?)),
            "first-to" => Ok(Format::FirstTo(number(rest)?)),
            "seeds-over" => Ok(Format::SeedsOver(number(rest)?)),
            "seeds-to" => Ok(Format::SeedsTo(number(rest)?)),
            _ => Err(format!("{s:?} is not a match format: {formats}")),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Format::BestOf(n) => write!(f, "best-of-{n}"),
            Format::FirstTo(n) => write!(f, "first-to-{n}"),
            Format::SeedsOver(n) => write!(f, "seeds-over-{n}"),
            Format::SeedsTo(n) => write!(f, "seeds-to-{n}"),
        }
    }
}

impl Format {
    /// The format in words.
    pub(crate) fn words(self) -> String {
        match self {
            Format::BestOf(n) => format!("best of {n} games"),
            Format::FirstTo(n) => format!("first to {n} wins"),
            Format::SeedsOver(n) => format!("most seeds over {n} games"),
            Format::SeedsTo(n) => format!("first to {n} seeds"),
        }
    }
}

/// The score of a match between `names[0]` and `names[1]` (the person first).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Match {
    #[serde(skip)]
    pub format: Format,
    pub format_text: String,
    pub names: [String; 2],
    pub games: u32,
    /// Wins of each, and draws.
    pub wins: [u32; 2],
    pub draws: u32,
    /// Seeds of each over the games (see [`Match::add`]).
    pub seeds: [u32; 2],
    pub game_ids: Vec<String>,
    /// The number of the session's first game that counts in the match.
    pub first_game: u64,
    /// The winner (0 or 1), once decided; `None` with `over` for a drawn match.
    pub winner: Option<usize>,
    pub over: bool,
    /// The score in words, and at the end the result.
    pub text: String,
}

impl Match {
    /// A match of `format` between `names`, from the session's first game on.
    pub(crate) fn new(format: Format, names: [String; 2]) -> Match {
        Match::from_game(format, names, 1)
    }

    /// A match whose games are the session's from game number `first_game` on.
    pub(crate) fn from_game(format: Format, names: [String; 2], first_game: u64) -> Match {
        let mut m = Match {
            format,
            format_text: format.words(),
            names,
            games: 0,
            wins: [0; 2],
            draws: 0,
            seeds: [0; 2],
            game_ids: Vec::new(),
            first_game,
            winner: None,
            over: false,
            text: String::new(),
        };
        m.text = m.describe();
        m
    }

    /// Counts a game of the two (ignored once the match is over, before its first game,
    /// or when neither plays in it); true if it counted. A game's seeds are its final
    /// stores; a resigned one gives the other side every seed not in the resigner's store,
    /// as if it had been swept to it.
    pub(crate) fn add(&mut self, g: &GameRecord) -> bool {
        if self.over || g.number < self.first_game {
            return false;
        }
        let seat = |name: &str| self.names.iter().position(|n| n == name);
        let (Some(south), Some(north)) = (seat(&g.south), seat(&g.north)) else {
            return false;
        };
        if south == north {
            return false;
        }
        self.games += 1;
        self.game_ids.push(g.game.clone());
        let mut stores = [u32::from(g.south_score), u32::from(g.north_score)];
        if g.termination == Termination::Resigned
            && let Some(loser) = g.loser
        {
            let total = g.rules.total_seeds();
            let kept = stores[loser.index()];
            stores[loser.opponent().index()] = total.saturating_sub(kept);
        }
        let index = |side: Side| if side == Side::South { south } else { north };
        self.seeds[south] += stores[0];
        self.seeds[north] += stores[1];
        match g.result.winner() {
            Some(side) => self.wins[index(side)] += 1,
            None => self.draws += 1,
        }
        self.decide();
        self.text = self.describe();
        true
    }

    fn decide(&mut self) {
        let [a, b] = self.wins;
        let lead = |x: u32, y: u32| match x.cmp(&y) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        };
        match self.format {
            Format::BestOf(n) => {
                // In half points: a draw is half a win to each.
                let (ha, hb) = (2 * a + self.draws, 2 * b + self.draws);
                let left = 2 * n.saturating_sub(self.games);
                if self.games >= n || ha > hb + left || hb > ha + left {
                    self.over = true;
                    self.winner = lead(ha, hb);
                }
            }
            Format::FirstTo(n) => {
                if a >= n || b >= n {
                    self.over = true;
                    self.winner = lead(a, b);
                }
            }
            Format::SeedsOver(n) => {
                if self.games >= n {
                    self.over = true;
                    self.winner = lead(self.seeds[0], self.seeds[1]);
                }
            }
            Format::SeedsTo(s) => {
                if self.seeds[0] >= s || self.seeds[1] >= s {
                    self.over = true;
                    self.winner = lead(self.seeds[0], self.seeds[1]);
                }
            }
        }
    }

    /// "Match, best of 3 games: human 1 – 0 random after 1 game", and at the end who won.
    fn describe(&self) -> String {
        let [a, b] = &self.names;
        let seeds_format = matches!(self.format, Format::SeedsOver(_) | Format::SeedsTo(_));
        let (x, y) = if seeds_format {
            (self.seeds[0], self.seeds[1])
        } else {
            (self.wins[0], self.wins[1])
        };
        let unit = if seeds_format { " seeds" } else { "" };
        let draws = match (seeds_format, self.draws) {
            (false, 1) => ", 1 draw".to_string(),
            (false, d) if d > 1 => format!(", {d} draws"),
            _ => String::new(),
        };
        let after = crate::record::counted(u64::from(self.games), "game");
        let score = format!("{a} {x} – {y} {b}{unit}{draws} after {after}");
        if !self.over {
            return format!("Match, {}: {score}", self.format_text);
        }
        match self.winner {
            Some(w) => format!(
                "Match over, {}: {} wins the match, {score}",
                self.format_text, self.names[w]
            ),
            None => format!("Match over, {}: a drawn match, {score}", self.format_text),
        }
    }

    /// The match's row of `match.csv`.
    fn row(&self) -> [String; 11] {
        let winner = match (self.over, self.winner) {
            (false, _) => "",
            (true, Some(w)) => self.names[w].as_str(),
            (true, None) => "draw",
        };
        [
            self.format.to_string(),
            self.names[0].clone(),
            self.names[1].clone(),
            self.games.to_string(),
            self.wins[0].to_string(),
            self.draws.to_string(),
            self.wins[1].to_string(),
            self.seeds[0].to_string(),
            self.seeds[1].to_string(),
            winner.to_string(),
            self.game_ids.join(" "),
        ]
    }
}

/// Writes the result of `matches` (a session's, in order) to `dir/match.csv`, a row each
/// (replaced whole, [`crate::results::write_file`]).
pub(crate) fn write_matches(dir: &Path, matches: &[Match]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let result = |e: csv::Error| io::Error::other(e.to_string());
    w.write_record([
        "format",
        "player",
        "opponent",
        "games",
        "wins",
        "draws",
        "losses",
        "seeds",
        "opponent_seeds",
        "winner",
        "games_ids",
    ])
    .map_err(result)?;
    for m in matches {
        w.write_record(m.row()).map_err(result)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| io::Error::other(e.to_string()))?;
    crate::results::write_file(&crate::results::Files::of(dir).match_csv(), &bytes)
}

/// Reads a format as the page sends it: `single` (no match: single games), or a
/// [`Format`].
pub(crate) fn parse_choice(text: &str) -> Result<Option<Format>, String> {
    match text.trim() {
        "single" => Ok(None),
        other => other.parse::<Format>().map(Some),
    }
}

/// The session's matches as a view of its games: the match of `--match` starts with the
/// first game; one chosen on the page starts when [`Live::choose_match`] says. Each game
/// of a match is counted, and every match of the session written to `match.csv`, with the
/// result line printed when a match is over.
pub(crate) struct MatchView {
    live: Arc<Live>,
    out: PathBuf,
    format: Option<Format>,
}

impl MatchView {
    /// The view of a session writing to `out`, with the match of `--match`, if any.
    pub(crate) fn new(live: Arc<Live>, out: PathBuf, format: Option<Format>) -> MatchView {
        MatchView { live, out, format }
    }
}

impl View for MatchView {
    fn start(&mut self, info: &StartInfo, _tally: &Tally) -> io::Result<()> {
        if let (Some(format), [a, b, ..]) = (self.format, info.names.as_slice()) {
            self.live
                .begin_match(Match::new(format, [a.clone(), b.clone()]));
        }
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>, _tally: &Tally) -> io::Result<Control> {
        if let Event::GameFinished { record, .. } = event
            && let Some((matches, current)) = self.live.count_in_match(record)
        {
            write_matches(&self.out, &matches)?;
            if current.over {
                println!("{}", current.text);
            }
        }
        Ok(Control::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::GameResult;
    use crate::results::sample_record;

    fn game(n: u64, south: &str, north: &str, stores: (u16, u16)) -> GameRecord {
        let mut g = sample_record("m", n, south, north);
        (g.south_score, g.north_score) = stores;
        g.result = match stores.0.cmp(&stores.1) {
            std::cmp::Ordering::Greater => GameResult::SouthWins,
            std::cmp::Ordering::Less => GameResult::NorthWins,
            std::cmp::Ordering::Equal => GameResult::Draw,
        };
        g.termination = Termination::Normal;
        g.loser = None;
        g
    }

    fn names() -> [String; 2] {
        ["ada".to_string(), "hard".to_string()]
    }

    #[test]
    fn formats_are_read_and_written() {
        for s in ["best-of-3", "first-to-3", "seeds-over-5", "seeds-to-100"] {
            assert_eq!(s.parse::<Format>().unwrap().to_string(), s);
        }
        for bad in [
            "best-of",
            "best-of-0",
            "best-3",
            "most-of-3",
            "",
            "seeds-to-x",
        ] {
            assert!(bad.parse::<Format>().is_err(), "{bad}");
        }
        assert_eq!(Format::SeedsTo(100).words(), "first to 100 seeds");
    }

    #[test]
    fn best_of_three_ends_when_the_leader_cannot_be_caught() {
        let mut m = Match::new(Format::BestOf(3), names());
        assert_eq!(
            m.text,
            "Match, best of 3 games: ada 0 – 0 hard after 0 games"
        );
        m.add(&game(1, "ada", "hard", (30, 18)));
        assert!(!m.over);
        assert_eq!(
            m.text,
            "Match, best of 3 games: ada 1 – 0 hard after 1 game"
        );
        m.add(&game(2, "hard", "ada", (20, 28)));
        assert!(m.over);
        assert_eq!(m.winner, Some(0));
        assert_eq!(
            m.text,
            "Match over, best of 3 games: ada wins the match, ada 2 – 0 hard after 2 games"
        );
        // Games after the end do not count.
        m.add(&game(3, "ada", "hard", (0, 48)));
        assert_eq!((m.games, m.wins), (2, [2, 0]));
        // 1-1 and a draw: a drawn match after 3 games.
        let mut m = Match::new(Format::BestOf(3), names());
        m.add(&game(1, "ada", "hard", (30, 18)));
        m.add(&game(2, "hard", "ada", (30, 18)));
        m.add(&game(3, "ada", "hard", (24, 24)));
        assert!(m.over);
        assert_eq!(m.winner, None);
        assert!(
            m.text
                .contains("a drawn match, ada 1 – 1 hard, 1 draw after 3 games")
        );
    }

    #[test]
    fn first_to_and_seed_formats() {
        let mut m = Match::new(Format::FirstTo(2), names());
        for (n, g) in [
            game(1, "ada", "hard", (24, 24)),
            game(2, "hard", "ada", (30, 18)),
            game(3, "ada", "hard", (30, 18)),
        ]
        .iter()
        .enumerate()
        {
            m.add(g);
            assert!(!m.over, "after game {}", n + 1);
        }
        m.add(&game(4, "hard", "ada", (10, 38)));
        assert!(m.over);
        assert_eq!(m.winner, Some(0));
        let mut m = Match::new(Format::SeedsOver(2), names());
        m.add(&game(1, "ada", "hard", (20, 28)));
        m.add(&game(2, "hard", "ada", (30, 18)));
        assert!(m.over);
        assert_eq!(m.seeds, [38, 58]);
        assert_eq!(m.winner, Some(1));
        assert!(
            m.text
                .contains("hard wins the match, ada 38 – 58 hard seeds after 2 games")
        );
        // A resignation gives the other side every seed the resigner does not hold.
        let mut m = Match::new(Format::SeedsTo(60), names());
        let mut r = game(1, "ada", "hard", (5, 3));
        r.termination = Termination::Resigned;
        r.loser = Some(Side::South);
        r.result = GameResult::NorthWins;
        m.add(&r);
        assert_eq!(m.seeds, [5, 43]);
        assert_eq!(m.wins, [0, 1]);
        assert!(!m.over);
        m.add(&game(2, "hard", "ada", (20, 28)));
        assert!(m.over);
        assert_eq!(m.winner, Some(1));
    }

    #[test]
    fn the_result_is_written_beside_the_games() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Match::new(Format::BestOf(1), names());
        m.add(&game(1, "ada", "hard", (30, 18)));
        // A second match, chosen on the page from game 3 on: game 2 does not count.
        let mut second = Match::from_game(Format::FirstTo(2), names(), 3);
        assert!(!second.add(&game(2, "hard", "ada", (30, 18))));
        assert!(second.add(&game(3, "ada", "hard", (20, 28))));
        write_matches(dir.path(), &[m, second]).unwrap();
        let text =
            std::fs::read_to_string(crate::results::Files::of(dir.path()).match_csv()).unwrap();
        assert_eq!(
            text,
            "format,player,opponent,games,wins,draws,losses,seeds,opponent_seeds,winner,games_ids\n\
             best-of-1,ada,hard,1,1,0,0,30,18,ada,m-1\n\
             first-to-2,ada,hard,1,0,0,1,20,28,,m-3\n"
        );
        assert_eq!(parse_choice("single"), Ok(None));
        assert_eq!(parse_choice("best-of-5"), Ok(Some(Format::BestOf(5))));
        assert!(parse_choice("best-of-0").is_err());
        assert!(parse_choice("<script>").is_err());
    }
}
