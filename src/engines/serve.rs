//! The engine side of the protocol (`protocol.md`), shared by every built-in engine: reads
//! the referee's lines, answers them with the help of a [`Player`], and returns on `quit`
//! or at the end of the input.

use super::Player;
use crate::protocol::{FromEngine, HelloReply, PROTOCOL_VERSION, ParseError, ToEngine};
use crate::record::{SearchInfo, TimeLimit};
use crate::rules::{BoardView, Move, Position, Rules};
use serde::Deserialize;
use std::io::{self, BufRead, Write};

/// A `go` read leniently, for when its `time` is missing, empty (`{}`) or unreadable: the
/// engine still answers, as if no time were given (each engine's default thinking time).
#[derive(Deserialize)]
struct LenientGo {
    position: BoardView,
    #[serde(default)]
    legal: Vec<u8>,
    #[serde(default)]
    moves: Vec<Move>,
    #[serde(default)]
    time: Option<serde_json::Value>,
}

impl LenientGo {
    /// The `go` in `line` when only its `time` keeps it from being a well-formed message,
    /// with a note for the referee when a time was given but could not be read.
    fn parse(line: &str) -> Option<(LenientGo, Option<String>)> {
        let go: LenientGo = serde_json::from_str(line).ok()?;
        let note = match &go.time {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Object(o)) if o.is_empty() => None,
            Some(t) => Some(match serde_json::from_value::<TimeLimit>(t.clone()) {
                Err(e) => format!("go: ignored time {t}: {e}; thinking with the default time"),
                Ok(_) => format!("go: ignored time {t}; thinking with the default time"),
            }),
        };
        Some((go, note))
    }
}

fn send(out: &mut impl Write, msg: &FromEngine) -> io::Result<()> {
    let mut line = msg.to_line();
    line.push('\n');
    out.write_all(line.as_bytes())
}

fn log(out: &mut impl Write, level: &str, message: String) -> io::Result<()> {
    send(
        out,
        &FromEngine::Log {
            level: level.to_string(),
            message,
        },
    )
}

/// Runs the protocol loop of one engine until `quit` or the end of `input`.
///
/// Lines that are not messages, or of an unknown type, are answered with a `log` line and
/// otherwise ignored. Only I/O errors end the loop early.
pub fn serve(
    player: &mut dyn Player,
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let mut rules = Rules::default();
    for line in input.lines() {
        let line = line?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let msg = match ToEngine::parse(line) {
            Ok(msg) => msg,
            Err(ParseError::UnknownType(kind)) => {
                log(
                    &mut output,
                    "debug",
                    format!("ignored a message of unknown type {kind:?}"),
                )?;
                output.flush()?;
                continue;
            }
            Err(ParseError::Malformed { kind, .. })
                if kind == "go"
                    && let Some((go, note)) = LenientGo::parse(line) =>
            {
                if let Some(note) = note {
                    log(&mut output, "warn", note)?;
                }
                go_answer(
                    player,
                    rules,
                    &go.position,
                    &go.legal,
                    &go.moves,
                    None,
                    &mut output,
                )?;
                output.flush()?;
                continue;
            }
            Err(e) => {
                log(&mut output, "warn", format!("ignored a line: {e}"))?;
                output.flush()?;
                continue;
            }
        };
        match msg {
            ToEngine::Hello { .. } => send(
                &mut output,
                &FromEngine::Hello(HelloReply {
                    protocol: PROTOCOL_VERSION,
                    name: player.name().to_string(),
                    version: env!("CARGO_PKG_VERSION").to_string(),
                    author: "kalaha".to_string(),
                    options: player.options(),
                }),
            )?,
            ToEngine::Option { name, value } => {
                if let Err(e) = player.set_option(&name, &value) {
                    log(&mut output, "warn", format!("option {name:?}: {e}"))?;
                }
            }
            ToEngine::Ping { id } => send(&mut output, &FromEngine::Pong { id })?,
            // The built-ins read the position of each `go`, so the start is not needed.
            ToEngine::NewGame {
                game,
                rules: r,
                side,
                ..
            } => {
                rules = r;
                player.new_game(&game, r, side);
                for (level, message) in player.take_log() {
                    log(&mut output, level, message)?;
                }
            }
            ToEngine::Go {
                position,
                legal,
                moves,
                time,
            } => go_answer(
                player,
                rules,
                &position,
                &legal,
                &moves,
                Some(time),
                &mut output,
            )?,
            ToEngine::GameOver { .. } => {}
            ToEngine::Quit => {
                output.flush()?;
                return Ok(());
            }
        }
        output.flush()?;
    }
    output.flush()
}

