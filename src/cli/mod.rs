//! The command line: one module per subcommand, each with its clap arguments and a `run`
//! function. Exit codes: 0 success, 1 failure, 2 usage or input error; `sprt` adds 3 (H0
//! accepted) and 4 (game limit reached). A broken pipe on stdout is not an error.

mod analyze;
mod check;
mod common;
mod engine;
mod error;
mod execute;
pub mod exit;
mod match_cmd;
mod openings;
mod perft;
mod play;
mod ratings;
mod rules_args;
use crate::record::shell;
mod show;
mod solve;
mod sprt;
mod sprt_workers;
mod tables;
mod tournament;

pub use error::{CliError, CliResult};
pub use rules_args::RulesArgs;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A referee and tournament harness for Kalah engines.
#[derive(Debug, Parser)]
#[command(name = "kalaha", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success, 1 failure, 2 usage or input error \
(sprt: 3 when H0 is accepted, 4 when --max-games ran out)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Perft(perft::Args),
    Analyze(analyze::Args),
    Openings(openings::Args),
    Solve(solve::Args),
    Engine(engine::Args),
    Check(check::Args),
    Match(match_cmd::Args),
    Tournament(tournament::Args),
    Sprt(sprt::Args),
    Ratings(ratings::Args),
    Show(show::Args),
    Tables(tables::Args),
    Play(play::Args),
}

/// Sends the library's warnings (and, with `RUST_LOG=debug`, its traces) to stderr.
/// `RUST_LOG` takes a level, or `target=level` pairs separated by commas.
fn init_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let filter = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => text.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("warning: RUST_LOG={text:?} is not understood ({e}); showing warnings");
            Targets::new().with_default(LevelFilter::WARN)
        }),
        _ => Targets::new().with_default(LevelFilter::WARN),
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .event_format(PlainEvent);
    let _ = tracing_subscriber::registry()
        .with(layer)
        .with(crate::events::WarningLayer)
        .with(filter)
        .try_init();
}

/// Log lines as kalaha's own messages read: `warning: ...`, `error: ...` (and the level's
/// name for the traces `RUST_LOG` asks for), then the message and any other fields.
struct PlainEvent;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for PlainEvent
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            tracing::Level::INFO => "info",
            tracing::Level::DEBUG => "debug",
            tracing::Level::TRACE => "trace",
        };
        // Formatted first, then cleaned: a warning may quote a path or an engine's text.
        let mut text = String::new();
        ctx.field_format().format_fields(
            tracing_subscriber::fmt::format::Writer::new(&mut text),
            event,
        )?;
        writeln!(writer, "{level}: {}", crate::record::clean_message(&text))
    }
}

