//! The leaderboard as a tournament reporter: keeps the standings of the whole tournament
//! (earlier runs included) and rewrites the reports every N games and at the end.

use super::{ReportContext, read_games_csv, read_tournament_toml, write_reports};
use crate::stats::{GameRow, Outcome, Standings, Tally};
use crate::tournament::display::{EloTable, LiveElo};
use crate::tournament::results::GameRecord;
use crate::tournament::run::{Control, Event, Reporter, RunSummary, StartInfo};
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Writes `standings.csv`, `h2h.csv`, `leaderboard.md` and `leaderboard.html` into a
/// tournament's folder every `every` finished games (if set) and when the run ends.
pub struct LeaderboardReporter {
    dir: PathBuf,
    every: Option<u64>,
    tally: Tally,
    since_write: u64,
    /// Where the live display reads the ratings, refitted at most every `PUBLISH_EVERY`.
    live: Option<(LiveElo, Option<Instant>)>,
}

/// The ratings are refitted for the live display at most this often.
const PUBLISH_EVERY: Duration = Duration::from_millis(250);

impl LeaderboardReporter {
    pub fn new(dir: impl Into<PathBuf>, every: Option<u64>) -> LeaderboardReporter {
        LeaderboardReporter {
            dir: dir.into(),
            every: every.filter(|&n| n > 0),
            tally: Tally::new(),
            since_write: 0,
            live: None,
        }
    }

    /// Also publishes Elo ± error per engine into `live` for the live display.
    pub fn publish_to(mut self, live: LiveElo) -> LeaderboardReporter {
        self.live = Some((live, None));
        self
    }

    /// Refits and publishes the ratings if a display reads them and the last fit is old
    /// enough (or `now` is set).
    fn publish(&mut self, now: bool) {
        let Some((live, last)) = &self.live else {
            return;
        };
        if !now && last.is_some_and(|t| t.elapsed() < PUBLISH_EVERY) {
            return;
        }
        let live = live.clone();
        let table: EloTable = self
            .standings()
            .rows
            .iter()
            .map(|r| (r.engine.clone(), (r.elo.value, r.elo.error)))
            .collect();
        if let Ok(mut shown) = live.lock() {
            *shown = table;
        }
        if let Some((_, last)) = &mut self.live {
            *last = Some(Instant::now());
        }
    }

    /// Adds one finished game.
    pub fn add(&mut self, g: &GameRecord) {
        let Some(result) = Outcome::parse(g.play.result.as_str()) else {
            return;
        };
        let pair = g.pair.to_string();
        self.tally.add(&GameRow {
            game: &g.id,
            pair: &pair,
            south: &g.south,
            north: &g.north,
            result,
            south_score: Some(i64::from(g.play.south_score)),
            north_score: Some(i64::from(g.play.north_score)),
            termination: g.play.termination.as_str(),
            loser: g.loser_name().unwrap_or(""),
        });
    }

    /// The current standings (ratings refitted).
    pub fn standings(&self) -> Standings {
        self.tally
            .standings(None)
            .expect("no anchor, no unknown engine")
    }

    /// The compact live standings: Elo ± error per engine.
    pub fn live(&self) -> String {
        super::live_standings(&self.standings())
    }

    /// Writes the reports now.
    pub fn write(&mut self) -> io::Result<()> {
        self.since_write = 0;
        let context = ReportContext {
            settings: read_tournament_toml(&self.dir.join("games.csv"))
                .into_iter()
                .collect(),
            ..ReportContext::default()
        };
        write_reports(&self.dir, &self.standings(), &context).map_err(io::Error::other)
    }
}

impl Reporter for LeaderboardReporter {
    /// Reads the games already in the folder (a resumed tournament).
    fn start(&mut self, _info: &StartInfo) -> io::Result<()> {
        self.tally = Tally::new();
        let csv = self.dir.join("games.csv");
        if csv.exists() {
            read_games_csv(&csv, &mut self.tally).map_err(io::Error::other)?;
        }
        self.publish(true);
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>) -> io::Result<Control> {
        if let Event::GameFinished(g) = event {
            self.add(g);
            self.publish(false);
            self.since_write += 1;
            if self.every.is_some_and(|n| self.since_write >= n) {
                self.write()?;
            }
        }
        Ok(Control::Continue)
    }

    fn finish(&mut self, _summary: &RunSummary) -> io::Result<()> {
        self.publish(true);
        self.write()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::referee::{GamePlay, GameResult, Termination};
    use crate::rules::{Position, Rules, Side};
    use std::time::Duration;

    fn record(n: u64, south: &str, north: &str, result: GameResult) -> GameRecord {
        let rules = Rules::default();
        GameRecord {
            id: format!("t-{n}"),
            number: n,
            round: 1,
            pair: n.div_ceil(2),
            south: south.into(),
            north: north.into(),
            play: GamePlay {
                rules,
                opening: vec![],
                moves: vec![],
                final_position: Position::start(rules),
                result,
                south_score: 30,
                north_score: 18,
                termination: if n == 3 {
                    Termination::Timeout
                } else {
                    Termination::Normal
                },
                loser: (n == 3).then_some(Side::North),
                detail: String::new(),
                line: None,
                duration: Duration::from_millis(5),
                faulted: [false, n == 3],
            },
        }
    }

    #[test]
    fn keeps_earlier_games_and_writes_every_n() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("games.csv"),
            "game,round,pair,south,north,opening,result,south_score,north_score,plies,termination,loser,detail,duration_ms\n\
             t-1,1,1,a,b,,1-0,30,18,40,normal,,,5\n",
        )
        .unwrap();
        let mut r = LeaderboardReporter::new(dir.path(), Some(2));
        r.start(&StartInfo {
            id: "t".into(),
            names: vec!["a".into(), "b".into()],
            total: 4,
            done: 1,
            earlier: Default::default(),
        })
        .unwrap();
        let g2 = record(2, "b", "a", GameResult::SouthWins);
        assert_eq!(
            r.event(&Event::GameFinished(&g2)).unwrap(),
            Control::Continue
        );
        assert!(!dir.path().join("standings.csv").exists());
        let g3 = record(3, "a", "b", GameResult::SouthWins);
        r.event(&Event::GameFinished(&g3)).unwrap();
        assert!(dir.path().join("leaderboard.html").exists());
        let s = r.standings();
        assert_eq!(s.games, 3);
        let a = s.rows.iter().find(|x| x.engine == "a").unwrap();
        assert_eq!((a.wdl.wins, a.wdl.losses), (2, 1));
        assert_eq!(a.penta.0, [0, 0, 1, 0, 0]);
        let b = s.rows.iter().find(|x| x.engine == "b").unwrap();
        assert_eq!(b.faults.timeouts, 1);
        assert!(r.live().contains(" a "));
    }
}
