//! The engine side of the protocol (`protocol.md`), shared by every built-in engine: reads
//! the referee's lines, answers them with the help of a [`Player`], and returns on `quit`
//! or at the end of the input.

use super::{Player, SearchInfo};
use crate::protocol::{FromEngine, HelloReply, PROTOCOL_VERSION, ParseError, ToEngine};
use crate::rules::{Position, Rules};
use std::io::{self, BufRead, Write};

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
            ToEngine::NewGame { rules: r, side, .. } => {
                rules = r;
                player.new_game(r, side);
            }
            ToEngine::Go {
                position,
                legal,
                moves,
                time,
            } => {
                let pit = match Position::from_view(rules, &position) {
                    Ok(pos) if !pos.is_over() => {
                        let limits = time.limits();
                        let mut io_error = None;
                        let mut report = |info: SearchInfo| {
                            if io_error.is_none()
                                && let Err(e) = send(&mut output, &FromEngine::Info(info))
                            {
                                io_error = Some(e);
                            }
                        };
                        let pit = player.choose_move(&pos, &moves, &limits, &mut report);
                        if let Some(e) = io_error {
                            return Err(e);
                        }
                        pit as i64
                    }
                    Ok(_) => {
                        log(&mut output, "error", "go: the game is over".to_string())?;
                        legal.first().map_or(1, |&p| p as i64)
                    }
                    Err(e) => {
                        log(&mut output, "error", format!("go: bad position: {e}"))?;
                        legal.first().map_or(1, |&p| p as i64)
                    }
                };
                send(&mut output, &FromEngine::Move { pit })?;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{EngineOption, Limits, OptionKind};
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
                ("depth", _) => Err(format!("expected an integer in 1..=9, got {value}")),
                _ => Err(format!("unknown option {name:?}")),
            }
        }
        fn new_game(&mut self, _rules: Rules, _side: Side) {
            self.games += 1;
        }
        fn choose_move(
            &mut self,
            pos: &Position,
            history: &[Move],
            _limits: &Limits,
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
}
