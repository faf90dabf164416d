//! The live display: progress, the standings of the scoreboard (the same fit every report
//! shows, so the last table equals the files), faults as they happen, a table at the end.
//! On a terminal it is a progress bar with the standings below, sized to the terminal;
//! otherwise a plain line every few seconds.

use crate::record::{clean_text, format_duration};
use crate::report::{match_summary, standings_line, standings_table};
use crate::stats::{Standings, Tally};
use crate::tournament::events::{Control, Event, RunSummary, StartInfo, View};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// How the live display shows progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DisplayMode {
    /// A progress bar with standings (stdout is a terminal).
    Bar,
    /// A plain line every few seconds (stdout is a file or a pipe).
    Lines,
    /// Nothing.
    Quiet,
}

impl DisplayMode {
    /// `Bar` on a terminal, `Lines` otherwise, `Quiet` when asked.
    pub(crate) fn detect(quiet: bool) -> DisplayMode {
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

/// The terminal's size (columns, rows), 80x24 when unknown.
fn terminal_size() -> (usize, usize) {
    crate::sys::terminal_size().unwrap_or((80, 24))
}

/// The standings are refitted for the bar at most this often.
const REFIT_EVERY: Duration = Duration::from_millis(250);

/// The live display.
pub(crate) struct LiveDisplay {
    mode: DisplayMode,
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    done_at_start: u64,
    started: Instant,
    last_line: Instant,
    last_fit: Option<Instant>,
    /// The engines' names, in configuration order.
    names: Vec<String>,
    /// Seconds between plain lines.
    pub every: Duration,
    repeats: Repeats,
    /// The run plays until a decision (an SPRT): its game count is a limit, so no
    /// progress towards it or time left is shown (the test shows its own progress).
    until_decided: bool,
}

/// Says when a game repeats an earlier one (the run marks it in its record, and leaves
/// it out of the statistics), once per pairing.
#[derive(Debug, Default)]
struct Repeats {
    /// Pairings already warned about.
    warned: std::collections::HashSet<(String, String)>,
}

impl Repeats {
    /// A warning when `g` is marked as repeating a game (once per pairing).
    fn check(&mut self, g: &crate::record::GameRecord) -> Option<String> {
        let earlier = g.repeats.as_deref()?;
        let mut pairing = (g.south.clone(), g.north.clone());
        if pairing.0 > pairing.1 {
            std::mem::swap(&mut pairing.0, &mut pairing.1);
        }
        if !self.warned.insert(pairing) {
            return None;
        }
        Some(format!(
            "warning: game {} of {} against {} repeats game {earlier} move for move: the \
             engines play alike from the same opening, so it is left out of the Elo and \
             the SPRT; use more varied openings (--opening-plies, --openings)",
            clean_text(&g.game),
            clean_text(&g.south),
            clean_text(&g.north)
        ))
    }
}

/// A fault's detail on one line of the terminal: whole when short; else its start and its
/// end, where an engine's stderr says what went wrong (`RuntimeError: ...`), with the
/// middle left out (the whole is in `games.csv` and the engine's log).
fn fault_detail(detail: &str) -> String {
    const HEAD: usize = 120;
    const TAIL: usize = 200;
    if detail.len() <= HEAD + TAIL + 40 {
        return detail.to_string();
    }
    let mut head = HEAD;
    while !detail.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = detail.len() - TAIL;
    while !detail.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{} ... {} ({} bytes in all: games.csv and the engine's log keep it whole)",
        &detail[..head],
        &detail[tail..],
        detail.len()
    )
}

impl LiveDisplay {
    pub(crate) fn new(mode: DisplayMode) -> LiveDisplay {
        LiveDisplay {
            mode,
            bar: None,
            total: 0,
            done: 0,
            done_at_start: 0,
            started: Instant::now(),
            last_line: Instant::now(),
            last_fit: None,
            names: Vec::new(),
            every: Duration::from_secs(5),
            repeats: Repeats::default(),
            until_decided: false,
        }
    }

    /// A display of a run that plays until a decision (an SPRT), not through its games.
    pub(crate) fn until_decided(mut self) -> LiveDisplay {
        self.until_decided = true;
        self
    }

    /// The games so far: `[89/200]` of a planned run, `[89 games]` of one that plays until
    /// a decision.
    fn count(&self) -> String {
        match self.until_decided {
            true => format!("[{}]", crate::record::counted(self.done, "game")),
            false => format!("[{}/{}]", self.done, self.total),
        }
    }

    /// Time left at the pace of this run (games of earlier runs do not count).
    /// `ETA 3m 10s` while games remain, `done in 2m 5s` once all are played.
    fn eta(&self) -> String {
        let played = self.done - self.done_at_start;
        if self.done >= self.total {
            let took = self.started.elapsed();
            let took = if took < Duration::from_secs(1) {
                Duration::from_millis(took.as_millis() as u64)
            } else {
                Duration::from_secs(took.as_secs_f64().round() as u64)
            };
            return format!("done in {}", format_duration(took));
        }
        if played == 0 {
            return "ETA ?".into();
        }
        let per = self.started.elapsed().as_secs_f64() / played as f64;
        let left = self.total.saturating_sub(self.done) as f64 * per;
        format!(
            "ETA {}",
            format_duration(Duration::from_secs(left.round() as u64))
        )
    }

    fn say(&self, text: &str) -> io::Result<()> {
        match (&self.bar, self.mode) {
            (Some(bar), _) => {
                bar.println(text);
                Ok(())
            }
            (None, DisplayMode::Quiet) => Ok(()),
            (None, _) => writeln!(io::stdout().lock(), "{text}"),
        }
    }

    /// The table under the bar, sized to the terminal (two lines are the bar's).
    fn bar_table(&self, tally: &Tally) -> String {
        let (cols, rows) = terminal_size();
        match tally.standings(None) {
            Ok(s) => standings_table(&s, cols, rows.saturating_sub(4).max(3)),
            Err(_) => String::new(),
        }
    }

    fn refresh_bar(&mut self, tally: &Tally, now: bool) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(self.done);
        if now || self.last_fit.is_none_or(|t| t.elapsed() >= REFIT_EVERY) {
            self.last_fit = Some(Instant::now());
            bar.set_message(self.bar_table(tally).trim_end().to_string());
        }
    }
}

impl View for LiveDisplay {
    fn start(&mut self, info: &StartInfo, tally: &Tally) -> io::Result<()> {
        self.total = info.total;
        self.names = info.names.clone();
        self.done = info.done;
        self.done_at_start = info.done;
        self.started = Instant::now();
        self.last_line = Instant::now();
        for note in &info.notes {
            self.say(&format!("note: {note}"))?;
        }
        match self.mode {
            DisplayMode::Bar => {
                let (len, template) = match self.until_decided {
                    true => (None, "{spinner} {pos} games, {elapsed} elapsed\n{msg}"),
                    false => (
                        Some(info.total),
                        "{wide_bar} {pos}/{len} games, {elapsed} elapsed, ETA {eta}\n{msg}",
                    ),
                };
                let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stdout());
                let style = ProgressStyle::with_template(template).map_err(io::Error::other)?;
                bar.set_style(style);
                bar.enable_steady_tick(Duration::from_millis(500));
                self.bar = Some(bar);
                self.refresh_bar(tally, true);
            }
            // The game limit is the header's (`cli::execute`), not repeated here.
            DisplayMode::Lines if self.until_decided => self.say(&format!(
                "tournament {}: game pairs until the test decides ({} done)",
                info.id, info.done
            ))?,
            DisplayMode::Lines => self.say(&format!(
                "tournament {}: {} to play ({} done)",
                info.id,
                crate::record::counted(info.total - info.done, "game"),
                info.done
            ))?,
            DisplayMode::Quiet => {}
        }
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>, tally: &Tally) -> io::Result<Control> {
        match event {
            Event::GameFinished { record: g, .. } => {
                self.done += 1;
                if let Some(warning) = self.repeats.check(g) {
                    self.say(&warning)?;
                }
                if g.termination.is_fault() {
                    self.say(&format!(
                        "game {}: {} lost by {} ({})",
                        g.game,
                        clean_text(g.loser_name().unwrap_or("?")),
                        g.termination,
                        clean_text(&fault_detail(&g.detail))
                    ))?;
                }
                match self.mode {
                    DisplayMode::Bar => self.refresh_bar(tally, false),
                    DisplayMode::Lines
                        if self.last_line.elapsed() >= self.every || self.done == self.total =>
                    {
                        self.last_line = Instant::now();
                        let line = match tally.standings(None) {
                            Ok(s) => standings_line(&s),
                            Err(_) => String::new(),
                        };
                        let time = match self.until_decided {
                            true => format!(
                                "{} elapsed",
                                format_duration(Duration::from_millis(
                                    self.started.elapsed().as_millis() as u64 / 100 * 100
                                ))
                            ),
                            false => self.eta(),
                        };
                        self.say(&format!("{} {time} | {line}", self.count()))?;
                    }
                    DisplayMode::Lines | DisplayMode::Quiet => {}
                }
            }
            Event::GameInterrupted { id } => {
                if self.mode == DisplayMode::Lines {
                    self.say(&format!("game {id}: stopped before its end, not recorded"))?;
                }
            }
        }
        Ok(Control::Continue)
    }

