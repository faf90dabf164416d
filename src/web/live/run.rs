//! The run's side: the referee's sowings, the recorder's games and standings, and the
//! view that feeds them to the page.

use super::*;

impl Live {
    /// A game started or a sowing was played.
    pub(crate) fn observe(&self, update: &GameUpdate<'_>) {
        match update {
            GameUpdate::Started {
                setup,
                position,
                moves,
            } => {
                let start = setup
                    .opening
                    .start_position(setup.rules)
                    .expect("openings are checked before the game");
                let (opening, _) = frames(start, moves);
                let board = Board {
                    start: setup.opening.start.is_some().then_some(start),
                    game: setup.id.clone(),
                    number: setup.number,
                    south: setup.names[0].clone(),
                    north: setup.names[1].clone(),
                    rules: setup.rules,
                    frames: opening,
                    position: **position,
                    record: None,
                };
                let single = matches!(self.mode, Mode::Play | Mode::Watch);
                self.change(|s| {
                    if single {
                        s.boards.clear();
                        s.starting = false;
                        s.pending = None;
                        s.resigned = None;
                    } else {
                        s.boards.retain(|b| b.game != board.game);
                    }
                    s.boards.push(board);
                    s.boards.sort_by_key(|b| b.number);
                });
            }
            GameUpdate::Moved {
                game,
                ply,
                record,
                before,
                after,
            } => {
                let Some((f, _)) = frame(before, record) else {
                    return;
                };
                self.change(|s| {
                    if let Some(b) = s.boards.iter_mut().find(|b| b.game == *game)
                        && b.record.is_none()
                        && b.frames.len() == *ply
                    {
                        b.frames.push(f);
                        b.position = **after;
                    }
                });
            }
        }
    }

    /// The run starts.
    pub(crate) fn start_run(&self, info: &StartInfo, tally: &Tally) {
        let standings = standings_json(tally);
        self.change(|s| {
            s.names = info.names.clone();
            s.total = info.total;
            s.finished = info.done;
            s.standings = standings;
        });
    }

    /// A game was recorded.
    pub(crate) fn game_finished(&self, record: &GameRecord) {
        let record = Arc::new(record.clone());
        let single = matches!(self.mode, Mode::Play | Mode::Watch);
        self.change(|s| {
            s.finished += 1;
            let idle = s.boards.iter().all(|b| b.record.is_some());
            match s.boards.iter_mut().find(|b| b.game == record.game) {
                Some(b) if single => {
                    b.frames = record_frames(&record);
                    b.position = record.final_position;
                    b.record = Some(record.clone());
                }
                Some(_) => s.boards.retain(|b| b.game != record.game),
                // The next game may have started already (the page asked for it before
                // this one ended): its board stays.
                None if single && idle => {
                    // A game lost before it started (an engine that failed to start).
                    s.boards.clear();
                    s.starting = false;
                    s.boards.push(Board {
                        game: record.game.clone(),
                        number: record.number,
                        south: record.south.clone(),
                        north: record.north.clone(),
                        rules: record.rules,
                        start: record
                            .start
                            .is_some()
                            .then(|| record.start_position().ok())
                            .flatten(),
                        frames: record_frames(&record),
                        position: record.final_position,
                        record: Some(record.clone()),
                    });
                }
                None => {}
            }
            if single && s.pending.as_ref().is_some_and(|p| p.game == record.game) {
                s.pending = None;
            }
            s.recent.push_back(record);
            while s.recent.len() > RECENT {
                s.recent.pop_front();
            }
        });
    }

    /// A game was stopped and not recorded.
    pub(crate) fn game_interrupted(&self, id: &str) {
        self.change(|s| {
            s.boards.retain(|b| b.game != id);
            if s.pending.as_ref().is_some_and(|p| p.game == id) {
                s.pending = None;
            }
        });
    }

    /// The standings of `tally`.
    pub(crate) fn set_standings(&self, tally: &Tally) {
        let standings = standings_json(tally);
        self.change(|s| {
            s.standings = standings;
        });
    }

    /// The run has ended: `why`, for the page.
    pub(crate) fn run_ended(&self, why: String) {
        self.change(|s| {
            s.ended = Some(why);
            s.pending = None;
            if !matches!(self.mode, Mode::Play | Mode::Watch) {
                s.boards.clear();
            }
        });
    }

