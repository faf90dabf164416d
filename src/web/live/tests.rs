//! Tests of the page's state.

use super::*;
use crate::record::{GameResult, MoveRecord, Termination};
use crate::referee::GameSetup;
use crate::results::sample_record;
use crate::rules::Side;

fn setup(id: &str, number: u64) -> GameSetup {
    GameSetup {
        id: id.into(),
        number,
        round: 1,
        pair: 1,
        names: ["human".into(), "<b>bot</b>".into()],
        rules: Rules::default(),
        opening: Default::default(),
        time: [crate::record::TimeControl::MoveTime(Duration::from_secs(1)); 2],
        margin: Duration::ZERO,
        adjudication: Default::default(),
    }
}

fn play(live: &Live, game: &str, ply: usize, before: &Position, pit: u8) -> Position {
    let after = before.play(pit as i64).unwrap();
    let record = MoveRecord {
        side: before.to_move(),
        pit,
        opening: false,
        time_ms: 3,
        info: Vec::new(),
        info_dropped: 0,
    };
    live.observe(&GameUpdate::Moved {
        game,
        ply,
        record: &record,
        before,
        after: &after,
    });
    after
}

fn json(live: &Live) -> serde_json::Value {
    serde_json::from_str(&live.snapshot()).unwrap()
}

#[test]
fn a_person_moves_only_legal_pits_in_turn() {
    let live = Live::new(Mode::Play, "t", None);
    let gate = Gate::new(true);
    live.set_session(Some("human".into()), gate.clone());
    let start = Position::start(Rules::default());
    let s = setup("g-1", 1);
    live.observe(&GameUpdate::Started {
        setup: &s,
        position: &start,
        moves: &[],
    });
    assert!(
        live.person_move("g-1", 3)
            .unwrap_err()
            .contains("not your turn")
    );
    let (tx, mut rx) = oneshot::channel();
    live.await_person("g-1", start.legal_moves().collect(), None, tx);
    let v = json(&live);
    assert_eq!(v["boards"][0]["person"], "south");
    assert_eq!(v["boards"][0]["awaiting"], true);
    assert_eq!(v["boards"][0]["legal"].as_array().unwrap().len(), 6);
    assert_eq!(v["boards"][0]["north"], "<b>bot</b>");
    let e = live.person_move("g-1", 7).unwrap_err();
    assert!(e.contains("legal pits are 1, 2, 3, 4, 5, 6"), "{e}");
    assert!(live.person_move("g-2", 3).is_err());
    assert!(rx.try_recv().is_err());
    live.person_move("g-1", 3).unwrap();
    assert_eq!(rx.try_recv().unwrap(), Choice::Pit(3));
    assert!(live.person_move("g-1", 3).is_err(), "one move per request");
    // The sowing arrives from the referee; a repeated or skipped ply is ignored.
    let after = play(&live, "g-1", 0, &start, 3);
    play(&live, "g-1", 0, &start, 3);
    play(&live, "g-1", 5, &after, 1);
    let v = json(&live);
    let frames = v["boards"][0]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["note"], "extra turn");
    assert_eq!(v["can_new"], false);
    assert!(live.new_game().unwrap_err().contains("not over"));
}

