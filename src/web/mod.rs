//! The web page of kalaha: people play engines, and watch games and tournaments, in a
//! browser. A small HTTP server on the loopback interface ([`http`]) serves one
//! self-contained page and the [`Live`] state behind it: the boards of the games being
//! played, updated with each sowing the referee plays ([`crate::referee::GameObserver`]),
//! the recent games, replayable move by move ([`frames`]), and the standings.
//!
//! Three commands serve it: `kalaha play` (a person against an engine, or two engines, one
//! game at a time: [`play`]), `kalaha tournament --live` (a run as it goes: [`LiveView`])
//! and `kalaha show --serve DIR` (a results folder, followed as it grows: [`follow_results`]).

pub(crate) mod access;
pub(crate) mod frames;
pub(crate) mod guide;
pub(crate) mod http;
mod live;
pub(crate) mod matches;
pub(crate) mod play;
pub(crate) mod request;

pub(crate) use http::serve;
pub(crate) use live::{Live, LiveView, Mode, RECENT, result_text};

use crate::record::GameRecord;
use crate::results::{RunKind, read_jsonl_from};
use crate::stats::Tally;
use std::collections::{HashSet, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How often `kalaha show --serve` looks for new games in the folder.
const FOLLOW_EVERY: Duration = Duration::from_secs(2);

/// Reads the games of the results folder `dir` into `live`, then keeps reading the games
/// added to it (a tournament still running) on a thread of its own. Fails when
/// `games.jsonl` cannot be read at first.
pub(crate) fn follow_results(live: Arc<Live>, dir: PathBuf) -> io::Result<()> {
    let mut reader = JsonlFollower {
        path: crate::results::Files::of(&dir).games_jsonl(),
        offset: 0,
        tally: Tally::new(),
        seen: HashSet::new(),
    };
    reader.read_into(&live)?;
    std::thread::Builder::new()
        .name("kalaha-follow".into())
        .spawn(move || {
            loop {
                std::thread::sleep(FOLLOW_EVERY);
                if let Err(e) = reader.read_into(&live) {
                    tracing::warn!("failed to read {}: {e}", reader.path.display());
                }
            }
        })?;
    Ok(())
}

/// Reads the complete lines added to a `games.jsonl` since the last read.
struct JsonlFollower {
    path: PathBuf,
    offset: u64,
    tally: Tally,
    /// The games read, so a game written twice counts once.
    seen: HashSet<String>,
}

impl JsonlFollower {
    fn read_into(&mut self, live: &Live) -> io::Result<()> {
        let len = std::fs::metadata(&self.path)?.len();
        if len < self.offset {
            // The file was replaced: read it again.
            self.offset = 0;
            self.tally = Tally::new();
            self.seen.clear();
        }
        if len == self.offset {
            return Ok(());
        }
        let mut count = 0u64;
        let mut last: VecDeque<GameRecord> = VecDeque::new();
        let mut unplayable = 0u64;
        let (_, end) = read_jsonl_from(&self.path, self.offset, |record, _| {
            if !self.seen.insert(record.game.clone()) {
                return;
            }
            self.tally.add(&record.row());
            count += 1;
            if record.replay().is_err() {
                // Counted, but not offered for a replay that the rules refuse.
                unplayable += 1;
                return;
            }
            last.push_back(record);
            if last.len() > RECENT {
                last.pop_front();
            }
        })?;
        self.offset = end;
        if unplayable > 0 {
            tracing::warn!(
                "{unplayable} games of {} do not replay under their rules (the file was edited or damaged): they are not shown",
                self.path.display()
            );
        }
        if count > 0 {
            live.add_recorded(count, last.into(), &self.tally);
        }
        Ok(())
    }
}

/// Opens `url` in the desktop's browser with `xdg-open`; the error says what to do
/// instead.
pub(crate) fn open_browser(url: &str) -> Result<(), String> {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("xdg-open").is_file()))
        .unwrap_or(false);
    if !found {
        return Err(format!(
            "xdg-open was not found, so no browser was opened: open {url} yourself"
        ));
    }
    let child = std::process::Command::new("xdg-open")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match child {
        Ok(mut c) => {
            // Reaped in the background: xdg-open returns once the browser is asked.
            std::thread::spawn(move || c.wait());
            Ok(())
        }
        Err(e) => Err(format!("failed to run xdg-open ({e}): open {url} yourself")),
    }
}

/// The page's title for a results folder: the run's title (`--title`), as on its
/// leaderboard, else the folder's name.
pub(crate) fn folder_title(dir: &Path) -> String {
    if let Some(title) = crate::report::read_settings(dir).and_then(|s| s.title) {
        return format!("kalaha: {title}");
    }
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    format!("kalaha: {name}")
}

