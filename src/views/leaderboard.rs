//! The leaderboard view: rewrites `standings.csv`, `h2h.csv`, `leaderboard.md` and
//! `leaderboard.html` in a tournament's folder every N recorded games and at the end, from
//! the run's scoreboard.

use crate::report::{ReportContext, read_settings, write_reports};
use crate::stats::Tally;
use crate::tournament::events::{Control, Event, RunSummary, View};
use std::io;
use std::path::PathBuf;

/// Writes the reports into `dir` every `every` games (if set) and when the run ends.
pub(crate) struct LeaderboardView {
    dir: PathBuf,
    every: Option<u64>,
    since_write: u64,
    /// The page's title (by default the run's own title, else its id).
    pub title: Option<String>,
}

impl LeaderboardView {
    pub(crate) fn new(dir: impl Into<PathBuf>, every: Option<u64>) -> LeaderboardView {
        LeaderboardView {
            dir: dir.into(),
            every: every.filter(|&n| n > 0),
            since_write: 0,
            title: None,
        }
    }

    /// Writes the reports now.
    pub(crate) fn write(&mut self, tally: &Tally) -> io::Result<()> {
        self.since_write = 0;
        let context = ReportContext {
            title: self.title.clone(),
            settings: read_settings(&self.dir).into_iter().collect(),
            accuracy: crate::analysis::read_accuracy(&self.dir),
            ..ReportContext::default()
        };
        let standings = tally.standings(None).map_err(io::Error::other)?;
        write_reports(&self.dir, &standings, &context).map_err(io::Error::other)
    }
}

impl View for LeaderboardView {
    fn event(&mut self, event: &Event<'_>, tally: &Tally) -> io::Result<Control> {
        if let Event::GameFinished { .. } = event {
            self.since_write += 1;
            if self.every.is_some_and(|n| self.since_write >= n) {
                self.write(tally)?;
            }
        }
        Ok(Control::Continue)
    }

    fn finish(&mut self, summary: &RunSummary, tally: &Tally) -> io::Result<()> {
        // Results that could not be written (a full disk, a deleted folder) are not
        // reported on: nothing is written into a folder that may be gone.
        if summary.failed.is_some() {
            return Ok(());
        }
        self.write(tally)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::sample_record;

    #[test]
    fn writes_every_n_games_and_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = LeaderboardView::new(dir.path(), Some(2));
        let mut tally = Tally::new();
        let games = [
            sample_record("t", 1, "a", "b"),
            sample_record("t", 2, "b", "a"),
        ];
        for (i, g) in games.iter().enumerate() {
            tally.add(&g.row());
            let e = Event::GameFinished {
                record: g,
                pair_completed: i == 1,
            };
            assert_eq!(v.event(&e, &tally).unwrap(), Control::Continue);
            assert_eq!(dir.path().join("leaderboard.html").exists(), i == 1);
        }
        std::fs::remove_file(dir.path().join("standings.csv")).unwrap();
        v.finish(&RunSummary::default(), &tally).unwrap();
        let text = std::fs::read_to_string(dir.path().join("standings.csv")).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        // The title: as set, else the run's id from tournament.toml.
        std::fs::write(dir.path().join("tournament.toml"), "id = \"t\"\n").unwrap();
        v.write(&tally).unwrap();
        let page = std::fs::read_to_string(dir.path().join("leaderboard.html")).unwrap();
        assert!(page.contains("<h1>Tournament t</h1>"), "{page}");
        v.title = Some("Club night".into());
        v.write(&tally).unwrap();
        let page = std::fs::read_to_string(dir.path().join("leaderboard.html")).unwrap();
        assert!(page.contains("<h1>Club night</h1>"), "{page}");
    }
}