    fn finish(&mut self, summary: &RunSummary, tally: &Tally) -> io::Result<()> {
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
        let (cols, _) = terminal_size();
        let mut out = io::stdout().lock();
        if let Ok(s) = tally.standings(None) {
            write!(out, "{}", standings_table(&s, cols.max(100), usize::MAX))?;
            if let Some((first, second)) = two_engines(&self.names, &s)
                && let Some(text) = match_summary(&s, first, second)
            {
                write!(out, "{text}")?;
            }
        }
        let done = match self.until_decided {
            true => crate::record::counted(self.done, "game"),
            false => format!("{}/{}", self.done, self.total),
        };
        writeln!(
            out,
            "{} played in {:.1} s ({rate:.2} games/s), {done} done",
            crate::record::counted(summary.played, "game"),
            secs,
        )?;
        Ok(())
    }
}

/// The two engines of a match, the first configured first (in order of first appearance
/// when the names are not those of the games); `None` unless exactly two engines played.
fn two_engines<'a>(names: &'a [String], s: &'a Standings) -> Option<(&'a str, &'a str)> {
    if s.rows.len() != 2 {
        return None;
    }
    let played = |n: &String| s.rows.iter().any(|r| r.engine == *n);
    if let [a, b] = names
        && played(a)
        && played(b)
    {
        return Some((a, b));
    }
    let (x, y) = (&s.rows[0], &s.rows[1]);
    Some(if x.index < y.index {
        (&x.engine, &y.engine)
    } else {
        (&y.engine, &x.engine)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::sample_record;

    /// A long crash detail keeps its end, where the error of a traceback is.
    #[test]
    fn a_long_fault_detail_keeps_the_error_at_its_end() {
        let detail = format!(
            "the engine exited with status 1; its stderr: Traceback (most recent call last): \
             | {} | RuntimeError: boom in my search",
            "  File \"x.py\", line 7, in <module> | ".repeat(20)
        );
        let shown = fault_detail(&detail);
        assert!(
            shown.starts_with("the engine exited with status 1"),
            "{shown}"
        );
        assert!(shown.contains("RuntimeError: boom in my search"), "{shown}");
        assert!(shown.len() < 420, "{}", shown.len());
        assert_eq!(fault_detail("short"), "short");
    }

    #[test]
    fn a_repeated_game_is_warned_about_once_per_pairing() {
        let mut r = Repeats::default();
        let a = sample_record("t", 1, "x", "y");
        let mut b = sample_record("t", 3, "x", "y");
        assert_eq!(r.check(&a), None);
        b.repeats = Some("t-1".into());
        let w = r.check(&b).unwrap();
        assert!(
            w.contains("game t-3") && w.contains("repeats game t-1"),
            "{w}"
        );
        b.game = "t-5".into();
        assert_eq!(r.check(&b), None, "once per pairing");
        // A game not marked is not a repeat.
        let c = sample_record("t", 2, "y", "x");
        assert_eq!(r.check(&c), None);
    }
}