/// Answers a `go`: the player's `info` lines, then its `move` (the first legal pit, with
/// an error `log`, when the position is over or not one of `rules`).
fn go_answer(
    player: &mut dyn Player,
    rules: Rules,
    position: &BoardView,
    legal: &[u8],
    moves: &[Move],
    time: Option<TimeLimit>,
    output: &mut impl Write,
) -> io::Result<()> {
    let pit = match Position::from_view(rules, position) {
        Ok(pos) if !pos.is_over() => {
            let mut io_error = None;
            let mut report = |info: SearchInfo| {
                if io_error.is_none()
                    && let Err(e) = send(output, &FromEngine::Info(info))
                {
                    io_error = Some(e);
                }
            };
            let pit = player.choose_move(&pos, moves, time, &mut report);
            if let Some(e) = io_error {
                return Err(e);
            }
            for (level, message) in player.take_log() {
                log(output, level, message)?;
            }
            pit as i64
        }
        Ok(_) => {
            log(output, "error", "go: the game is over".to_string())?;
            legal.first().map_or(1, |&p| p as i64)
        }
        Err(e) => {
            log(output, "error", format!("go: bad position: {e}"))?;
            legal.first().map_or(1, |&p| p as i64)
        }
    };
    send(output, &FromEngine::Move { pit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{EngineOption, OptionKind};
    use crate::rules::{Move, Side};

    /// Plays the lowest legal pit and reports one info line per move.
    struct Lowest {
        depth: i64,
        games: u32,
    }

    impl Player for Lowest {
        fn name(&self) -> &str {
            "lowest"
        }
        fn options(&self) -> Vec<EngineOption> {
            vec![EngineOption {
                name: "depth".into(),
                kind: OptionKind::Int {
                    default: 1,
                    min: 1,
                    max: 9,
                },
            }]
        }
        fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
            match (name, value.as_i64()) {
                ("depth", Some(d)) if (1..=9).contains(&d) => {
                    self.depth = d;
                    Ok(())
                }
                ("depth", _) => Err(format!("expected an integer from 1 to 9, got {value}")),
                _ => Err(format!("unknown option {name:?}")),
            }
        }
        fn new_game(&mut self, _game: &str, _rules: Rules, _side: Side) {
            self.games += 1;
        }
        fn choose_move(
            &mut self,
            pos: &Position,
            history: &[Move],
            _time: Option<TimeLimit>,
            info: &mut dyn FnMut(SearchInfo),
        ) -> u8 {
            info(SearchInfo {
                depth: Some(self.depth as u32),
                nodes: Some(history.len() as u64),
                ..SearchInfo::default()
            });
            pos.legal_moves().next().unwrap()
        }
    }

    fn run(input: &str) -> (Vec<FromEngine>, Lowest) {
        let mut p = Lowest { depth: 1, games: 0 };
        let mut out = Vec::new();
        serve(&mut p, input.as_bytes(), &mut out).unwrap();
        let msgs = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| FromEngine::parse(l).unwrap())
            .collect();
        (msgs, p)
    }

    #[test]
    fn answers_a_whole_session() {
        let input = concat!(
            r#"{"type":"hello","protocol":1}"#,
            "\n",
            r#"{"type":"option","name":"depth","value":5}"#,
            "\n",
            r#"{"type":"option","name":"depth","value":"deep"}"#,
            "\n",
            r#"{"type":"ping","id":7}"#,
            "\n",
            r#"{"type":"new_game","game":"g","rules":{"pits":2,"seeds":1},"side":"south"}"#,
            "\n",
            r#"{"type":"go","position":{"to_move":"north","south":{"pits":[0,2],"store":0},"north":{"pits":[1,1],"store":0}},"legal":[1,2],"moves":[{"side":"south","pit":1}],"time":{"move_ms":100},"extra":1}"#,
            "\n",
            r#"{"type":"mystery"}"#,
            "\n",
            "not json\n",
            r#"{"type":"game_over","game":"g","result":"win","south":2,"north":2,"termination":"normal"}"#,
            "\n",
            r#"{"type":"quit"}"#,
            "\n",
            r#"{"type":"ping","id":8}"#,
            "\n",
        );
        let (msgs, p) = run(input);
        assert_eq!(p.depth, 5);
        assert_eq!(p.games, 1);
        let kinds: Vec<_> = msgs.iter().map(|m| m.kind()).collect();
        assert_eq!(
            kinds,
            ["hello", "log", "pong", "info", "move", "log", "log"]
        );
        match &msgs[0] {
            FromEngine::Hello(h) => {
                assert_eq!(h.protocol, 1);
                assert_eq!(h.name, "lowest");
                assert_eq!(h.options.len(), 1);
            }
            m => panic!("{m:?}"),
        }
        assert_eq!(msgs[2], FromEngine::Pong { id: 7 });
        assert_eq!(
            msgs[3],
            FromEngine::Info(SearchInfo {
                depth: Some(5),
                nodes: Some(1),
                ..SearchInfo::default()
            })
        );
        assert_eq!(msgs[4], FromEngine::Move { pit: 1 });
    }

    #[test]
    fn returns_at_end_of_input() {
        let (msgs, _) = run("{\"type\":\"ping\",\"id\":1}\n");
        assert_eq!(msgs, [FromEngine::Pong { id: 1 }]);
    }

    const NEW_GAME: &str =
        r#"{"type":"new_game","game":"g","rules":{"pits":2,"seeds":1},"side":"north"}"#;
    const GO: &str = r#"{"type":"go","position":{"to_move":"north","south":{"pits":[0,2],"store":0},"north":{"pits":[1,1],"store":0}},"legal":[1,2],"moves":[{"side":"south","pit":1}]"#;

    #[test]
    fn answers_a_go_without_a_usable_time() {
        for (time, kinds) in [
            ("", &["info", "move"][..]),
            (r#","time":{}"#, &["info", "move"]),
            (r#","time":null"#, &["info", "move"]),
            (r#","time":{"hourglass":3}"#, &["log", "info", "move"]),
            (
                r#","time":{"move_ms":5,"remaining_ms":9}"#,
                &["log", "info", "move"],
            ),
            (r#","time":"soon""#, &["log", "info", "move"]),
        ] {
            let (msgs, _) = run(&format!("{NEW_GAME}\n{GO}{time}}}\n"));
            let got: Vec<_> = msgs.iter().map(|m| m.kind()).collect();
            assert_eq!(got, kinds, "time {time:?}: {msgs:?}");
            assert_eq!(msgs.last(), Some(&FromEngine::Move { pit: 1 }), "{time:?}");
        }
        // A go missing more than its time is still ignored.
        let (msgs, _) = run(&format!(
            "{NEW_GAME}\n{}\n",
            r#"{"type":"go","legal":[1],"moves":[]}"#
        ));
        assert_eq!(msgs.iter().map(|m| m.kind()).collect::<Vec<_>>(), ["log"]);
    }

    #[test]
    fn a_builtin_answers_a_go_without_time_within_its_default() {
        let mut p = crate::engines::builtin("hard").unwrap();
        let mut out = Vec::new();
        let input = format!("{NEW_GAME}\n{GO}}}\n");
        let t = std::time::Instant::now();
        serve(p.as_mut(), input.as_bytes(), &mut out).unwrap();
        assert!(t.elapsed() < crate::engines::DEFAULT_MOVE_TIME * 2);
        let out = String::from_utf8(out).unwrap();
        let last = FromEngine::parse(out.lines().last().unwrap()).unwrap();
        assert!(matches!(last, FromEngine::Move { pit: 1 | 2 }), "{out}");
    }

    /// The moves a built-in sends in one process for the `go` after each `new_game` of
    /// `games` (ids), all from the start of the default rules.
    fn session_moves(engine: &str, games: &[&str]) -> Vec<FromEngine> {
        let mut p = crate::engines::builtin(engine).unwrap();
        let mut input = String::new();
        for game in games {
            input += &format!(
                r#"{{"type":"new_game","game":"{game}","rules":{{"pits":6,"seeds":4}},"side":"south"}}"#
            );
            input += "\n";
            input += r#"{"type":"go","position":{"to_move":"south","south":{"pits":[4,4,4,4,4,4],"store":0},"north":{"pits":[4,4,4,4,4,4],"store":0}},"legal":[1,2,3,4,5,6],"moves":[],"time":{"move_ms":100}}"#;
            input += "\n";
        }
        let mut out = Vec::new();
        serve(p.as_mut(), input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| FromEngine::parse(l).unwrap())
            .filter(|m| m.kind() == "move")
            .collect()
    }

    #[test]
    fn random_engines_play_by_the_game_id_not_by_the_games_before() {
        for engine in ["random", "easy"] {
            let ids: Vec<String> = (0..8).map(|i| format!("round-{i}")).collect();
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            let together = session_moves(engine, &ids);
            let alone: Vec<_> = ids
                .iter()
                .flat_map(|g| session_moves(engine, &[g]))
                .collect();
            assert_eq!(together, alone, "{engine}");
            if engine == "random" {
                // The game id matters: eight games do not all open alike.
                assert!(together.iter().any(|m| *m != together[0]), "{together:?}");
            }
        }
    }
}
