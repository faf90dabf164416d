//! `kalaha show`: a recorded game, move by move, as ASCII boards.

use super::{CliError, CliResult};
use crate::record::{clean_text, format_pits};
use crate::results::find_game;
use crate::rules::Position;
use std::io::Write;
use std::path::PathBuf;

/// Print a game of a results folder move by move.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  kalaha show results/run1 3f9a2c1b7d4e-17\n  kalaha show results/run1 17"
)]
pub struct Args {
    /// The results folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The game id, or its number.
    #[arg(value_name = "GAME")]
    pub game: String,
}

pub fn run(args: Args) -> CliResult {
    if !args.dir.join("games.jsonl").exists() {
        return Err(CliError::input_msg(format!(
            "{} holds no games.jsonl",
            args.dir.display()
        )));
    }
    let Some(g) = find_game(&args.dir, &args.game)? else {
        return Err(CliError::input_msg(format!(
            "no game {:?} in {}",
            args.game,
            args.dir.join("games.jsonl").display()
        )));
    };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "game {} (round {}, pair {}): {} (south) vs {} (north), {}",
        clean_text(&g.game),
        g.round,
        g.pair,
        clean_text(&g.south),
        clean_text(&g.north),
        g.rules
    )?;
    if !g.opening.is_empty() {
        writeln!(out, "opening: {}", format_pits(&g.opening))?;
    }
    let mut pos = Position::start(g.rules);
    writeln!(out, "\n{pos}\n")?;
    for (i, m) in g.moves.iter().enumerate() {
        pos = pos.play(m.pit as i64).map_err(CliError::input)?;
        let mut note = if m.opening {
            "opening".to_string()
        } else {
            format!("{} ms", m.time_ms)
        };
        if let Some(info) = m.info.last() {
            if let Some(d) = info.depth {
                note.push_str(&format!(", depth {d}"));
            }
            if let Some(s) = info.score {
                note.push_str(&format!(", score {s:+}"));
            }
        }
        writeln!(
            out,
            "{}. {} sows pit {} ({note})\n{pos}\n",
            i + 1,
            m.side,
            m.pit
        )?;
    }
    writeln!(
        out,
        "result {} ({}-{}), {}",
        g.result, g.south_score, g.north_score, g.termination
    )?;
    if let Some(l) = g.loser_name() {
        writeln!(out, "lost by {}: {}", clean_text(l), clean_text(&g.detail))?;
    } else if !g.detail.is_empty() {
        writeln!(out, "{}", clean_text(&g.detail))?;
    }
    if let Some(line) = &g.line {
        writeln!(out, "offending line: {}", clean_text(line))?;
    }
    Ok(0)
}
