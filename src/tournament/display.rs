//! Reporters that never touch processes: the results files, the standings, and the live
//! display (a progress bar with standings on a terminal, plain periodic lines otherwise).

use crate::referee::Termination;
use crate::rules::Side;
use crate::tournament::results::{CsvRow, GameRecord, ResultsWriter};
use crate::tournament::run::{Control, Event, Reporter, RunSummary, StartInfo};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Writes each finished game to `games.jsonl` and `games.csv`.
pub struct ResultsReporter(pub ResultsWriter);

impl Reporter for ResultsReporter {
    fn event(&mut self, event: &Event<'_>) -> io::Result<Control> {
        if let Event::GameFinished(g) = event {
            self.0.write(g)?;
        }
        Ok(Control::Continue)
    }
}

/// One engine's line in the standings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Line {
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Games this engine lost by a fault.
    pub faults: u64,
    /// Sum of (own store - opponent's store).
    pub margin: i64,
}

impl Line {
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }
}

/// Points per engine.
#[derive(Clone, Debug, Default)]
pub struct Standings {
    pub lines: BTreeMap<String, Line>,
}

impl Standings {
    /// Starts with every engine at zero.
    pub fn new(names: &[String]) -> Standings {
        Standings {
            lines: names.iter().map(|n| (n.clone(), Line::default())).collect(),
        }
    }

    fn add_game(&mut self, south: &str, north: &str, points_south: f64, scores: (u16, u16)) {
        for (name, points, own, other) in [
            (south, points_south, scores.0, scores.1),
            (north, 1.0 - points_south, scores.1, scores.0),
        ] {
            let l = self.lines.entry(name.to_string()).or_default();
            l.games += 1;
            if points >= 1.0 {
                l.wins += 1;
            } else if points > 0.0 {
                l.draws += 1;
            } else {
                l.losses += 1;
            }
            l.margin += own as i64 - other as i64;
        }
    }

    /// Adds a finished game.
    pub fn add(&mut self, g: &GameRecord) {
        self.add_game(
            &g.south,
            &g.north,
            g.play.result.points(Side::South),
            (g.play.south_score, g.play.north_score),
        );
        if let Some(l) = g.loser_name() {
            self.lines.entry(l.to_string()).or_default().faults += 1;
        }
    }

    /// Adds a game read back from `games.csv`.
    pub fn add_row(&mut self, row: &CsvRow) {
        let Some(result) = row.result() else { return };
        self.add_game(
            &row.south,
            &row.north,
            result.points(Side::South),
            (row.south_score, row.north_score),
        );
        if !row.loser.is_empty() {
            self.lines.entry(row.loser.clone()).or_default().faults += 1;
        }
    }

    /// Engines by points, best first (ties by name).
    pub fn ranked(&self) -> Vec<(&str, &Line)> {
        let mut v: Vec<_> = self.lines.iter().map(|(n, l)| (n.as_str(), l)).collect();
        v.sort_by(|a, b| b.1.points().total_cmp(&a.1.points()).then(a.0.cmp(b.0)));
        v
    }

    /// One line: `hard 7.5/8 (+120±80), medium 5/8 (+10±70), ...`; the Elo part when known.
    pub fn compact(&self, elo: &EloTable) -> String {
        let parts: Vec<String> = self
            .ranked()
            .iter()
            .map(|(n, l)| {
                let rating = elo
                    .get(*n)
                    .map(|&(e, err)| format!(" ({})", fmt_elo(e, err)))
                    .unwrap_or_default();
                format!("{n} {}/{}{rating}", fmt_points(l.points()), l.games)
            })
            .collect();
        parts.join(", ")
    }

