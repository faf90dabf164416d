//! The run as events: `run_started` when the games are about to start, `game_started` as
//! each begins (on the game loop), `game_finished` once each is recorded, `standings` every
//! `--report-every` games and at the end.

use super::{Event, GameStarted, RunStarted, Standings, stream};
use crate::record::format_pits;
use crate::referee::{GameObserver, GameUpdate};
use crate::results::{CsvRow, RunKind};
use crate::stats::Tally;
use crate::tournament::events::{Control, Event as RunEvent, RunSummary, StartInfo, View};
use std::io;
use std::path::PathBuf;

/// Writes a run's events into the process's stream.
pub struct EventsView {
    folder: PathBuf,
    kind: RunKind,
    resumed: bool,
    every: Option<u64>,
    since_standings: u64,
}

impl EventsView {
    /// The view of a run of `kind` in `folder` (`resumed`: a run continued), with
    /// standings every `every` games, when a stream is open.
    pub fn if_open(
        folder: impl Into<PathBuf>,
        kind: RunKind,
        resumed: bool,
        every: Option<u64>,
    ) -> Option<EventsView> {
        stream::is_open().then(|| EventsView {
            folder: folder.into(),
            kind,
            resumed,
            every: every.filter(|&n| n > 0),
            since_standings: 0,
        })
    }

    fn standings(&mut self, tally: &Tally, at_end: bool) -> io::Result<()> {
        self.since_standings = 0;
        let s = tally.standings(None).map_err(io::Error::other)?;
        stream::emit(&Event::Standings(Standings {
            games: s.games,
            at_end,
            rows: &s.rows,
        }));
        Ok(())
    }
}

impl View for EventsView {
    fn start(&mut self, info: &StartInfo, _tally: &Tally) -> io::Result<()> {
        let settings = crate::tournament::config::ConfigFile::load(
            &crate::results::Files::of(&self.folder).tournament_toml(),
        )
        .ok();
        // The kind the run began as (a match resumed by `kalaha tournament --resume`).
        let kind = settings.as_ref().and_then(|s| s.run).unwrap_or(self.kind);
        let sprt = match kind {
            RunKind::Sprt => crate::sprt::files::load_settings(&self.folder).ok(),
            _ => None,
        };
        stream::emit(&Event::RunStarted(Box::new(RunStarted {
            kind,
            folder: crate::record::shown_path(&self.folder),
            id: info.id.clone(),
            resumed: self.resumed,
            games_done: info.done,
            games_total: info.total,
            engines: info.names.clone(),
            settings,
            sprt,
            notes: info.notes.clone(),
        })));
        stream::check()
    }

    fn observer(&mut self) -> Option<GameObserver> {
        Some(GameObserver::new(|update| {
            if let GameUpdate::Started { setup, .. } = update {
                stream::emit(&Event::GameStarted(GameStarted {
                    game: &setup.id,
                    round: setup.round,
                    pair: setup.pair,
                    south: &setup.names[0],
                    north: &setup.names[1],
                    opening: format_pits(&setup.opening.pits),
                }));
            }
        }))
    }

    fn event(&mut self, event: &RunEvent<'_>, tally: &Tally) -> io::Result<Control> {
        if let RunEvent::GameFinished { record, .. } = event {
            stream::emit(&Event::GameFinished(CsvRow::of(record)));
            self.since_standings += 1;
            if self.every.is_some_and(|n| self.since_standings >= n) {
                self.standings(tally, false)?;
            }
        }
        stream::check()?;
        Ok(Control::Continue)
    }

    /// The last standings. The stream is not waited for here: the command's end does
    /// that ([`stream::finish`]), and a reader that stops reading after the last game
    /// does not fail a run that played every game.
    fn finish(&mut self, summary: &RunSummary, tally: &Tally) -> io::Result<()> {
        stream::ran(summary.played, summary.interrupted);
        self.standings(tally, true)
    }
}