#[test]
fn the_next_game_starts_when_the_page_asks() {
    let live = Live::new(Mode::Play, "t", None);
    let gate = Gate::new(true);
    live.set_session(Some("human".into()), gate.clone());
    // The first game may start at once.
    assert_eq!(gate.permits.available_permits(), 1);
    assert_eq!(json(&live)["can_new"], false);
    gate.permits.try_acquire().unwrap().forget();
    let s = setup("g-1", 1);
    let start = Position::start(Rules::default());
    live.observe(&GameUpdate::Started {
        setup: &s,
        position: &start,
        moves: &[],
    });
    let mut record = sample_record("g", 1, "human", "<b>bot</b>");
    record.result = GameResult::NorthWins;
    record.termination = Termination::Fault(crate::record::FaultKind::Timeout);
    record.loser = Some(Side::South);
    record.detail = "no move within 1s\u{1b}[2J".into();
    live.game_finished(&record);
    let v = json(&live);
    assert_eq!(v["can_new"], true);
    let text = v["boards"][0]["result"]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "human (south) 12 – 36 <b>bot</b> (north): <b>bot</b> wins (human lost by timeout: \
         no move within 1s\\u{1b}[2J)"
    );
    assert_eq!(v["recent"][0]["game"], "g-1");
    live.new_game().unwrap();
    assert_eq!(gate.permits.available_permits(), 1);
    assert!(live.new_game().unwrap_err().contains("already starting"));
    assert_eq!(gate.permits.available_permits(), 1);
    let s2 = setup("g-2", 2);
    live.observe(&GameUpdate::Started {
        setup: &s2,
        position: &start,
        moves: &[],
    });
    let v = json(&live);
    assert_eq!(v["boards"].as_array().unwrap().len(), 1);
    assert_eq!(v["boards"][0]["game"], "g-2");
    assert_eq!(v["starting"], false);
    // A person on a clock starts the first game from the page.
    let clocked = Live::new(Mode::Play, "t", None);
    let closed = Gate::new(false);
    clocked.set_session(Some("human".into()), closed.clone());
    assert_eq!(json(&clocked)["can_new"], true);
    clocked.new_game().unwrap();
    assert_eq!(closed.permits.available_permits(), 1);
    assert_eq!(json(&clocked)["can_new"], false);
    // The finished game stays replayable.
    let g: serde_json::Value = serde_json::from_str(&live.game_json("1").unwrap()).unwrap();
    assert_eq!(g["game"], "g-1");
    assert!(live.game_json("g-9").is_none());
}

