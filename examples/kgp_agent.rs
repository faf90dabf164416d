//! A Kalah Game Protocol agent for tests and measurements, written from the KGP
//! specification: it connects to `KGP_HOST`:`KGP_PORT`, answers `kgp 1 0 0` with its name
//! and `mode freeplay`, and plays the `state`s it is sent. Its first argument chooses how
//! (further arguments are ignored, so tests can mark their processes):
//!
//! - `first`: the lowest legal pit, then `yield`;
//! - `nagle`: plays `first` with Nagle's algorithm left on (as pykgp does), each command
//!   a write of its own;
//! - `greedy`: kalaha's built-in `greedy` player's move, then `yield`;
//! - `anytime`: iterative deepening; a `move` after each depth, until `stop` (never yields
//!   before depth 40);
//! - `late`: plays `first`, and after each `stop` sends more moves (one illegal) and a
//!   `yield` for the stopped state;
//! - `children`: plays `first`, starting a child process for each state that never ends
//!   (as pykgp agents compute in child processes);
//! - `noisy`: plays `first`, writing 256 KiB to stdout and stderr for each state;
//! - `flood`: sends 10 000 moves for each state, then `yield`;
//! - `silent`: never sends a move;
//! - `yield-only`: answers each state with `yield` alone;
//! - `garbage`: answers a state with a line that is not a KGP command;
//! - `bad-move`: answers a state with `move three`;
//! - `illegal`: answers a state with an empty pit;
//! - `future-ref`: answers a state with a move for an id the server never sent;
//! - `disconnect`: plays `first` twice, then closes its connection at the third state and
//!   lives on;
//! - `exit-mid-game`: plays `first` twice, then exits with status 5 at the third state;
//! - `no-pong`: never answers `ping`;
//! - `mode-simple`: asks for mode `simple`;
//! - `refuse`: answers `kgp` with an `error` and no `mode`;
//! - `escape`: answers `kgp` with terminal control sequences (clear the screen, set the
//!   window title);
//! - `never-connect`: never connects;
//! - `exit-at-start`: exits with status 3 before connecting;
//! - `argv`: plays `first`, connecting to the host and port of its 2nd and 3rd arguments
//!   (`{host}` `{port}` in an engine spec) instead of the environment;
//! - `stay`: plays `first`, ignores `goodbye` and SIGTERM (it needs SIGKILL);
//! - `wait-file`: plays `first`, but connects only once the file named by its 3rd
//!   argument exists;
//! - `hijack`: an intruder, not started by kalaha: joins the process group
//!   `KGP_HIJACK_PGID` if given, connects to port `KGP_HIJACK_PORT`, prints `connected`,
//!   and answers `kgp` and plays an empty pit if it is served; exits with status 0 when it
//!   was served a line, 4 when its connection was closed unserved.

use kalaha::kgp::{Arg, Board, Command};
use kalaha::rules::{Position, Rules, Side, Sweep};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The connection, shared by the reading loop and the search threads.
#[derive(Clone)]
struct Out {
    stream: Arc<Mutex<TcpStream>>,
    next_id: Arc<AtomicU64>,
}

impl Out {
    /// Sends a command with the next (odd) id.
    fn send(&self, cmd: Command) {
        let id = self.next_id.fetch_add(2, Ordering::Relaxed);
        self.raw(&cmd.with_id(id).to_line());
    }

    fn raw(&self, line: &str) {
        let mut s = self.stream.lock().expect("stream lock");
        let _ = s.write_all(format!("{line}\r\n").as_bytes());
    }

    fn send_move(&self, state: u64, pit: u8) {
        self.send(
            Command::new("move")
                .with_ref(state)
                .arg(Arg::Int(pit as i64)),
        );
    }

    fn send_yield(&self, state: u64) {
        self.send(Command::new("yield").with_ref(state));
    }
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(1000));
    }
}

/// The position of a KGP board: the mover is south. KGP carries no rule variant; the
/// standard rules are assumed.
fn position(cells: &[u64]) -> Option<Position> {
    let board = Board::from_cells(cells)?;
    let pits = board.south.len() as u32;
    let total: u32 = board
        .south
        .iter()
        .chain(&board.north)
        .map(|&s| s as u32)
        .sum();
    let seeds = (total / (2 * pits)).clamp(1, kalaha::rules::MAX_SEEDS as u32);
    let rules = Rules::new(pits, seeds, false, Sweep::Owner).ok()?;
    let [south, north] = board.rows();
    Position::from_parts(rules, &south, &north, Board::TO_MOVE).ok()
}