/// What kalaha does for an option that cutechess-cli or fastchess spell another way: the
/// kalaha flag to run instead, or why none is needed.
enum Ours {
    Flag(&'static str),
    NoFlag(&'static str),
}

const TC: Ours = Ours::Flag(
    "--clock 10s+100ms (base plus increment) or --move-time 100ms; tc=100ms in an engine \
     spec for time odds",
);
const ROUNDS: Ours =
    Ours::Flag("--games 100 (games per pairing; each opening is played twice, seats swapped)");

const FOREIGN_FLAGS: &[(&str, Ours)] = &[
    (
        "-engine",
        Ours::Flag(
            "--engine cmd=./my-engine name=mine, once per engine, e.g. kalaha match --engine \
             cmd=./new --engine cmd=./old",
        ),
    ),
    (
        "-each",
        Ours::Flag("--each option.depth=8 (settings for every engine)"),
    ),
    ("-games", Ours::Flag("--games 100 (games per pairing)")),
    ("-rounds", ROUNDS),
    ("--rounds", ROUNDS),
    ("-concurrency", Ours::Flag("--concurrency 4")),
    ("-tc", TC),
    ("--tc", TC),
    ("-st", Ours::Flag("--move-time 100ms")),
    (
        "-openings",
        Ours::Flag("--openings openings.txt (pit numbers per line) or --opening-plies 4"),
    ),
    (
        "-repeat",
        Ours::NoFlag("every opening is played twice with the seats swapped, always"),
    ),
    (
        "-sprt",
        Ours::Flag("kalaha sprt --engine cmd=./new --engine cmd=./old --elo0 0 --elo1 5"),
    ),
    (
        "-pgnout",
        Ours::NoFlag(
            "every game is in games.csv and games.jsonl of the results folder; \
             kalaha show DIR GAME replays one",
        ),
    ),
    (
        "-epdout",
        Ours::NoFlag(
            "every game is in games.jsonl of the results folder; kalaha show DIR GAME \
             replays one",
        ),
    ),
    (
        "-recover",
        Ours::NoFlag("an engine that fails is restarted for its next game"),
    ),
    ("-draw", Ours::Flag("--adjudicate decided")),
    ("-resign", Ours::Flag("--adjudicate decided")),
    ("-ratinginterval", Ours::Flag("--report-every 100")),
    ("-srand", Ours::Flag("--seed 7")),
    ("-debug", Ours::Flag("--debug")),
    ("-pgnin", Ours::Flag("--openings openings.txt")),
    ("-config", Ours::Flag("--config tournament.toml")),
];

/// The subcommand of `args`, for a hint's `--help` line (`tournament` when there is none).
fn subcommand(args: &[String]) -> &str {
    args.get(1)
        .map(|a| a.as_str())
        .filter(|a| !a.starts_with('-'))
        .unwrap_or("tournament")
}

/// A hint for a cutechess-cli or fastchess spelling among `args`, if any.
fn foreign_flag(args: &[String]) -> Option<String> {
    let command = subcommand(args);
    args.iter().skip(1).find_map(|a| {
        let flag = a.split('=').next().unwrap_or(a);
        FOREIGN_FLAGS
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(f, ours)| {
                let what = match ours {
                    Ours::Flag(flag) => format!("kalaha takes {flag}"),
                    Ours::NoFlag(why) => format!("kalaha needs no flag for it: {why}"),
                };
                format!(
                    "error: {f} is how cutechess-cli or fastchess write it; {what}. Run \
                     `kalaha {command} --help` for every flag."
                )
            })
    })
}

/// Words a time unit is written as.
const UNITS: &[&str] = &[
    "ms",
    "msec",
    "millisecond",
    "milliseconds",
    "s",
    "sec",
    "secs",
    "second",
    "seconds",
    "m",
    "min",
    "mins",
    "minute",
    "minutes",
    "h",
];

/// The flags that take a time.
const TIME_FLAGS: &[&str] = &[
    "--move-time",
    "--clock",
    "--time-margin",
    "--startup-timeout",
];

/// A hint for a time written as two words (`100 ms`, which would take `ms` for an engine or
/// an argument), or a time where an engine is expected (`kalaha match a b 100ms`): the
/// flag to give it with. Only the commands that run games are looked at (`check` takes an
/// engine's own arguments), and `--` ends the words looked at.
fn time_words(args: &[String]) -> Option<String> {
    if !["match", "tournament", "sprt", "play"].contains(&subcommand(args)) {
        return None;
    }
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.as_str())
        .take_while(|a| *a != "--")
        .collect();
    let is_number = |w: &str| !w.is_empty() && w.parse::<f64>().is_ok_and(f64::is_finite);
    for (i, pair) in words.windows(2).enumerate() {
        let (number, unit) = (pair[0], pair[1]);
        if !(is_number(number) && UNITS.contains(&unit)) {
            continue;
        }
        let before = i.checked_sub(1).map(|k| words[k]);
        let unit = match unit {
            "ms" | "msec" | "millisecond" | "milliseconds" => "ms",
            "s" | "sec" | "secs" | "second" | "seconds" => "s",
            "h" => "h",
            _ => "m",
        };
        return Some(match before.filter(|b| TIME_FLAGS.contains(b)) {
            Some(flag) => format!(
                "error: `{flag} {number} {}`: write the time as one word, its unit attached: \
                 {flag} {number}{unit}",
                pair[1]
            ),
            None => format!(
                "error: `{number} {}` looks like a time, not an engine: give a time per move as \
                 --move-time {number}{unit} (or a game clock as --clock 10s+100ms)",
                pair[1]
            ),
        });
    }
    None
}

