//! `kalaha play`: a person plays an engine on a web page, or watches two engines play each
//! other; every game is written to a results folder like a match's.

use super::common::{EngineArgs, TournamentRulesArgs};
use super::{CliError, CliResult};
use crate::record::{check_name, parse_duration};
use crate::results::RunKind;
use crate::tournament::TournamentError;
use crate::tournament::config::ConfigFile;
use crate::tournament::events::{Control, Event, View};
use crate::tournament::spec::EngineSpec;
use crate::web::guide::Variant;
use crate::web::matches::{Format, MatchView};
use crate::web::play::{SessionOptions, person_entry, run_session};
use crate::web::{Live, LiveView, Mode, result_text};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Play an engine in a web browser, or watch two engines play each other.
///
/// Starts a small web server on 127.0.0.1 and prints its address. With one engine you play
/// it (without --engine, the built-in medium; a bare name such as `--engine hard` is a
/// built-in engine): your pits are buttons (or keys 1 to 9), the engine replies, and "New game" starts the
/// next game with the other side moving first. With two engines the page shows them playing
/// each other, one game at a time. Every game is written to a results folder like a
/// match's (games.csv, games.jsonl, tournament.toml), so people are rated like engines.
/// Ctrl-C ends the session (a game in progress is not recorded). The page's "Learn the
/// rules" (--learn opens the page on it) is an interactive guide to the rules of the game,
/// and its match picker starts matches of several games (as --match does).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
kalaha play --engine easy           (built-in levels: easy, medium, hard; also random, greedy, perfect)\n  \
kalaha play --engine hard --name ada --clock 5m+2s --open\n  \
kalaha play --engine cmd=./my-engine --pits 4 --seeds 3\n  \
kalaha play --engine hard --engine medium --pace 1s\n  \
kalaha play --learn                 (the page opens on the interactive rules guide)")]
pub struct Args {
    #[command(flatten)]
    pub engines: EngineArgs,
    /// The person's name in the results [default: human].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The port on 127.0.0.1 [default: a free port].
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Open the page in a browser (with xdg-open).
    #[arg(long)]
    pub open: bool,
    /// The results folder [default: results/play-<UTC date-time>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The engines' time per move [default: 1s].
    #[arg(long, value_name = "TIME", conflicts_with = "clock")]
    pub move_time: Option<String>,
    /// A game clock for both sides, the person's too, e.g. 5m+2s (without it the person
    /// has all the time in the world).
    #[arg(long, value_name = "BASE+INC")]
    pub clock: Option<String>,
    /// Tolerance on top of every time limit [default: 50ms].
    #[arg(long, value_name = "TIME")]
    pub time_margin: Option<String>,
    /// A pause before each engine move, so people can follow the game [default: 400ms
    /// against a person, so that the person's sowing is seen before the reply; 500ms when
    /// two engines play].
    #[arg(long, value_name = "TIME")]
    pub pace: Option<String>,
    /// Keep the engines' protocol transcripts in DIR/logs/.
    #[arg(long)]
    pub debug: bool,
    /// Play a match: best-of-N (the most wins of at most N games), first-to-N (wins),
    /// seeds-over-N (the most seeds over N games) or seeds-to-S (the first to S seeds),
    /// the first player alternating. Its result is written to DIR/match.csv.
    #[arg(long = "match", value_name = "FORMAT")]
    pub match_format: Option<String>,
    /// Open the page on the interactive rules guide (a board of three pits a side, every
    /// sowing played by the rules; "Learn the rules" on the page opens it too).
    #[arg(long)]
    pub learn: bool,
    /// Write the session as JSON lines into FILE, as `kalaha match --events` does (see
    /// docs/events.md); `-` is standard output, and what is printed there for people then
    /// goes to standard error.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    #[command(flatten)]
    pub rules: TournamentRulesArgs,
}

/// The engine played when none is given.
const DEFAULT_ENGINE: &str = "medium";