/// The page's title for a run of `kind` between the engines `names`: the kind of run and
/// who plays, "kalaha: Match hard against medium", "kalaha: SPRT new against base"; a
/// tournament (or a run of other than two engines) says how many engines play, and where
/// (the run's `title`, `--title`, else its results `folder`); a match or a test names its
/// `title` alone, when it has one. A play session is titled by its two players alone,
/// "kalaha: human against hard". The names come from engines: each
/// is shown cleaned of what a page or a terminal would misread, and a name that looks like
/// another one has its characters beyond ASCII escaped (`h\u{430}rd` beside `hard`), as
/// on the leaderboards.
pub(crate) fn run_title(
    kind: RunKind,
    names: &[String],
    title: Option<&str>,
    folder: Option<&Path>,
) -> String {
    let alike = crate::record::look_alike_groups(names.iter().map(String::as_str));
    let shown = |name: &str| {
        if !name.is_ascii() && alike.iter().flatten().any(|n| *n == name) {
            crate::record::escaped(name)
        } else {
            crate::record::clean_text(name).into_owned()
        }
    };
    let title = title.map(|t| crate::record::clean_text(t).into_owned());
    let (what, place) = match (kind, names) {
        (RunKind::Play, [a, b, ..]) => (format!("{} against {}", shown(a), shown(b)), None),
        (RunKind::Match | RunKind::Sprt, [a, b]) => (
            format!("{} {} against {}", kind.title(), shown(a), shown(b)),
            title,
        ),
        _ => (
            format!(
                "{} of {}",
                kind.title(),
                crate::record::counted(names.len() as u64, "engine")
            ),
            title.or_else(|| folder.map(crate::record::shown_path)),
        ),
    };
    match place {
        None => format!("kalaha: {what}"),
        Some(place) => format!("kalaha: {what} ({place})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_titled_by_its_kind_and_who_plays() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let four = names(&["a", "b", "c", "d"]);
        assert_eq!(
            run_title(
                RunKind::Tournament,
                &four,
                None,
                Some(Path::new("results/run"))
            ),
            "kalaha: Tournament of 4 engines (results/run)"
        );
        assert_eq!(
            run_title(
                RunKind::Tournament,
                &four,
                Some("Spring cup"),
                Some(Path::new("r"))
            ),
            "kalaha: Tournament of 4 engines (Spring cup)"
        );
        let two = names(&["hard", "medium"]);
        assert_eq!(
            run_title(RunKind::Match, &two, None, Some(Path::new("r"))),
            "kalaha: Match hard against medium"
        );
        assert_eq!(
            run_title(
                RunKind::Sprt,
                &names(&["new", "base"]),
                None,
                Some(Path::new("r"))
            ),
            "kalaha: SPRT new against base"
        );
        assert_eq!(
            run_title(RunKind::Match, &two, Some("Club night"), None),
            "kalaha: Match hard against medium (Club night)"
        );
        assert_eq!(
            run_title(
                RunKind::Play,
                &names(&["human", "hard"]),
                Some("ignored"),
                None
            ),
            "kalaha: human against hard"
        );
        // A match of three engines says how many play.
        assert_eq!(
            run_title(RunKind::Match, &names(&["a", "b", "c"]), None, None),
            "kalaha: Match of 3 engines"
        );
        // Untrusted names: a look-alike is escaped, a control character is written as an
        // escape, and a name that looks like no other keeps its letters.
        assert_eq!(
            run_title(RunKind::Sprt, &names(&["h\u{430}rd", "hard"]), None, None),
            "kalaha: SPRT h\\u{430}rd against hard"
        );
        let title = run_title(
            RunKind::Match,
            &names(&["a\u{1b}[2Jb", "d\u{e9}j\u{e0}"]),
            None,
            None,
        );
        assert!(!title.contains('\u{1b}'), "{title}");
        assert!(title.ends_with(" against d\u{e9}j\u{e0}"), "{title}");
    }

    #[test]
    fn a_folder_is_titled_by_its_run_else_by_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("spring");
        std::fs::create_dir(&run).unwrap();
        assert_eq!(folder_title(&run), "kalaha: spring");
        std::fs::write(
            run.join("tournament.toml"),
            "id = \"cup7\"\ntitle = \"Spring cup\"\n",
        )
        .unwrap();
        assert_eq!(folder_title(&run), "kalaha: Spring cup");
    }

    #[test]
    fn a_growing_results_file_is_followed_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::results::Files::of(dir.path()).games_jsonl();
        let line = |n: u64| {
            let mut game = crate::record::played_game();
            game.game = format!("t-{n}");
            game.number = n;
            (game.south, game.north) = ("a".into(), "b".into());
            let mut s = serde_json::to_string(&game).unwrap();
            s.push('\n');
            s
        };
        std::fs::write(&path, format!("{}{}not json\n", line(1), line(2))).unwrap();
        let live = Live::new(Mode::Results, "t", Some(dir.path().to_path_buf()));
        let mut f = JsonlFollower {
            path: path.clone(),
            offset: 0,
            tally: Tally::new(),
            seen: HashSet::new(),
        };
        f.read_into(&live).unwrap();
        let v: serde_json::Value = serde_json::from_str(&live.snapshot()).unwrap();
        assert_eq!(v["finished"], 2);
        assert_eq!(v["standings"].as_array().unwrap().len(), 2);
        // A torn last line waits for its end.
        let third = line(3);
        let (head, tail) = third.split_at(20);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(head);
        std::fs::write(&path, &text).unwrap();
        f.read_into(&live).unwrap();
        let v: serde_json::Value = serde_json::from_str(&live.snapshot()).unwrap();
        assert_eq!(v["finished"], 2);
        text.push_str(tail);
        std::fs::write(&path, &text).unwrap();
        f.read_into(&live).unwrap();
        let v: serde_json::Value = serde_json::from_str(&live.snapshot()).unwrap();
        assert_eq!(v["finished"], 3);
        assert_eq!(v["recent"][0]["game"], "t-3");
        // A game written twice counts once; an edited game that does not replay counts in
        // the standings but is not offered for a replay.
        let mut edited: serde_json::Value = serde_json::from_str(&line(4)).unwrap();
        edited["north_score"] = serde_json::json!(edited["north_score"].as_u64().unwrap() - 1);
        text.push_str(&line(2));
        text.push_str(&format!("{edited}\n"));
        std::fs::write(&path, &text).unwrap();
        f.read_into(&live).unwrap();
        let v: serde_json::Value = serde_json::from_str(&live.snapshot()).unwrap();
        assert_eq!(v["finished"], 4);
        assert_eq!(v["recent"][0]["game"], "t-3");
    }
}
