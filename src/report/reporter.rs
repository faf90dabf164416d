//! The leaderboard as a tournament reporter: keeps the standings of the whole tournament
//! (earlier runs included) and rewrites the reports every N games and at the end.

use super::{ReportContext, read_games_csv, read_tournament_toml, write_reports};
use crate::stats::{GameRow, Outcome, Standings, Tally};
use crate::tournament::results::GameRecord;
use crate::tournament::run::{Control, Event, Reporter, RunSummary, StartInfo};
use std::io;
use std::path::PathBuf;

/// Writes `standings.csv`, `h2h.csv`, `leaderboard.md` and `leaderboard.html` into a
/// tournament's folder every `every` finished games (if set) and when the run ends.
pub struct LeaderboardReporter {
    dir: PathBuf,
    every: Option<u64>,
    tally: Tally,
    since_write: u64,
}

impl LeaderboardReporter {
    pub fn new(dir: impl Into<PathBuf>, every: Option<u64>) -> LeaderboardReporter {
        LeaderboardReporter {
            dir: dir.into(),
            every: every.filter(|&n| n > 0),
            tally: Tally::new(),
            since_write: 0,
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
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>) -> io::Result<Control> {
        if let Event::GameFinished(g) = event {
            self.add(g);
            self.since_write += 1;
            if self.every.is_some_and(|n| self.since_write >= n) {
                self.write()?;
            }
        }
        Ok(Control::Continue)
    }

    fn finish(&mut self, _summary: &RunSummary) -> io::Result<()> {
        self.write()
    }
}
