//! The SPRT as people see it while it runs: a line with the LLR between its bounds at
//! most once a second and at the end, and a line of `sprt.csv` for every game pair. The
//! decisions are the test's own ([`crate::sprt::SprtRule`] makes them on the game loop);
//! this view shows them in the order the pairs were recorded.

use crate::sprt::{Judgements, SprtEnd, files};
use crate::stats::{SprtStatus, Tally};
use crate::tournament::events::{Control, Event, View};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The test as a view of the run.
pub(crate) struct SprtView {
    judgements: Judgements,
    csv: File,
    quiet: bool,
    last_print: Instant,
    /// The status after the last pair recorded.
    last: Option<SprtStatus>,
    /// Pairs in the last line printed.
    printed_pairs: u64,
    /// Set when the test ended.
    pub end: Option<SprtEnd>,
}

impl SprtView {
    /// Shows the `judgements` of the run's stop rule, appending to `sprt.csv` in `dir`;
    /// prints progress lines unless `quiet`.
    pub(crate) fn new(dir: &Path, judgements: Judgements, quiet: bool) -> io::Result<SprtView> {
        Ok(SprtView {
            judgements,
            csv: files::append_csv(dir)?,
            quiet,
            last_print: Instant::now(),
            last: None,
            printed_pairs: 0,
            end: None,
        })
    }

    fn print(&mut self, status: &SprtStatus) -> io::Result<()> {
        if !self.quiet {
            writeln!(io::stdout().lock(), "{}", status.line())?;
        }
        self.printed_pairs = status.pairs;
        self.last_print = Instant::now();
        Ok(())
    }

    /// Prints the last status if the last line printed is older.
    pub(crate) fn print_last(&mut self) -> io::Result<()> {
        if let Some(status) = self.last
            && status.pairs != self.printed_pairs
        {
            self.print(&status)?;
        }
        Ok(())
    }
}

impl View for SprtView {
    fn event(&mut self, event: &Event<'_>, _tally: &Tally) -> io::Result<Control> {
        let Event::GameFinished {
            pair_completed: true,
            ..
        } = event
        else {
            return Ok(Control::Continue);
        };
        // The rule judged this pair on the game loop before the game was recorded.
        let Some(j) = self.judgements.next() else {
            return Ok(Control::Continue);
        };
        if self.end.is_some() {
            return Ok(Control::Stop);
        }
        files::append_line(&mut self.csv, &j)?;
        crate::events::emit(&crate::events::Event::SprtStatus((&j).into()));
        self.last = Some(j.status);
        self.end = j.end;
        if self.end.is_some() || self.last_print.elapsed() >= Duration::from_secs(1) {
            self.print(&j.status)?;
        }
        Ok(match self.end {
            Some(_) => Control::Stop,
            None => Control::Continue,
        })
    }
}
