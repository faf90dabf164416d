//! `kalaha show`: a recorded game, move by move, as ASCII boards; with `--serve`, the
//! whole results folder as a web page.

use super::{CliError, CliResult};
use crate::record::{clean_text, format_pits};
use crate::results::{Files, names_game, read_jsonl};
use std::io::Write;
use std::path::PathBuf;

/// Print a game of a results folder move by move, or serve the folder as a web page.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  kalaha show results/run1 3f9a2c1b7d4e-17\n  kalaha show results/run1 17\n  \
kalaha show --serve results/run1 --open"
)]
pub struct Args {
    /// The results folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The game id, or its number (without one, the games of the folder are listed).
    #[arg(value_name = "GAME", conflicts_with = "serve")]
    pub game: Option<String>,
    /// Serve the folder as a web page on 127.0.0.1 (standings, every game replayable move
    /// by move; games added to the folder by a running tournament appear too) until
    /// Ctrl-C.
    #[arg(long)]
    pub serve: bool,
    /// The port of the page [default: a free port].
    #[arg(long, value_name = "PORT", requires = "serve")]
    pub port: Option<u16>,
    /// Open the page in a browser (with xdg-open).
    #[arg(long, requires = "serve")]
    pub open: bool,
}

pub(crate) fn run(args: Args) -> CliResult {
    super::common::require_results_file(
        &args.dir,
        Files::games_jsonl,
        "give the folder a tournament, match or sprt wrote its results to",
    )?;
    if args.serve {
        return serve(&args);
    }
    let Some(game) = args.game.as_deref() else {
        return list(&args);
    };
    // One reading finds the game and, if it is not there, what the folder holds instead,
    // so that the next try can name a game of it.
    let path = crate::results::Files::of(&args.dir).games_jsonl();
    let (mut found, mut numbers) = (None, std::collections::BTreeMap::new());
    let unreadable = read_jsonl(&path, |rec, _| {
        numbers
            .entry(rec.number)
            .or_insert_with(|| clean_text(&rec.game).to_string());
        if found.is_none() && names_game(&rec, game) {
            found = Some(rec);
        }
    })
    .map_err(CliError::reading)?
    .unreadable;
    let Some(g) = found else {
        let holds = match (numbers.first_key_value(), numbers.last_key_value()) {
            (Some((&n1, id1)), Some((&n2, id2))) => {
                let count = numbers.len() as u64;
                let which = if n2 - n1 + 1 == count {
                    format!("numbered {n1} to {n2}")
                } else if count <= 8 {
                    let list: Vec<String> = numbers.keys().map(u64::to_string).collect();
                    format!("numbered {}", list.join(", "))
                } else {
                    format!("numbered from {n1} to {n2} with gaps")
                };
                format!(
                    ": it holds {}, {which} (ids {id1} to {id2}); give an id or a number, \
                     e.g. `kalaha show {} {n1}`, or browse them with --serve",
                    crate::record::counted(count, "game"),
                    super::shell::shell_path(&args.dir)
                )
            }
            _ => ": it holds no game yet".to_string(),
        };
        return Err(CliError::input_msg(format!(
            "no game \"{}\" in {}{holds}{}",
            clean_text(game),
            crate::record::shown_path(&path),
            if unreadable > 0 {
                format!(
                    " ({unreadable} of its lines are not game records: the file was edited \
                     or damaged, and the game may be one of them)"
                )
            } else {
                String::new()
            }
        )));
    };
    let positions = g.replay().map_err(|e| {
        CliError::input_msg(format!(
            "game {} of {} does not replay under its rules: {e}; the file was edited or \
             damaged",
            clean_text(&g.game),
            crate::record::shown_path(&crate::results::Files::of(&args.dir).games_jsonl())
        ))
    })?;
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
    match (&g.start, g.opening.is_empty()) {
        (None, true) => {}
        (None, false) => writeln!(out, "opening: {}", format_pits(&g.opening))?,
        (Some(board), true) => writeln!(out, "start: {board}")?,
        (Some(board), false) => writeln!(
            out,
            "start: {board}, then opening: {}",
            format_pits(&g.opening)
        )?,
    }
    writeln!(out, "\n{}\n", positions[0])?;
    for (i, (m, pos)) in g.moves.iter().zip(&positions[1..]).enumerate() {
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
        writeln!(out, "{} lost: {}", clean_text(l), clean_text(&g.detail))?;
    } else if !g.detail.is_empty() {
        writeln!(out, "{}", clean_text(&g.detail))?;
    }
    if let Some(line) = &g.line {
        writeln!(out, "offending line: {}", clean_text(line))?;
    }
    Ok(super::exit::OK)
}