pub(crate) fn run(args: Args) -> CliResult {
    let mut specs = Vec::new();
    for words in &args.engines.0 {
        // A bare word is a built-in engine: `--engine hard`.
        let spec = match words.as_slice() {
            [one] if !one.contains('=') => EngineSpec::builtin(one),
            _ => EngineSpec::parse(words).map_err(CliError::input)?,
        };
        specs.push(spec);
    }
    if specs.is_empty() {
        specs.push(EngineSpec::builtin(DEFAULT_ENGINE));
    }
    if specs.len() > 2 {
        return Err(CliError::input_msg(format!(
            "kalaha play takes one --engine (to play it) or two (to watch them play), not {}",
            specs.len()
        )));
    }
    let person = specs.len() == 1;
    if !person && args.name.is_some() {
        return Err(CliError::input_msg(
            "--name names the person, who does not play when two engines are given",
        ));
    }
    let name = args.name.clone().unwrap_or_else(|| "human".to_string());
    check_name(&name).map_err(|e| CliError::input_msg(format!("--name {name:?}: {e}")))?;
    if person {
        // A stand-in, checked like any engine, then replaced by the person.
        specs.insert(
            0,
            EngineSpec {
                name: Some(name.clone()),
                ..EngineSpec::builtin("first")
            },
        );
    }
    let file = ConfigFile {
        engines: specs,
        rules: args.rules.over(None),
        move_time: match (&args.move_time, &args.clock) {
            (Some(m), _) => Some(m.clone()),
            (None, None) => Some("1s".to_string()),
            (None, Some(_)) => None,
        },
        clock: args.clock.clone(),
        time_margin: args.time_margin.clone(),
        opening_plies: Some(0),
        ..ConfigFile::default()
    };
    let mut config = file.resolve().map_err(super::common::flag_error)?;
    if person {
        let clock = args.clock.is_some().then_some(config.tc);
        config.engines[0] = person_entry(&name, clock, args.name.is_some());
    }
    let pace = match &args.pace {
        Some(p) => parse_duration(p).map_err(|e| CliError::input_msg(format!("--pace: {e}")))?,
        None if person => Duration::from_millis(400),
        None => Duration::from_millis(500),
    };
    // A session without a game leaves nothing behind: the folders it made are removed.
    let made = match &args.out {
        Some(o) => vec![o.clone()]
            .into_iter()
            .filter(|d| !d.exists())
            .collect(),
        None => {
            let parent = crate::results::default_folder("")
                .parent()
                .map(|p| p.to_path_buf())
                .filter(|p| !p.as_os_str().is_empty() && !p.exists());
            parent.into_iter().collect::<Vec<_>>()
        }
    };
    let out = match &args.out {
        Some(o) => o.clone(),
        None => crate::results::claim_default_folder("play-")?,
    };
    let mut made = made;
    if args.out.is_none() {
        made.insert(0, out.clone());
    }
    let format = match &args.match_format {
        Some(f) => Some(
            f.parse::<Format>()
                .map_err(|e| CliError::input_msg(format!("--match: {e}")))?,
        ),
        None => None,
    };
    if let Some(events) = &args.events {
        let given = format!("--events {}", super::shell::shell_path(events));
        crate::events::stream::open(events, RunKind::Play, &given, Some(&out))
            .map_err(CliError::input_msg)?;
    }
    let mode = if person { Mode::Play } else { Mode::Watch };
    // Titled by who plays once the engines have their names.
    let live = Live::new(mode, "kalaha play", Some(out.clone()));
    live.set_guide(Variant::of(&config.rules()), args.learn);
    // A session that could not begin keeps nothing, as one that recorded no game.
    let mut page = live_page(live.clone(), args.port.unwrap_or(0), args.open, "the game")
        .inspect_err(|_| remove_made(&made))?;
    println!(
        "games are written to {}; Ctrl-C ends the session",
        crate::record::shown_path(&out)
    );
    let mut leaderboard = crate::views::LeaderboardView::new(&out, None);
    let mut lines = GameLines;
    // Before the page's view, so the page learns of the match's score with the game.
    let mut matches = MatchView::new(live.clone(), out.clone(), format);
    let mut events = crate::events::EventsView::if_open(&out, RunKind::Play, false, None);
    let mut views: Vec<&mut dyn View> = vec![&mut matches, &mut page, &mut leaderboard, &mut lines];
    if let Some(v) = events.as_mut() {
        views.insert(0, v);
    }
    let options = SessionOptions {
        out: out.clone(),
        debug: args.debug,
        pace,
    };
    let (summary, _tally, _config) = run_session(config, person, &options, live, &mut views)
        .map_err(|e| match e {
            TournamentError::Input(m) => CliError::input_msg(m),
            e => CliError::from(e),
        })?;
    if let Some(failure) = &summary.failed {
        return Err(CliError::from(anyhow::anyhow!("{failure}")));
    }
    if summary.played == 0 {
        remove_made(&made);
        println!("no game was played: no results were kept");
        return Ok(super::exit::OK);
    }
    println!(
        "{} game{} recorded in {}",
        summary.played,
        if summary.played == 1 { "" } else { "s" },
        crate::record::shown_path(&out)
    );
    Ok(super::exit::OK)
}

/// Removes the folders made for a session that kept no game: `made[0]`, the session's
/// folder, with what it holds, then the folders made for it, each only if it is empty
/// (another run may have put a folder there).
fn remove_made(made: &[std::path::PathBuf]) {
    for (i, dir) in made.iter().enumerate() {
        let removed = match i {
            0 => std::fs::remove_dir_all(dir),
            _ => std::fs::remove_dir(dir),
        };
        // A folder not made yet (the session ended before it began) is no failure.
        if let Err(e) = removed
            && i == 0
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("failed to remove {}: {e}", crate::record::shown_path(dir));
        }
    }
}

/// Serves `live` on 127.0.0.1:`port`, prints the address (naming `what` it shows), opens
/// a browser when asked, and returns the page's view of the run.
pub(crate) fn live_page(
    live: Arc<Live>,
    port: u16,
    open: bool,
    what: &str,
) -> Result<LiveView, CliError> {
    let served = crate::web::serve(live.clone(), port).map_err(|e| {
        CliError::input_msg(format!(
            "failed to serve {what} on 127.0.0.1:{port}: {e}; choose another --port, or leave \
             it out for a free one"
        ))
    })?;
    // With its token: the page answers no other address.
    let url = served.url();
    println!("{what} is at {url}");
    if open && let Err(why) = crate::web::open_browser(&url) {
        eprintln!("{why}");
    }
    Ok(LiveView::new(live))
}

/// Prints each finished game on a line.
struct GameLines;

impl View for GameLines {
    fn event(
        &mut self,
        event: &Event<'_>,
        _tally: &crate::stats::Tally,
    ) -> std::io::Result<Control> {
        if let Event::GameFinished { record, .. } = event {
            writeln!(
                std::io::stdout().lock(),
                "game {}: {}",
                record.number,
                result_text(record)
            )?;
        }
        Ok(Control::Continue)
    }
}