    /// A table with a header, with an Elo column when ratings are known.
    pub fn table(&self, elo: &EloTable) -> String {
        let width = self.lines.keys().map(|n| n.len()).max().unwrap_or(6).max(6);
        let mut s = format!(
            "{:>4}  {:<width$} {:>13} {:>6} {:>7} {:>6} {:>5} {:>5} {:>5} {:>6} {:>7}\n",
            "rank",
            "engine",
            "elo",
            "games",
            "points",
            "score",
            "wins",
            "draws",
            "loss",
            "faults",
            "margin"
        );
        for (i, (name, l)) in self.ranked().iter().enumerate() {
            let score = if l.games > 0 {
                100.0 * l.points() / l.games as f64
            } else {
                0.0
            };
            let margin = if l.games > 0 {
                l.margin as f64 / l.games as f64
            } else {
                0.0
            };
            s.push_str(&format!(
                "{:>4}  {:<width$} {:>13} {:>6} {:>7} {:>5.1}% {:>5} {:>5} {:>5} {:>6} {:>+7.2}\n",
                i + 1,
                name,
                elo.get(*name)
                    .map(|&(e, err)| fmt_elo(e, err))
                    .unwrap_or_else(|| "-".into()),
                l.games,
                fmt_points(l.points()),
                score,
                l.wins,
                l.draws,
                l.losses,
                l.faults,
                margin
            ));
        }
        s
    }
}

/// Elo and the half-width of its 95% interval per engine.
pub type EloTable = BTreeMap<String, (f64, f64)>;

/// The ratings the leaderboard reporter publishes for the live display to show.
pub type LiveElo = Arc<Mutex<EloTable>>;

fn fmt_elo(elo: f64, error: f64) -> String {
    match (elo.is_finite(), error.is_finite()) {
        (true, true) => format!("{elo:+.0} ± {error:.0}"),
        (true, false) => format!("{elo:+.0}"),
        _ => "-".into(),
    }
}

fn fmt_points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// How the live display shows progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisplayMode {
    /// A progress bar with standings (stdout is a terminal).
    Bar,
    /// A plain line every few seconds (stdout is a file or a pipe).
    Lines,
    /// Nothing.
    Quiet,
}

impl DisplayMode {
    /// `Bar` on a terminal, `Lines` otherwise, `Quiet` when asked.
    pub fn detect(quiet: bool) -> DisplayMode {
        use std::io::IsTerminal;
        if quiet {
            DisplayMode::Quiet
        } else if std::io::stdout().is_terminal() {
            DisplayMode::Bar
        } else {
            DisplayMode::Lines
        }
    }
}

/// The live display: progress, standings, faults as they happen, a table at the end.
pub struct LiveDisplay {
    mode: DisplayMode,
    bar: Option<ProgressBar>,
    pub standings: Standings,
    total: u64,
    done: u64,
    done_at_start: u64,
    started: Instant,
    last_line: Instant,
    /// Seconds between plain lines.
    pub every: Duration,
    /// Ratings, when a leaderboard reporter publishes them.
    elo: LiveElo,
}

impl LiveDisplay {
    pub fn new(mode: DisplayMode, standings: Standings) -> LiveDisplay {
        LiveDisplay {
            mode,
            bar: None,
            standings,
            total: 0,
            done: 0,
            done_at_start: 0,
            started: Instant::now(),
            last_line: Instant::now(),
            every: Duration::from_secs(5),
            elo: LiveElo::default(),
        }
    }

    /// Shows the ratings published into `elo` beside the points.
    pub fn with_elo(mut self, elo: LiveElo) -> LiveDisplay {
        self.elo = elo;
        self
    }

    fn elo(&self) -> EloTable {
        self.elo.lock().map(|t| t.clone()).unwrap_or_default()
    }

    fn eta(&self) -> String {
        let played = self.done - self.done_at_start;
        if played == 0 {
            return "?".into();
        }
        let per = self.started.elapsed().as_secs_f64() / played as f64;
        let left = (self.total.saturating_sub(self.done)) as f64 * per;
        crate::referee::format_duration(Duration::from_secs(left.round() as u64))
    }

    fn say(&self, text: &str) {
        match (&self.bar, self.mode) {
            (Some(bar), _) => bar.println(text),
            (None, DisplayMode::Quiet) => {}
            (None, _) => {
                let _ = writeln!(io::stdout().lock(), "{text}");
            }
        }
    }
}