    /// Games read from the results folder (`kalaha show --serve`): `count` of them, the
    /// last of which are `last`, and the scoreboard of all the games read so far.
    pub(crate) fn add_recorded(&self, count: u64, last: Vec<GameRecord>, tally: &Tally) {
        let standings = standings_json(tally);
        self.change(|s| {
            s.finished += count;
            s.recent.extend(last.into_iter().map(Arc::new));
            while s.recent.len() > RECENT {
                s.recent.pop_front();
            }
            s.standings = standings;
            s.names = tally.engines().iter().map(|e| e.name.clone()).collect();
        });
    }

    /// An observer that feeds this state.
    pub(crate) fn observer(self: &Arc<Self>) -> GameObserver {
        let me = self.clone();
        GameObserver::new(move |u| me.observe(u))
    }
}

/// The live state as a view of a run: every recorded game, the standings, the end.
pub(crate) struct LiveView {
    live: Arc<Live>,
    last_fit: Option<Instant>,
    /// The run's kind and its `--title`, which title the page once the names are settled.
    run: Option<(RunKind, Option<String>)>,
}

/// In a tournament the standings are refitted at most this often (and at the end).
const REFIT_EVERY: Duration = Duration::from_millis(500);

impl LiveView {
    pub(crate) fn new(live: Arc<Live>) -> LiveView {
        LiveView {
            live,
            last_fit: None,
            run: None,
        }
    }

    /// The page of a run of `kind` titled `title` (`--title`): at the start it is titled by
    /// the kind and the engines' names as the run settled them ([`crate::web::run_title`]).
    pub(crate) fn of_run(mut self, kind: RunKind, title: Option<String>) -> LiveView {
        self.run = Some((kind, title));
        self
    }
}

impl View for LiveView {
    fn start(&mut self, info: &StartInfo, tally: &Tally) -> io::Result<()> {
        if let Some((kind, title)) = &self.run {
            self.live.set_title(crate::web::run_title(
                *kind,
                &info.names,
                title.as_deref(),
                self.live.dir.as_deref(),
            ));
        }
        self.live.start_run(info, tally);
        self.last_fit = Some(Instant::now());
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>, tally: &Tally) -> io::Result<Control> {
        match event {
            Event::GameFinished { record, .. } => {
                self.live.game_finished(record);
                let due = self.live.mode != Mode::Tournament
                    || self.last_fit.is_none_or(|t| t.elapsed() >= REFIT_EVERY);
                if due {
                    self.live.set_standings(tally);
                    self.last_fit = Some(Instant::now());
                }
            }
            Event::GameInterrupted { id } => self.live.game_interrupted(id),
        }
        Ok(Control::Continue)
    }

    fn observer(&mut self) -> Option<GameObserver> {
        Some(self.live.observer())
    }

    fn finish(&mut self, summary: &RunSummary, tally: &Tally) -> io::Result<()> {
        self.live.set_standings(tally);
        self.live
            .run_ended(end_words(self.live.mode, self.live.dir.as_deref(), summary));
        // The process ends next: the pages that follow the run see its end first.
        self.live.wait_sent(FAREWELL);
        Ok(())
    }
}

/// What the page says at the end of a run: how many games, and why it ended (the whole
/// schedule, the stop rule of an SPRT, an interruption, a failure to write), with the
/// folder of a run's results.
pub(super) fn end_words(mode: Mode, dir: Option<&std::path::Path>, summary: &RunSummary) -> String {
    let played = crate::record::counted(summary.played, "game");
    let why = if matches!(mode, Mode::Play | Mode::Watch) {
        format!("{played} recorded")
    } else if let Some(failure) = &summary.failed {
        format!("the run stopped after {played} played: {failure}")
    } else if summary.stopped_by_interrupt || summary.aborted {
        format!("the run was stopped: {played} played")
    } else if summary.stopped_by_view {
        // The only rules that end a run early are an SPRT's.
        format!("the run is over, the test decided: {played} played")
    } else {
        format!("the run is over: {played} played")
    };
    match (dir, mode) {
        (Some(dir), Mode::Tournament) => format!(
            "{why}; run finished: results in {}",
            crate::record::shown_path(dir)
        ),
        _ => why,
    }
}

impl Live {
    /// The verdict of the run's test, as the terminal says it (an SPRT's line from
    /// [`crate::sprt::conclusion`]): shown on the page under the end of the run. Waits a
    /// moment for the open pages to be sent it, as the end of the run does.
    pub(crate) fn show_verdict(&self, verdict: String) {
        self.change(|s| s.verdict = Some(verdict));
        self.wait_sent(FAREWELL);
    }
}

/// How long the end of a run waits for its pages to be sent the final state.
const FAREWELL: Duration = Duration::from_secs(3);
