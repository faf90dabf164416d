use super::*;

/// An in-process engine that plays the lowest legal pit, or misbehaves on a given move.
struct Scripted {
    /// Fail on the n-th `go` (0-based) with this behaviour.
    fail_at: Option<(usize, Behaviour)>,
    gos: usize,
    game_overs: Vec<(String, &'static str, Termination)>,
}

#[derive(Clone)]
enum Behaviour {
    Illegal(i64),
    Fault(Fault),
    Slow(Duration),
}

impl Scripted {
    fn good() -> Scripted {
        Scripted {
            fail_at: None,
            gos: 0,
            game_overs: Vec::new(),
        }
    }
    fn failing(at: usize, b: Behaviour) -> Scripted {
        Scripted {
            fail_at: Some((at, b)),
            ..Scripted::good()
        }
    }
}

impl Contestant for Scripted {
    async fn new_game(&mut self, _game: &str, _rules: Rules, _side: Side) -> Result<(), Fault> {
        Ok(())
    }

    async fn go(
        &mut self,
        pos: &Position,
        _moves: &[Move],
        _time: TimeLimit,
        _deadline: Duration,
    ) -> Result<Reply, Fault> {
        let n = self.gos;
        self.gos += 1;
        let lowest = pos.legal_moves().next().unwrap() as i64;
        let mut reply = Reply {
            pit: lowest,
            line: format!("{{\"type\":\"move\",\"pit\":{lowest}}}"),
            infos: Vec::new(),
            elapsed: Duration::from_millis(1),
        };
        match &self.fail_at {
            Some((at, b)) if *at == n => match b {
                Behaviour::Illegal(p) => {
                    reply.pit = *p;
                    reply.line = format!("{{\"type\":\"move\",\"pit\":{p}}}");
                }
                Behaviour::Fault(f) => return Err(f.clone()),
                Behaviour::Slow(d) => reply.elapsed = *d,
            },
            _ => {}
        }
        Ok(reply)
    }

    async fn game_over(
        &mut self,
        game: &str,
        result: &'static str,
        _south: u16,
        _north: u16,
        termination: Termination,
    ) -> Result<(), Fault> {
        self.game_overs
            .push((game.to_string(), result, termination));
        Ok(())
    }
}

fn setup() -> GameSetup {
    GameSetup {
        id: "t-1".into(),
        rules: Rules::default(),
        opening: Vec::new(),
        time: [TimeControl::MoveTime(Duration::from_millis(100)); 2],
        margin: Duration::from_millis(50),
        adjudicate: false,
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn a_normal_game_follows_the_rules() {
    let (mut s, mut n) = (Scripted::good(), Scripted::good());
    let g = block_on(play_game(&setup(), &mut s, &mut n));
    assert_eq!(g.termination, Termination::Normal);
    assert!(g.final_position.is_over());
    // Replaying the record from the start gives the same final position.
    let mut pos = Position::start(Rules::default());
    for m in &g.moves {
        assert_eq!(m.side, pos.to_move());
        pos = pos.play(m.pit as i64).unwrap();
    }
    assert_eq!(pos, g.final_position);
    assert_eq!(g.south_score + g.north_score, 48);
    assert_eq!(s.game_overs.len(), 1);
    assert_eq!(n.game_overs.len(), 1);
    assert_eq!(g.faulted, [false, false]);
    // Extra turns: south's first move (pit 1 with 4 seeds) does not reach the store, but
    // some move in the game must have been an extra turn for this to be consistent.
    assert!(g.moves.windows(2).any(|w| w[0].side == w[1].side));
}

#[test]
fn an_illegal_move_loses_for_the_offender() {
    let (mut s, mut n) = (
        Scripted::good(),
        Scripted::failing(2, Behaviour::Illegal(9)),
    );
    let g = block_on(play_game(&setup(), &mut s, &mut n));
    assert_eq!(g.termination, Termination::IllegalMove);
    assert_eq!(g.loser, Some(Side::North));
    assert_eq!(g.result, GameResult::SouthWins);
    assert!(g.detail.contains("out of range"), "{}", g.detail);
    assert!(g.line.as_deref().unwrap().contains("\"pit\":9"));
    assert_eq!(g.faulted, [false, true]);
    assert_eq!(s.game_overs[0].1, "win");
    assert!(n.game_overs.is_empty());
}

#[test]
fn faults_and_timeouts_are_recorded_against_the_right_side() {
    let crash = Fault::new(Termination::Crash, "the engine exited with status 3");
    let (mut s, mut n) = (
        Scripted::failing(0, Behaviour::Fault(crash)),
        Scripted::good(),
    );
    let g = block_on(play_game(&setup(), &mut s, &mut n));
    assert_eq!(
        (g.termination, g.loser),
        (Termination::Crash, Some(Side::South))
    );
    assert_eq!(g.result, GameResult::NorthWins);

    let slow = Behaviour::Slow(Duration::from_millis(151));
    let (mut s, mut n) = (Scripted::good(), Scripted::failing(1, slow));
    let g = block_on(play_game(&setup(), &mut s, &mut n));
    assert_eq!(
        (g.termination, g.loser),
        (Termination::Timeout, Some(Side::North))
    );

    // Within the margin is fine.
    let slow = Behaviour::Slow(Duration::from_millis(149));
    let (mut s, mut n) = (Scripted::good(), Scripted::failing(1, slow));
    let g = block_on(play_game(&setup(), &mut s, &mut n));
    assert_eq!(g.termination, Termination::Normal);
}

#[test]
fn a_game_clock_runs_out() {
    let mut st = setup();
    st.time[0] = TimeControl::Clock {
        base: Duration::from_millis(30),
        increment: Duration::ZERO,
    };
    st.margin = Duration::ZERO;
    // Each move of the fake takes 1 ms; a 10 ms move on the third go exhausts nothing yet,
    // but a 40 ms one does.
    let (mut s, mut n) = (
        Scripted::failing(2, Behaviour::Slow(Duration::from_millis(40))),
        Scripted::good(),
    );
    let g = block_on(play_game(&st, &mut s, &mut n));
    assert_eq!(
        (g.termination, g.loser),
        (Termination::Timeout, Some(Side::South))
    );
}

#[test]
fn adjudication_ends_decided_games_early() {
    let mut st = setup();
    st.adjudicate = true;
    let (mut s, mut n) = (Scripted::good(), Scripted::good());
    let g = block_on(play_game(&st, &mut s, &mut n));
    if g.termination == Termination::Adjudicated {
        assert!(decided(&g.final_position));
        assert!(!g.final_position.is_over());
        assert!(g.south_score.max(g.north_score) > 24);
    } else {
        assert_eq!(g.termination, Termination::Normal);
    }
}

#[test]
fn openings_are_played_before_the_engines_move() {
    let mut st = setup();
    st.opening = vec![3, 1];
    let (mut s, mut n) = (Scripted::good(), Scripted::good());
    let g = block_on(play_game(&st, &mut s, &mut n));
    assert_eq!(g.plies(), 2 + g.moves.len());
    // After south's 3 (extra turn) and 1, north moves first.
    assert_eq!(g.moves[0].side, Side::North);
}

#[test]
fn termination_names_are_stable() {
    let names: Vec<_> = Termination::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(
        names,
        [
            "normal",
            "timeout",
            "illegal_move",
            "protocol_error",
            "crash",
            "stall",
            "adjudicated",
            "interrupted"
        ]
    );
    for t in Termination::ALL {
        assert_eq!(t.as_str().parse::<Termination>(), Ok(t));
    }
}