/// A hint for a word that looks like a time but follows no flag (`kalaha match a b 100ms`),
/// for a command line clap refused.
fn misplaced_time(args: &[String]) -> Option<String> {
    let words: Vec<&str> = args
        .iter()
        .map(|a| a.as_str())
        .take_while(|a| *a != "--")
        .collect();
    words
        .windows(2)
        .skip(1)
        .filter(|w| !w[0].starts_with('-') && !w[1].starts_with('-'))
        .find_map(|w| time_as_engine(w[1]))
}

/// A hint for a time given where `match` takes its engines (`kalaha match a b 100ms`).
pub(crate) fn time_as_engine(word: &str) -> Option<String> {
    let looks_like_time = crate::record::parse_duration(word).is_ok() || UNITS.contains(&word);
    looks_like_time.then(|| {
        format!(
            "{word:?} looks like a time, not an engine: give a time per move as --move-time \
             100ms (a number with its unit, no space), or a game clock as --clock 10s+100ms"
        )
    })
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    init_logging();
    let args: Vec<String> = std::env::args().collect();
    if let Some(hint) = foreign_flag(&args).or_else(|| time_words(&args)) {
        eprintln!("{hint}");
        return ExitCode::from(exit::USAGE);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with exit 0, usage errors with 2.
            let _ = e.print();
            if e.use_stderr()
                && let Some(hint) = misplaced_time(&args)
            {
                eprintln!("hint: {hint}");
            }
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let result = match cli.command {
        Command::Perft(a) => perft::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Openings(a) => openings::run(a),
        Command::Solve(a) => solve::run(a),
        Command::Engine(a) => engine::run(a),
        Command::Check(a) => check::run(a),
        Command::Match(a) => match_cmd::run(a),
        Command::Tournament(a) => tournament::run(a),
        Command::Sprt(a) => sprt::run(a),
        Command::Ratings(a) => ratings::run(a),
        Command::Show(a) => show::run(a),
        Command::Tables(a) => tables::run(a),
        Command::Play(a) => play::run(a),
    };
    let (mut code, mut message) = match result {
        Ok(code) => (code, None),
        Err(e) => (e.report(), Some(e.message())),
    };
    // A stream that failed already at the end of a command that succeeded (its reader
    // went away after the last game) fails the command, and its last line says so.
    if let Err(failure) = crate::events::stream::check()
        && !matches!(code, exit::USAGE | exit::FAILURE | exit::INTERRUPTED)
    {
        let error = only_the_stream_was_cut(&failure.to_string());
        eprintln!("error: {error}");
        (code, message) = (exit::FAILURE, Some(error));
    }
    // The event stream's last line says how the command ended.
    let said = message.clone().unwrap_or_default();
    match crate::events::stream::finish(code, |kind| exit::reason(kind, code), message) {
        Some(failure) => ExitCode::from(events_failed(code, &said, &failure)),
        None => ExitCode::from(code),
    }
}

/// Says that the event stream of a command that ended with `code` (and printed the error
/// `said`, if it failed) could not be written (`failure`), and returns the command's exit
/// code:
/// - an interrupted run (Ctrl-C, SIGTERM) stays interrupted (130): it said how to resume;
///   so does any command whose stream failed after Ctrl-C (its reader ended with it);
/// - a command that succeeded (a run that ended as it would have: its results are
///   complete) fails (1), saying that only the stream was cut;
/// - a failed command keeps its code, and says the stream's failure unless its error did
///   (it may be what stopped the run).
fn events_failed(code: u8, said: &str, failure: &crate::events::stream::Failure) -> u8 {
    if code == exit::INTERRUPTED || failure.after_interrupt {
        tracing::warn!(
            "{}; the event stream ends without its last lines",
            failure.message
        );
        return code;
    }
    let failure = failure.message.as_str();
    match code {
        exit::USAGE | exit::FAILURE => {
            if !said.contains(failure) {
                eprintln!("error: {failure}");
            }
            code
        }
        _ => {
            eprintln!("error: {}", only_the_stream_was_cut(failure));
            exit::FAILURE
        }
    }
}

/// The error of a run that ended as it would have but whose event stream failed.
fn only_the_stream_was_cut(failure: &str) -> String {
    format!(
        "{failure}; only the event stream was cut: the run ended as it would have, and its \
         results are complete (nothing is left to resume)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_event_stream_fails_only_a_command_that_succeeded() {
        use crate::events::stream::Failure;
        let stalled = Failure {
            message: "the reader stopped reading".into(),
            after_interrupt: false,
        };
        let after_ctrl_c = Failure {
            after_interrupt: true,
            ..stalled.clone()
        };
        // Interrupted stays interrupted; a reader that Ctrl-C ended changes no code.
        assert_eq!(
            events_failed(exit::INTERRUPTED, "", &stalled),
            exit::INTERRUPTED
        );
        assert_eq!(events_failed(exit::OK, "", &after_ctrl_c), exit::OK);
        // A run that ended as it would have (a verdict too) fails for its stream.
        for code in [exit::OK, exit::H0_ACCEPTED, exit::NO_DECISION] {
            assert_eq!(events_failed(code, "", &stalled), exit::FAILURE);
        }
        // A failed command keeps its code.
        assert_eq!(
            events_failed(exit::USAGE, "bad flag", &stalled),
            exit::USAGE
        );
        assert_eq!(events_failed(exit::FAILURE, "", &stalled), exit::FAILURE);
        assert!(only_the_stream_was_cut("x").ends_with("(nothing is left to resume)"));
    }

    #[test]
    fn cutechess_spellings_get_a_hint() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let h = foreign_flag(&args(&["kalaha", "tournament", "-engine", "cmd=x"])).unwrap();
        assert!(h.contains("--engine cmd="), "{h}");
        let h = foreign_flag(&args(&["kalaha", "match", "--rounds", "10"])).unwrap();
        assert!(h.contains("--games"), "{h}");
        let h = foreign_flag(&args(&["kalaha", "match", "-tc=40/60"])).unwrap();
        assert!(h.contains("--clock"), "{h}");
        // Hints say what to run, in words a user can type as they are.
        for (flag, _) in FOREIGN_FLAGS {
            let h = foreign_flag(&args(&["kalaha", "sprt", flag])).unwrap();
            assert!(!h.contains("...") && !h.contains("writes"), "{h}");
            assert!(h.contains("kalaha sprt --help"), "{h}");
        }
        assert!(foreign_flag(&args(&["kalaha", "match", "--games", "4", "-j", "2"])).is_none());
        // Values are not flags.
        assert!(foreign_flag(&args(&["kalaha", "check", "--", "./x", "-x"])).is_none());
    }

    #[test]
    fn a_time_in_two_words_gets_the_flag_to_run() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let h = time_words(&args(&["kalaha", "match", "a", "b", "100", "ms"])).unwrap();
        assert!(h.contains("--move-time 100ms"), "{h}");
        let h = time_words(&args(&["kalaha", "match", "--clock", "10", "s"])).unwrap();
        assert!(h.contains("--clock 10s"), "{h}");
        let h = time_words(&args(&["kalaha", "sprt", "--time-margin", "2", "sec"])).unwrap();
        assert!(h.contains("--time-margin 2s"), "{h}");
        assert!(time_words(&args(&["kalaha", "show", "dir", "5"])).is_none());
        assert!(time_words(&args(&["kalaha", "match", "--", "./x", "1", "s"])).is_none());
        // check's words after the engine are the engine's own arguments.
        assert!(time_words(&args(&["kalaha", "check", "./x", "1", "s"])).is_none());
        assert!(time_as_engine("100ms").is_some() && time_as_engine("ms").is_some());
        assert!(time_as_engine("hard").is_none());
    }
}