impl Reporter for LiveDisplay {
    fn start(&mut self, info: &StartInfo) -> io::Result<()> {
        self.total = info.total;
        self.done = info.done;
        self.done_at_start = info.done;
        self.started = Instant::now();
        self.last_line = Instant::now();
        self.standings = info.earlier.clone();
        for n in &info.names {
            self.standings.lines.entry(n.clone()).or_default();
        }
        match self.mode {
            DisplayMode::Bar => {
                let bar =
                    ProgressBar::with_draw_target(Some(info.total), ProgressDrawTarget::stdout());
                let style = ProgressStyle::with_template(
                    "{wide_bar} {pos}/{len} games, {elapsed} elapsed, ETA {eta}\n{msg}",
                )
                .map_err(io::Error::other)?;
                bar.set_style(style);
                bar.set_position(info.done);
                bar.set_message(self.standings.table(&self.elo()));
                bar.enable_steady_tick(Duration::from_millis(500));
                self.bar = Some(bar);
            }
            DisplayMode::Lines => {
                self.say(&format!(
                    "tournament {}: {} games to play ({} done)",
                    info.id,
                    info.total - info.done,
                    info.done
                ));
            }
            DisplayMode::Quiet => {}
        }
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>) -> io::Result<Control> {
        match event {
            Event::GameFinished(g) => {
                self.done += 1;
                self.standings.add(g);
                if g.play.termination.is_fault() {
                    self.say(&format!(
                        "game {}: {} lost by {} ({})",
                        g.id,
                        g.loser_name().unwrap_or("?"),
                        g.play.termination,
                        crate::referee::truncate(&g.play.detail, 160)
                    ));
                }
                match (&self.bar, self.mode) {
                    (Some(bar), _) => {
                        bar.set_position(self.done);
                        bar.set_message(self.standings.table(&self.elo()));
                    }
                    (None, DisplayMode::Lines)
                        if self.last_line.elapsed() >= self.every || self.done == self.total =>
                    {
                        self.last_line = Instant::now();
                        self.say(&format!(
                            "[{}/{}] ETA {} | {}",
                            self.done,
                            self.total,
                            self.eta(),
                            self.standings.compact(&self.elo())
                        ));
                    }
                    _ => {}
                }
            }
            Event::PairFinished(_) => {}
            Event::GameInterrupted(g) => {
                if g.play.termination == Termination::Interrupted && self.mode == DisplayMode::Lines
                {
                    self.say(&format!("game {}: interrupted", g.id));
                }
            }
        }
        Ok(Control::Continue)
    }

    fn finish(&mut self, summary: &RunSummary) -> io::Result<()> {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if self.mode == DisplayMode::Quiet {
            return Ok(());
        }
        let secs = summary.elapsed.as_secs_f64();
        let rate = if secs > 0.0 {
            summary.played as f64 / secs
        } else {
            0.0
        };
        let mut out = io::stdout().lock();
        writeln!(out, "{}", self.standings.table(&self.elo()).trim_end())?;
        writeln!(
            out,
            "{} games played in {:.1} s ({rate:.2} games/s), {}/{} done",
            summary.played, secs, self.done, self.total
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standings_count_points_and_rank() {
        let mut s = Standings::new(&["a".into(), "b".into()]);
        s.add_game("a", "b", 1.0, (30, 18));
        s.add_game("b", "a", 0.5, (24, 24));
        let r = s.ranked();
        assert_eq!(r[0].0, "a");
        assert_eq!(r[0].1.points(), 1.5);
        assert_eq!(r[1].1.losses, 1);
        assert_eq!(s.compact(&EloTable::new()), "a 1.5/2, b 0.5/2");
        assert!(s.table(&EloTable::new()).contains("+6.00"));
        let elo = EloTable::from([
            ("a".to_string(), (95.4, 120.2)),
            ("b".to_string(), (-95.4, f64::NAN)),
        ]);
        assert_eq!(s.compact(&elo), "a 1.5/2 (+95 ± 120), b 0.5/2 (-95)");
        assert!(s.table(&elo).contains("+95 ± 120"), "{}", s.table(&elo));
    }
}