/// Without a game: one line per game of the folder, by number, with what names it for
/// `kalaha show DIR GAME`.
fn list(args: &Args) -> CliResult {
    let path = crate::results::Files::of(&args.dir).games_jsonl();
    let mut rows = std::collections::BTreeMap::new();
    let unreadable = read_jsonl(&path, |rec, _| {
        rows.entry(rec.number).or_insert_with(|| {
            [
                rec.number.to_string(),
                clean_text(&rec.game).to_string(),
                clean_text(&rec.south).to_string(),
                clean_text(&rec.north).to_string(),
                format!("{} {}-{}", rec.result, rec.south_score, rec.north_score),
                rec.termination.to_string(),
                rec.moves.len().to_string(),
            ]
        });
    })
    .map_err(CliError::reading)?
    .unreadable;
    let mut out = std::io::stdout().lock();
    if rows.is_empty() && unreadable > 0 {
        return Err(CliError::input_msg(format!(
            "{} holds no game that can be read: {} cannot be read as a game's record",
            crate::record::shown_path(&path),
            crate::record::counted(unreadable as u64, "line")
        )));
    }
    if rows.is_empty() {
        writeln!(
            out,
            "{} holds no game yet",
            crate::record::shown_path(&path)
        )?;
        return Ok(super::exit::OK);
    }
    let header = ["#", "game", "south", "north", "result", "end", "sowings"];
    let mut widths = header.map(str::len);
    for row in rows.values() {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 7]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i == 0 || i == 6 {
                l.push_str(&format!("{cell:>w$}  "));
            } else {
                l.push_str(&format!("{cell:<w$}  "));
            }
        }
        l.trim_end().to_string()
    };
    writeln!(out, "{}", line(header))?;
    for row in rows.values() {
        writeln!(out, "{}", line(row.each_ref().map(String::as_str)))?;
    }
    let first = rows.keys().next().copied().unwrap_or(1);
    writeln!(
        out,
        "{}: `kalaha show {} {first}` replays one (by number or id), --serve browses them",
        crate::record::counted(rows.len() as u64, "game"),
        super::shell::shell_path(&args.dir)
    )?;
    if unreadable > 0 {
        writeln!(
            out,
            "{unreadable} lines of {} are not game records (the file was edited or damaged)",
            crate::record::shown_path(&path)
        )?;
    }
    Ok(super::exit::OK)
}

/// `--serve`: the folder's page, until Ctrl-C.
fn serve(args: &Args) -> CliResult {
    use crate::web::{Live, Mode, folder_title, follow_results};
    let live = Live::new(
        Mode::Results,
        folder_title(&args.dir),
        Some(args.dir.clone()),
    );
    follow_results(live.clone(), args.dir.clone()).map_err(|e| {
        CliError::input_msg(format!(
            "failed to read {}: {e}",
            crate::record::shown_path(&crate::results::Files::of(&args.dir).games_jsonl())
        ))
    })?;
    super::play::live_page(live, args.port.unwrap_or(0), args.open, "the results page")?;
    println!("Ctrl-C stops serving");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(tokio::signal::ctrl_c())?;
    Ok(super::exit::OK)
}