#[test]
fn the_time_left_is_fresh_in_every_snapshot() {
    let live = Live::new(Mode::Play, "t", None);
    live.set_session(Some("human".into()), Gate::new(true));
    let s = setup("g-1", 1);
    let start = Position::start(Rules::default());
    live.observe(&GameUpdate::Started {
        setup: &s,
        position: &start,
        moves: &[],
    });
    let (tx, _rx) = oneshot::channel();
    live.await_person("g-1", vec![1, 2], Some(Duration::from_secs(5)), tx);
    let first = json(&live)["boards"][0]["clock_ms"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let later = json(&live)["boards"][0]["clock_ms"].as_u64().unwrap();
    assert!(first <= 5000 && later + 15 <= first, "{first} then {later}");
}

#[test]
fn a_tournament_shows_the_games_in_progress() {
    let live = Live::new(Mode::Tournament, "t", None);
    let start = Position::start(Rules::default());
    for n in [2, 1] {
        let s = setup(&format!("g-{n}"), n);
        live.observe(&GameUpdate::Started {
            setup: &s,
            position: &start,
            moves: &[],
        });
    }
    let v = json(&live);
    assert_eq!(v["boards"][0]["game"], "g-1");
    assert_eq!(v["boards"][1]["game"], "g-2");
    assert!(live.new_game().is_err());
    live.game_finished(&sample_record("g", 1, "a", "b"));
    live.game_interrupted("g-2");
    let v = json(&live);
    assert!(v["boards"].as_array().unwrap().is_empty());
    assert_eq!(v["finished"], 1);
    let version = v["version"].as_u64().unwrap();
    // The snapshot is made once per version.
    assert!(Arc::ptr_eq(&live.snapshot(), &live.snapshot()));
    live.run_ended("over".into());
    assert!(json(&live)["version"].as_u64().unwrap() > version);
}

/// A game in progress on the page: the gate's permission used, as the seat does.
fn person_game(id: &str) -> (Arc<Live>, Arc<Gate>, Position) {
    let live = Live::new(Mode::Play, "t", None);
    let gate = Gate::new(true);
    live.set_session(Some("human".into()), gate.clone());
    gate.permits.try_acquire().unwrap().forget();
    let start = Position::start(Rules::default());
    live.observe(&GameUpdate::Started {
        setup: &setup(id, 1),
        position: &start,
        moves: &[],
    });
    (live, gate, start)
}

#[test]
fn a_person_resigns_on_the_move_or_while_the_engine_thinks() {
    // On the move: the referee's wait ends with the resignation.
    let (live, _gate, start) = person_game("g-1");
    assert_eq!(json(&live)["can_resign"], true);
    let (tx, mut rx) = oneshot::channel();
    live.await_person("g-1", start.legal_moves().collect(), None, tx);
    assert!(live.resign("g-2").unwrap_err().contains("not the game"));
    assert!(!live.has_resigned("g-1"));
    live.resign("g-1").unwrap();
    assert_eq!(rx.try_recv().unwrap(), Choice::Resign);
    assert!(live.has_resigned("g-1"));
    let v = json(&live);
    assert_eq!(v["can_resign"], false);
    assert_eq!(v["boards"][0]["awaiting"], false);
    assert!(live.resign("g-1").is_err(), "once is enough");
    // While the engine thinks: marked, and seen at the referee's next question.
    let (live, _gate, _) = person_game("g-7");
    live.resign("g-7").unwrap();
    assert!(live.has_resigned("g-7"));
    // Nobody resigns for two engines, nor after the game.
    let watch = Live::new(Mode::Watch, "t", None);
    watch.set_session(None, Gate::new(true));
    assert!(watch.resign("g-1").is_err());
    let (live, _gate, _) = person_game("g-3");
    live.game_finished(&sample_record("g", 3, "human", "<b>bot</b>"));
    assert!(live.resign("g-3").is_err());
    assert_eq!(json(&live)["can_resign"], false);
}

#[test]
fn a_new_game_in_the_middle_of_one_resigns_it() {
    let (live, gate, start) = person_game("g-1");
    assert_eq!(json(&live)["can_new"], true);
    let (tx, mut rx) = oneshot::channel();
    live.await_person("g-1", start.legal_moves().collect(), None, tx);
    live.new_game().unwrap();
    assert_eq!(rx.try_recv().unwrap(), Choice::Resign);
    assert!(live.has_resigned("g-1"));
    assert!(gate.is_open(), "the next game may start");
    let v = json(&live);
    assert_eq!(
        (v["can_new"].clone(), v["starting"].clone()),
        (false.into(), true.into())
    );
    // The next game clears it.
    live.observe(&GameUpdate::Started {
        setup: &setup("g-2", 2),
        position: &start,
        moves: &[],
    });
    assert!(!live.has_resigned("g-1") && !live.has_resigned("g-2"));
    assert_eq!(json(&live)["can_resign"], true);
}

/// The record of a game can come after the next game has started (the page asked for it
/// in the middle of the game): the new game's board and awaited move stay.
#[test]
fn a_record_that_comes_late_leaves_the_next_game_alone() {
    let (live, _gate, start) = person_game("g-2");
    let (tx, mut rx) = oneshot::channel();
    live.await_person("g-2", start.legal_moves().collect(), None, tx);
    live.game_finished(&sample_record("g", 1, "human", "<b>bot</b>"));
    let v = json(&live);
    assert_eq!(v["boards"][0]["game"], "g-2", "{v}");
    assert_eq!(v["boards"][0]["awaiting"], true, "{v}");
    assert_eq!(v["recent"][0]["game"], "g-1", "{v}");
    assert!(rx.try_recv().is_err(), "the move is still awaited");
    live.person_move("g-2", 1).unwrap();
    assert_eq!(rx.try_recv().unwrap(), Choice::Pit(1));
}

/// The page chooses a match: it takes in the game shown if nothing was sown in it, else
/// starts with the next game; between games it starts the next one; no other format is
/// taken while a match is being played, and single games come back once it is over.
#[test]
fn the_page_chooses_the_match_of_the_next_games() {
    let (live, gate, _) = person_game("g-1");
    let names = ["human".to_string(), "<b>bot</b>".to_string()];
    let info = StartInfo {
        id: "g".into(),
        names: names.to_vec(),
        total: 0,
        done: 0,
        notes: Vec::new(),
    };
    assert_eq!(
        json(&live)["can_choose_match"],
        false,
        "before the players are known"
    );
    live.start_run(&info, &Tally::new());
    assert_eq!(json(&live)["can_choose_match"], true);
    for bad in ["best-of-0", "most-of-3", "", "seeds-to-1001"] {
        assert!(live.choose_match(bad).is_err(), "{bad}");
    }
    // Nothing sown yet: game 1 is the match's first.
    live.choose_match("best-of-3").unwrap();
    let v = json(&live);
    assert_eq!(v["match"]["first_game"], 1, "{v}");
    assert_eq!(v["match"]["format_text"], "best of 3 games");
    assert_eq!(v["can_choose_match"], false);
    assert!(!gate.is_open(), "the game in progress goes on");
    assert!(
        live.choose_match("single")
            .unwrap_err()
            .contains("being played")
    );
    let mut g = sample_record("g", 1, "human", "<b>bot</b>");
    g.result = GameResult::SouthWins;
    live.game_finished(&g);
    let (all, m) = live.count_in_match(&g).unwrap();
    assert_eq!((all.len(), m.games, m.wins), (1, 1, [1, 0]));
    for n in [2, 3] {
        let mut g = sample_record("g", n, "<b>bot</b>", "human");
        g.result = GameResult::NorthWins;
        live.count_in_match(&g);
    }
    let v = json(&live);
    assert_eq!(v["match"]["over"], true, "{v}");
    assert_eq!(
        v["can_new"], false,
        "no game after the match, unless chosen"
    );
    assert_eq!(v["can_choose_match"], true);
    // Between games: the next game starts, and is the match's first.
    live.choose_match("first-to-2").unwrap();
    assert!(gate.is_open());
    let v = json(&live);
    assert_eq!(v["match"]["first_game"], 2, "{v}");
    assert_eq!(v["starting"], true);
    // A record of a game before the match does not count.
    assert!(
        live.count_in_match(&sample_record("g", 1, "human", "x"))
            .is_none()
    );
    // A game with sowings: the match starts with the next one.
    let (live, gate, start2) = person_game("g-1");
    live.start_run(&info, &Tally::new());
    play(&live, "g-1", 0, &start2, 1);
    live.choose_match("seeds-over-5").unwrap();
    assert_eq!(json(&live)["match"]["first_game"], 2);
    assert!(!gate.is_open(), "the game in progress is not resigned");
    assert!(!live.has_resigned("g-1"));
    // A page that only watches chooses nothing.
    let t = Live::new(Mode::Tournament, "t", None);
    assert!(t.choose_match("best-of-3").is_err());
}

#[test]
fn the_end_of_a_run_says_why_it_ended() {
    use crate::tournament::events::RunSummary;
    let dir = std::path::Path::new("results/run1");
    let words = |summary: &RunSummary| run::end_words(Mode::Tournament, Some(dir), summary);
    let done = RunSummary {
        played: 12,
        ..RunSummary::default()
    };
    assert_eq!(
        words(&done),
        "the run is over: 12 games played; run finished: results in results/run1"
    );
    let decided = RunSummary {
        stopped_by_view: true,
        ..done.clone()
    };
    assert_eq!(
        words(&decided),
        "the run is over, the test decided: 12 games played; run finished: results in \
         results/run1"
    );
    let interrupted = RunSummary {
        stopped_by_interrupt: true,
        stopped_by_view: true,
        ..done.clone()
    };
    assert_eq!(
        words(&interrupted),
        "the run was stopped: 12 games played; run finished: results in results/run1"
    );
    let failed = RunSummary {
        failed: Some("failed to write the results: disk full".into()),
        ..done.clone()
    };
    assert_eq!(
        words(&failed),
        "the run stopped after 12 games played: failed to write the results: disk full; run \
         finished: results in results/run1"
    );
    assert_eq!(
        run::end_words(Mode::Play, Some(dir), &done),
        "12 games recorded"
    );
}