/// The value of `pos` for its mover, searched `depth` plies deep (store difference at the
/// horizon); `None` once `stop` is set.
fn negamax(
    pos: &Position,
    depth: u32,
    mut alpha: i32,
    beta: i32,
    stop: &AtomicBool,
) -> Option<i32> {
    let me = pos.to_move();
    if pos.is_over() || depth == 0 {
        return Some(pos.store_margin(me));
    }
    if stop.load(Ordering::Relaxed) {
        return None;
    }
    let mut best = i32::MIN + 1;
    for pit in pos.legal_moves() {
        let next = pos.play(pit as i64).ok()?;
        let v = if next.to_move() == me && !next.is_over() {
            negamax(&next, depth - 1, alpha, beta, stop)?
        } else if next.is_over() {
            next.store_margin(me)
        } else {
            -negamax(&next, depth - 1, -beta, -alpha, stop)?
        };
        best = best.max(v);
        alpha = alpha.max(v);
        if alpha >= beta {
            break;
        }
    }
    Some(best)
}

/// Iterative deepening: a `move` after each completed depth, until stopped.
fn anytime(out: Out, state: u64, pos: Position, stop: Arc<AtomicBool>) {
    for depth in 1..=40 {
        let mut best: Option<(i32, u8)> = None;
        for pit in pos.legal_moves() {
            let Ok(next) = pos.play(pit as i64) else {
                return;
            };
            let v = if next.is_over() {
                Some(next.store_margin(Side::South))
            } else if next.to_move() == Side::South {
                negamax(&next, depth - 1, -1000, 1000, &stop)
            } else {
                negamax(&next, depth - 1, -1000, 1000, &stop).map(|v| -v)
            };
            let Some(v) = v else { return };
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, pit));
            }
        }
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if let Some((_, pit)) = best {
            out.send_move(state, pit);
        }
    }
    out.send_yield(state);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    match mode.as_str() {
        "never-connect" | "child-sleeper" => sleep_forever(),
        "exit-at-start" => {
            eprintln!("kgp_agent: cannot load the opening book");
            std::process::exit(3)
        }
        "stay" => {
            // SAFETY: ignoring a signal has no memory effects.
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
            }
        }
        _ => {}
    }
    if mode == "wait-file" {
        let path = args.get(3).cloned().unwrap_or_default();
        while !std::path::Path::new(&path).exists() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    if mode == "hijack"
        && let Some(group) = std::env::var("KGP_HIJACK_PGID")
            .ok()
            .and_then(|g| g.parse::<i32>().ok())
    {
        // SAFETY: setpgid has no memory effects.
        if unsafe { libc::setpgid(0, group) } != 0 {
            eprintln!("kgp_agent: cannot join process group {group}");
            std::process::exit(5);
        }
    }
    let stream = connect(&mode, &args);
    if mode == "hijack" {
        println!("connected");
        let _ = std::io::stdout().flush();
    }
    if mode != "nagle" {
        let _ = stream.set_nodelay(true);
    }
    let out = Out {
        stream: Arc::new(Mutex::new(stream.try_clone().expect("clone the stream"))),
        next_id: Arc::new(AtomicU64::new(1)),
    };
    let mut agent = Agent {
        greedy: Mutex::new(kalaha::engines::builtin("greedy").expect("greedy exists")),
        stops: HashMap::new(),
        states: 0,
        children: Vec::new(),
        mode,
        args,
        out,
    };
    let mut served = false;
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        served = true;
        if let Ok(cmd) = Command::parse(&line) {
            agent.command(&cmd);
        }
    }
    if agent.mode == "stay" {
        sleep_forever();
    }
    if agent.mode == "hijack" && !served {
        std::process::exit(4);
    }
}

/// The server's address: from the arguments (`argv HOST PORT`) or the environment.
fn connect(mode: &str, args: &[String]) -> TcpStream {
    let hijack = std::env::var("KGP_HIJACK_PORT")
        .ok()
        .filter(|_| mode == "hijack");
    let (host, port) = if let Some(port) = hijack {
        ("127.0.0.1".to_string(), port)
    } else if mode == "argv" {
        (
            args.get(2).cloned().unwrap_or_default(),
            args.get(3).cloned().unwrap_or_default(),
        )
    } else {
        (
            std::env::var("KGP_HOST").unwrap_or_else(|_| "127.0.0.1".into()),
            std::env::var("KGP_PORT").unwrap_or_default(),
        )
    };
    let port: u16 = port.parse().unwrap_or_else(|_| {
        eprintln!("kgp_agent: no port to connect to (KGP_PORT={port:?})");
        std::process::exit(2)
    });
    TcpStream::connect((host.as_str(), port)).unwrap_or_else(|e| {
        eprintln!("kgp_agent: cannot connect to {host}:{port}: {e}");
        std::process::exit(2)
    })
}

/// The agent's state between commands.
struct Agent {
    mode: String,
    args: Vec<String>,
    out: Out,
    greedy: Mutex<Box<dyn kalaha::engines::Player>>,
    /// The stop flags of the states being searched (`anytime`).
    stops: HashMap<u64, Arc<AtomicBool>>,
    states: u64,
    children: Vec<std::process::Child>,
}

