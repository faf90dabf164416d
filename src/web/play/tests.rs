use super::*;

#[test]
fn the_start_value_is_known_for_the_standard_board_and_small_ones() {
    assert_eq!(start_value(Rules::default(), Duration::ZERO), Some(8));
    let small = Rules::new(3, 3, false, crate::rules::Sweep::Owner).unwrap();
    let exact = crate::solver::Solver::new(16)
        .solve(&Position::start(small))
        .value;
    assert_eq!(start_value(small, Duration::from_secs(30)), Some(exact));
    // A board the solver cannot finish at once is not known.
    let big = Rules::new(6, 6, false, crate::rules::Sweep::Owner).unwrap();
    assert_eq!(start_value(big, Duration::from_millis(50)), None);
}

#[test]
fn the_seats_swap_every_game() {
    let games: Vec<_> = Alternating { next: 1 }.take(4).collect();
    let seats: Vec<_> = games.iter().map(|g| (g.south, g.north)).collect();
    assert_eq!(seats, [(0, 1), (1, 0), (0, 1), (1, 0)]);
    let pairs: Vec<_> = games.iter().map(|g| g.pair).collect();
    assert_eq!(pairs, [1, 1, 2, 2]);
    assert!(games.iter().all(|g| g.opening == Default::default()));
}

#[tokio::test]
async fn a_person_without_a_move_loses_on_time() {
    let live = Live::new(super::super::Mode::Play, "t", None);
    let mut p = Person {
        live: live.clone(),
        game: String::new(),
    };
    p.new_game("g-1", Rules::default(), None, Side::South)
        .await
        .unwrap();
    let pos = Position::start(Rules::default());
    let limit = TimeLimit::MoveTime(Duration::from_millis(30));
    let fault = p
        .go(&pos, &[], limit, Duration::from_millis(30))
        .await
        .unwrap_err();
    assert_eq!(fault.kind, FaultKind::Timeout);
    assert!(fault.detail.contains("within 30ms"), "{}", fault.detail);
    // The page no longer offers the move.
    assert!(live.person_move("g-1", 1).is_err());
}

#[tokio::test]
async fn a_person_moves_from_the_page() {
    let live = Live::new(super::super::Mode::Play, "t", None);
    let mut p = Person {
        live: live.clone(),
        game: String::new(),
    };
    p.new_game("g-1", Rules::default(), None, Side::South)
        .await
        .unwrap();
    let pos = Position::start(Rules::default());
    let page = {
        let live = live.clone();
        tokio::spawn(async move {
            loop {
                if live.person_move("g-1", 4).is_ok() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    let limit = TimeLimit::MoveTime(NO_CLOCK);
    let reply = p.go(&pos, &[], limit, NO_CLOCK).await.unwrap();
    page.await.unwrap();
    assert_eq!(reply.pit, 4);
}
