use super::*;
use crate::engines::{InProcess, Misbehaviour};
use crate::record::{FaultKind, GameResult, SideResult};
use crate::rules::{Position, Rules, Side};

fn first() -> InProcess {
    InProcess::builtin("first").unwrap()
}

fn setup() -> GameSetup {
    GameSetup {
        id: "t-1".into(),
        number: 1,
        round: 1,
        pair: 1,
        names: ["s".into(), "n".into()],
        rules: Rules::default(),
        opening: Opening::default(),
        time: [TimeControl::MoveTime(Duration::from_millis(100)); 2],
        margin: Duration::from_millis(50),
        adjudication: Adjudication::Off,
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn play(st: &GameSetup, s: &mut InProcess, n: &mut InProcess) -> Played {
    block_on(play_game(st, s, n))
}

#[test]
fn a_normal_game_follows_the_rules() {
    let (mut s, mut n) = (first(), first());
    let p = play(&setup(), &mut s, &mut n);
    let g = &p.record;
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
    assert_eq!((g.south.as_str(), g.north.as_str()), ("s", "n"));
    assert_eq!(s.game_overs.len(), 1);
    assert_eq!(n.game_overs.len(), 1);
    assert_eq!(s.game_overs[0].1, g.result.for_side(Side::South));
    assert_eq!(p.faulted, [false, false]);
    assert!(g.moves.windows(2).any(|w| w[0].side == w[1].side));
}

#[test]
fn an_illegal_move_loses_for_the_offender() {
    let (mut s, mut n) = (first(), first().misbehave_at(2, Misbehaviour::Illegal(9)));
    let p = play(&setup(), &mut s, &mut n);
    let g = &p.record;
    assert_eq!(g.termination, Termination::Fault(FaultKind::IllegalMove));
    assert_eq!(g.loser, Some(Side::North));
    assert_eq!(g.result, GameResult::SouthWins);
    assert!(g.detail.contains("out of range"), "{}", g.detail);
    assert!(g.line.as_deref().unwrap().contains("\"pit\":9"));
    assert_eq!(p.faulted, [false, true]);
    assert_eq!(s.game_overs[0].1, SideResult::Win);
    assert!(n.game_overs.is_empty());
}

#[test]
fn faults_and_timeouts_are_recorded_against_the_right_side() {
    let crash = Fault::new(FaultKind::Crash, "the engine exited with status 3");
    let (mut s, mut n) = (first().misbehave_at(0, Misbehaviour::Fail(crash)), first());
    let g = play(&setup(), &mut s, &mut n).record;
    assert_eq!(
        (g.termination, g.loser),
        (Termination::Fault(FaultKind::Crash), Some(Side::South))
    );
    assert_eq!(g.result, GameResult::NorthWins);

    let slow = Misbehaviour::Delay(Duration::from_millis(200));
    let (mut s, mut n) = (first(), first().misbehave_at(1, slow));
    let g = play(&setup(), &mut s, &mut n).record;
    assert_eq!(
        (g.termination, g.loser),
        (Termination::Fault(FaultKind::Timeout), Some(Side::North))
    );

    // Within the margin is fine.
    let slow = Misbehaviour::Delay(Duration::from_millis(110));
    let (mut s, mut n) = (first(), first().misbehave_at(1, slow));
    let g = play(&setup(), &mut s, &mut n).record;
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
    let slow = Misbehaviour::Delay(Duration::from_millis(40));
    let (mut s, mut n) = (first().misbehave_at(2, slow), first());
    let g = play(&st, &mut s, &mut n).record;
    assert_eq!(
        (g.termination, g.loser),
        (Termination::Fault(FaultKind::Timeout), Some(Side::South))
    );
    assert!(g.detail.contains("clock ran out"), "{}", g.detail);
}

#[test]
fn adjudication_ends_decided_games_early() {
    let mut st = setup();
    st.adjudication = Adjudication::Decided;
    let mut ended_early = 0;
    for opening in [vec![], vec![1], vec![2, 4], vec![6, 1]] {
        st.opening = Opening::line(opening);
        let mut greedy = InProcess::builtin("greedy").unwrap();
        let g = play(&st, &mut greedy, &mut first()).record;
        if g.termination == Termination::Adjudicated {
            ended_early += 1;
            assert!(decided(&g.final_position));
            assert!(!g.final_position.is_over());
            assert!(g.south_score.max(g.north_score) > 24);
            assert_eq!(
                g.result.winner(),
                Some(if g.south_score > g.north_score {
                    Side::South
                } else {
                    Side::North
                })
            );
        } else {
            assert_eq!(g.termination, Termination::Normal);
        }
    }
    assert!(ended_early > 0);
}

#[test]
fn openings_are_played_before_the_engines_move() {
    let mut st = setup();
    st.opening = Opening::line(vec![3, 1]);
    let g = play(&st, &mut first(), &mut first()).record;
    assert!(g.moves[0].opening && g.moves[1].opening && !g.moves[2].opening);
    assert_eq!(g.engine_moves().count() + 2, g.plies());
    // After south's 3 (extra turn) and 1, north moves first.
    assert_eq!(g.moves[2].side, Side::North);
}

#[test]
fn a_forfeit_is_recorded_before_any_move() {
    let mut st = setup();
    st.opening = Opening::line(vec![3]);
    let p = forfeit(
        &st,
        Side::North,
        Fault::new(FaultKind::Stall, "no hello within 10s"),
    );
    assert_eq!(p.record.termination, Termination::Fault(FaultKind::Stall));
    assert_eq!(p.record.result, GameResult::SouthWins);
    assert!(p.record.detail.starts_with("failed to start"));
    assert_eq!(p.record.plies(), 1);
    assert_eq!(p.faulted, [false, true]);
}

#[test]
fn exact_adjudication_records_the_value_under_perfect_play_as_the_stores() {
    let mut st = setup();
    st.rules = Rules::new(3, 3, false, crate::rules::Sweep::Owner).unwrap();
    st.adjudication = Adjudication::Exact;
    let mut memo = std::collections::HashMap::new();
    for opening in [vec![], vec![1], vec![2, 3]] {
        st.opening = Opening::line(opening);
        let g = play(&st, &mut first(), &mut first()).record;
        assert_eq!(g.termination, Termination::Adjudicated, "{g:?}");
        assert!(!g.final_position.is_over());
        // The stores say the exact value of the position where the game stopped, checked
        // by a minimax that shares nothing with the solver.
        let pos = &g.final_position;
        let v = crate::analysis::tests::minimax(pos, &mut memo);
        let south = if pos.to_move() == Side::South { v } else { -v };
        assert_eq!(
            g.south_score as i32 - g.north_score as i32,
            south,
            "{}",
            g.detail
        );
        assert_eq!(g.south_score as u32 + g.north_score as u32, 18);
        let winner = match south.signum() {
            1 => Some(Side::South),
            -1 => Some(Side::North),
            _ => None,
        };
        assert_eq!(g.result.winner(), winner);
        assert!(g.detail.contains("exact value"), "{}", g.detail);
    }
}

#[test]
fn exact_adjudication_waits_until_each_engine_has_moved() {
    let mut st = setup();
    st.rules = Rules::new(3, 3, false, crate::rules::Sweep::Owner).unwrap();
    st.adjudication = Adjudication::Exact;
    // Openings long enough for the solver to settle the game before any engine moves.
    for opening in [vec![1, 2], vec![2, 3, 1], vec![3, 1, 2, 3]] {
        st.opening = Opening::line(opening.clone());
        let g = play(&st, &mut first(), &mut first()).record;
        for side in [Side::South, Side::North] {
            let own = g
                .moves
                .iter()
                .filter(|m| !m.opening && m.side == side)
                .count();
            assert!(
                own >= 1 || g.final_position.is_over(),
                "opening {opening:?}: {side} never moved before the game ended: {g:?}"
            );
        }
    }
}

/// `first`, which gives the game up after `after` sowings of its own: when asked for the
/// next (`in_go`: its `go` then fails, as a person's does), or before the referee asks.
struct Quitter {
    inner: InProcess,
    sown: usize,
    after: usize,
    in_go: bool,
    gave_up: bool,
}

impl Contestant for Quitter {
    async fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        start: Option<&Position>,
        side: Side,
    ) -> Result<(), Fault> {
        self.inner.new_game(game, rules, start, side).await
    }

    async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, Fault> {
        if self.sown == self.after && self.in_go {
            self.gave_up = true;
            return Err(Fault::new(FaultKind::Crash, "gave up"));
        }
        self.sown += 1;
        if self.sown == self.after && !self.in_go {
            self.gave_up = true;
        }
        self.inner.go(pos, moves, time, deadline).await
    }

    async fn game_over(
        &mut self,
        game: &str,
        result: SideResult,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> Result<(), Fault> {
        self.inner
            .game_over(game, result, south, north, termination)
            .await
    }

    fn resigned(&self) -> bool {
        self.gave_up
    }
}

#[test]
fn a_resignation_is_a_loss_of_the_side_that_resigned_and_no_fault() {
    for in_go in [true, false] {
        let mut s = Quitter {
            inner: first(),
            sown: 0,
            after: 3,
            in_go,
            gave_up: false,
        };
        let mut n = first();
        let p = block_on(play_game(&setup(), &mut s, &mut n));
        let g = &p.record;
        assert_eq!(g.termination, Termination::Resigned, "{g:?}");
        assert_eq!(g.termination.as_str(), "resigned");
        assert_eq!(g.loser, Some(Side::South));
        assert_eq!(g.result, GameResult::NorthWins);
        assert_eq!(g.detail, "s resigned");
        assert_eq!(p.faulted, [false, false], "a resignation is no fault");
        assert_eq!(g.moves.iter().filter(|m| m.side == Side::South).count(), 3);
        assert!(!g.final_position.is_over());
        // A valid record, as written and read back.
        g.replay().unwrap();
        let text = serde_json::to_string(g).unwrap();
        let back: GameRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back.termination, Termination::Resigned);
        back.replay().unwrap();
        assert_eq!(n.game_overs[0].1, SideResult::Win);
        assert_eq!(n.game_overs[0].2, Termination::Resigned);
        assert_eq!(s.inner.game_overs[0].1, SideResult::Loss);
    }
}