impl Agent {
    fn command(&mut self, cmd: &Command) {
        match cmd.name.as_str() {
            "kgp" => self.hello(cmd),
            "ping" if self.mode != "no-pong" => {
                let mut pong = Command::new("pong");
                pong.reference = cmd.id;
                self.out.send(pong);
            }
            "stop" => {
                if let Some(stop) = cmd.reference.and_then(|r| self.stops.remove(&r)) {
                    stop.store(true, Ordering::Relaxed);
                }
                if self.mode == "late"
                    && let Some(r) = cmd.reference
                {
                    self.out.send_move(r, 99);
                    self.out.send_move(r, 1);
                    self.out.send_yield(r);
                }
            }
            "goodbye" if self.mode != "stay" => std::process::exit(0),
            "state" => self.state(cmd),
            _ => {}
        }
    }

    /// `kgp`: the hints and the mode (or a refusal).
    fn hello(&self, cmd: &Command) {
        if self.mode == "escape" {
            self.out.raw("\x1b[2J\x1b]0;pwned\x07");
            return;
        }
        if self.mode == "refuse" {
            self.out
                .send(Command::new("error").arg(Arg::string("protocol not supported")));
            return;
        }
        if cmd.args.first() != Some(&Arg::Int(1)) {
            self.out
                .send(Command::new("error").arg(Arg::string("only kgp 1 is spoken")));
            std::process::exit(1);
        }
        self.out.send(
            Command::new("set")
                .arg(Arg::string("info:name"))
                .arg(Arg::string(format!("kgp-{}", self.mode))),
        );
        self.out.send(
            Command::new("set")
                .arg(Arg::string("info:authors"))
                .arg(Arg::string("the kalaha tests")),
        );
        let activity = if self.mode == "mode-simple" {
            "simple"
        } else {
            "freeplay"
        };
        self.out
            .send(Command::new("mode").arg(Arg::string(activity)));
    }

    /// `state`: the move (or misbehaviour) of the mode.
    fn state(&mut self, cmd: &Command) {
        self.states += 1;
        let Some(id) = cmd.id else { return };
        let Some(pos) = cmd.args.first().and_then(|a| match a {
            Arg::Board(cells) => position(cells),
            _ => None,
        }) else {
            self.out.send(
                Command::new("error")
                    .with_ref(id)
                    .arg(Arg::string("cannot read the board")),
            );
            return;
        };
        let Some(first) = pos.legal_moves().next() else {
            return;
        };
        match self.mode.as_str() {
            "silent" => {}
            "yield-only" => self.out.send_yield(id),
            "garbage" => self.out.raw(r#"{"type":"move","pit":3}"#),
            "bad-move" => self.out.raw(&format!("7@{id} move three")),
            "future-ref" => self.out.send_move(id + 1000, first),
            "illegal" | "hijack" => {
                let empty = (1..=pos.rules().pits() as u8)
                    .find(|&p| pos.pit(Side::South, p as usize) == 0)
                    .unwrap_or(0);
                self.out.send_move(id, empty);
                self.out.send_yield(id);
            }
            "disconnect" | "exit-mid-game" if self.states >= 3 => {
                eprintln!("kgp_agent: giving up at state {}", self.states);
                if self.mode == "exit-mid-game" {
                    std::process::exit(5);
                }
                let s = self.out.stream.lock().expect("stream lock");
                let _ = s.shutdown(std::net::Shutdown::Both);
                drop(s);
                sleep_forever();
            }
            "flood" => {
                for _ in 0..10_000 {
                    self.out.send_move(id, first);
                }
                self.out.send_yield(id);
            }
            "greedy" => {
                let pit = self.greedy.lock().expect("player lock").choose_move(
                    &pos,
                    &[],
                    None,
                    &mut |_| {},
                );
                self.out.send_move(id, pit);
                self.out.send_yield(id);
            }
            "anytime" => {
                let stop = Arc::new(AtomicBool::new(false));
                self.stops.insert(id, stop.clone());
                let out = self.out.clone();
                std::thread::spawn(move || anytime(out, id, pos, stop));
            }
            _ => {
                if self.mode == "children" {
                    let exe = std::env::current_exe().expect("own path");
                    if let Ok(child) = std::process::Command::new(exe)
                        .arg("child-sleeper")
                        .args(self.args.iter().skip(2))
                        .spawn()
                    {
                        self.children.push(child);
                    }
                }
                if self.mode == "noisy" {
                    let noise = "x".repeat(1023);
                    let mut o = std::io::stdout().lock();
                    let mut e = std::io::stderr().lock();
                    for _ in 0..256 {
                        let _ = writeln!(o, "{noise}");
                        let _ = writeln!(e, "{noise}");
                    }
                }
                self.out.send_move(id, first);
                self.out.send_yield(id);
            }
        }
    }
}
