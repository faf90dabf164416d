//! The interactive rules guide of the page ("Learn the rules", `kalaha play --learn`): four
//! steps on a board of three pits a side (sowing and the store, the extra turn, the
//! capture, the end of the game and the count) and three cards on the full board that
//! start from the same position ("the last seed decides": an ordinary move, an extra turn,
//! a capture).
//!
//! The person plays south. Every sowing is played by the rules of [`crate::rules`]: the
//! page sends the pits it was given (`GET /guide/move?lesson=ID&moves=3,2`), the server
//! replays them from the lesson's position, refuses what the rules refuse, and answers
//! what each sowing did (the cells its seeds fell in, in order, for the page to draw; the
//! position after it, capture and sweep included; what it means, in words) and whether
//! the step's goal is reached. Nothing is kept between requests, and the page decides
//! nothing: it draws the answer.
//!
//! The guide follows the rule variant of the page (the session's), or the one a request
//! names (`empty_capture=true`, `sweep=empty_side`); the texts say what the variant
//! changes.

use crate::rules::{BoardView, IllegalReason, Position, Row, Rules, Side, Sweep};
use serde::Serialize;

/// The most sowings a request may replay in one lesson.
pub(crate) const MAX_MOVES: usize = 16;

/// The variants the guide follows: whatever else, its boards are its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Variant {
    pub empty_capture: bool,
    pub sweep: Sweep,
}

impl Variant {
    /// The variant of `rules` (its size is not the guide's).
    pub(crate) fn of(rules: &Rules) -> Variant {
        Variant {
            empty_capture: rules.empty_capture(),
            sweep: rules.sweep(),
        }
    }

    /// The rules of a guide board of `pits` pits under this variant.
    fn rules(self, pits: u32) -> Result<Rules, GuideError> {
        Rules::new(pits, 4, self.empty_capture, self.sweep)
            .map_err(|e| GuideError::bad(format!("no board of {pits} pits: {e}")))
    }

    /// The variant of `rules` where `empty_capture` and `sweep` (as a request gives them)
    /// say otherwise.
    pub(crate) fn parse(
        default: Variant,
        empty_capture: Option<&str>,
        sweep: Option<&str>,
    ) -> Result<Variant, GuideError> {
        let empty_capture = match empty_capture {
            None => default.empty_capture,
            Some("true" | "1") => true,
            Some("false" | "0") => false,
            Some(other) => {
                return Err(GuideError::bad(format!(
                    "empty_capture={:?}: give true or false",
                    crate::record::clean_text(other)
                )));
            }
        };
        let sweep = match sweep {
            None => default.sweep,
            Some(s) => s.parse::<Sweep>().map_err(|_| {
                GuideError::bad(format!(
                    "sweep={:?}: give owner, empty_side or none",
                    crate::record::clean_text(s)
                ))
            })?,
        };
        Ok(Variant {
            empty_capture,
            sweep,
        })
    }

    /// What the variant says about the two rules that differ, in words.
    fn capture_words(self) -> &'static str {
        if self.empty_capture {
            "Under these rules (empty capture) a last seed in an empty pit of yours goes to \
             your store even when the pit opposite is empty: the lone seed is captured."
        } else {
            "The pit opposite must hold at least one seed: when it is empty, the last seed \
             just stays where it landed and nothing is captured."
        }
    }

    fn sweep_words(self) -> &'static str {
        match self.sweep {
            Sweep::Owner => {
                "The seeds still in the pits then go to their owner: each player's seeds \
                 to that player's store."
            }
            Sweep::EmptySide => {
                "Under these rules (sweep to the empty side) the seeds still in the pits then \
                 all go to the store of the player whose row ran empty."
            }
            Sweep::None => {
                "Under these rules (no sweep) the seeds still in the pits then count for no \
                 one: only the stores are counted."
            }
        }
    }

    /// The variant in a few words, for the page.
    fn text(self) -> String {
        let capture = if self.empty_capture {
            "a lone last seed in an empty pit of yours is captured too"
        } else {
            "a capture needs seeds in the pit opposite"
        };
        let sweep = match self.sweep {
            Sweep::Owner => "the seeds left at the end go to their owner",
            Sweep::EmptySide => "the seeds left at the end go to the side that ran out",
            Sweep::None => "the seeds left at the end count for no one",
        };
        format!("{capture}; {sweep}")
    }
}

/// What a lesson asks of the person's sowing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Goal {
    /// Seeds reach the person's store.
    Store,
    /// The last seed lands in the person's store: an extra turn.
    ExtraTurn,
    /// The last seed captures.
    Capture,
    /// The game ends.
    End,
    /// An ordinary move: no extra turn, no capture, the game goes on.
    Ordinary,
}

/// A lesson: a position (south to move) and what to do in it.
struct Lesson {
    id: &'static str,
    title: &'static str,
    pits: u32,
    south: &'static [u16],
    south_store: u16,
    north: &'static [u16],
    north_store: u16,
    goal: Goal,
    /// For a card: the one pit it is about.
    pit: Option<u8>,
}

/// The four steps, on a board of three pits a side.
const STEPS: [Lesson; 4] = [
    Lesson {
        id: "sow",
        title: "Sowing and the store",
        pits: 3,
        south: &[2, 1, 5],
        south_store: 0,
        north: &[3, 3, 3],
        north_store: 0,
        goal: Goal::Store,
        pit: None,
    },
    Lesson {
        id: "extra",
        title: "The extra turn",
        pits: 3,
        south: &[2, 2, 3],
        south_store: 2,
        north: &[2, 3, 1],
        north_store: 1,
        goal: Goal::ExtraTurn,
        pit: None,
    },
    Lesson {
        // Seed 000's diagram: north's pit 1, opposite south's pit 3, holds five seeds.
        id: "capture",
        title: "The capture",
        pits: 3,
        south: &[3, 1, 0],
        south_store: 3,
        north: &[5, 1, 1],
        north_store: 3,
        goal: Goal::Capture,
        pit: None,
    },
    Lesson {
        id: "end",
        title: "The end of the game and the count",
        pits: 3,
        south: &[0, 2, 1],
        south_store: 9,
        north: &[1, 2, 2],
        north_store: 6,
        goal: Goal::End,
        pit: None,
    },
];

/// The position of the three cards, on the full board: pit 5 sows onto north's side, pit 4
/// ends in the store, pit 1 ends in the empty pit 2, opposite north's pit 5.
const CARD_SOUTH: &[u16] = &[1, 0, 2, 3, 4, 0];
const CARD_NORTH: &[u16] = &[3, 2, 1, 5, 4, 2];

const CARDS: [Lesson; 3] = [
    Lesson {
        id: "card-ordinary",
        title: "An ordinary move",
        pits: 6,
        south: CARD_SOUTH,
        south_store: 11,
        north: CARD_NORTH,
        north_store: 10,
        goal: Goal::Ordinary,
        pit: Some(5),
    },
    Lesson {
        id: "card-extra",
        title: "An extra turn",
        pits: 6,
        south: CARD_SOUTH,
        south_store: 11,
        north: CARD_NORTH,
        north_store: 10,
        goal: Goal::ExtraTurn,
        pit: Some(4),
    },
    Lesson {
        id: "card-capture",
        title: "A capture",
        pits: 6,
        south: CARD_SOUTH,
        south_store: 11,
        north: CARD_NORTH,
        north_store: 10,
        goal: Goal::Capture,
        pit: Some(1),
    },
];

impl Lesson {
    fn find(id: &str) -> Option<&'static Lesson> {
        STEPS.iter().chain(CARDS.iter()).find(|l| l.id == id)
    }

    fn position(&self, variant: Variant) -> Result<Position, GuideError> {
        let row = |pits: &[u16], store| Row {
            pits: pits.to_vec(),
            store,
        };
        Position::from_parts(
            variant.rules(self.pits)?,
            &row(self.south, self.south_store),
            &row(self.north, self.north_store),
            Side::South,
        )
        .map_err(|e| GuideError::bad(format!("the lesson's position: {e}")))
    }

    /// The step's explanation, for the variant.
    fn text(&self, variant: Variant) -> Vec<String> {
        let t = |s: &str| s.to_string();
        match self.id {
            "sow" => vec![
                t(
                    "Choose one of your own pits (the bottom row) that holds seeds. All its \
                   seeds are lifted and sown one by one, counter-clockwise: into your next \
                   pits, then your store (the big pit on your right), then the opponent's \
                   pits, and on around the board.",
                ),
                t(
                    "The opponent's store is always skipped. The pit you started from stays \
                   empty until a later seed lands in it. Seeds in a store stay there to the \
                   end and count for their owner.",
                ),
            ],
            "extra" => vec![
                t(
                    "If the last seed of your sowing lands in your own store, you move again: \
                   an extra turn. Extra turns may chain.",
                ),
                t(
                    "Count the steps from a pit to your store: pit 3 is one step away, pit 2 \
                   two, pit 1 three. A pit holding as many seeds as its steps gives an extra \
                   turn.",
                ),
            ],
            "capture" => vec![
                t(
                    "If the last seed lands in an empty pit on your own side, it captures: that \
                   seed and every seed in the opponent's pit opposite go to your store. A \
                   capture never gives an extra turn; the turn passes.",
                ),
                t(variant.capture_words()),
            ],
            "end" => vec![
                t(
                    "The game ends as soon as either player's pits are all empty, whoever \
                   would move next.",
                ),
                t(variant.sweep_words()),
                t(
                    "Then the stores are counted: the player with more seeds wins, and equal \
                   stores are a draw.",
                ),
            ],
            _ => Vec::new(),
        }
    }

    fn task(&self) -> String {
        match (self.id, self.pit) {
            ("sow", _) => "Sow a pit whose seeds reach your store.".to_string(),
            ("extra", _) => "Find the pit whose last seed lands in your store.".to_string(),
            ("capture", _) => {
                "Capture: make your last seed land in your empty pit 3, opposite north's \
                 5 seeds."
                    .to_string()
            }
            ("end", _) => "Sow until your row is empty, then count the stores. Does the \
                           order of your sowings change the result?"
                .to_string(),
            (_, Some(pit)) => format!("Sow pit {pit}."),
            _ => String::new(),
        }
    }

    fn json(&self, number: usize, variant: Variant) -> Result<LessonJson, GuideError> {
        let pos = self.position(variant)?;
        Ok(LessonJson {
            id: self.id,
            number,
            title: self.title,
            text: self.text(variant),
            task: self.task(),
            goal: self.goal,
            pit: self.pit,
            rules: *pos.rules(),
            position: pos.view(),
            legal: pos.legal_moves().collect(),
        })
    }
}

/// A request the guide refuses: the status and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GuideError {
    pub status: u16,
    pub why: String,
}

impl GuideError {
    fn bad(why: String) -> GuideError {
        GuideError { status: 400, why }
    }

    fn refused(why: String) -> GuideError {
        GuideError { status: 422, why }
    }
}

#[derive(Serialize)]
struct LessonJson {
    id: &'static str,
    number: usize,
    title: &'static str,
    text: Vec<String>,
    task: String,
    goal: Goal,
    #[serde(skip_serializing_if = "Option::is_none")]
    pit: Option<u8>,
    rules: Rules,
    position: BoardView,
    legal: Vec<u8>,
}

#[derive(Serialize)]
struct GuideJson {
    variant: Variant,
    variant_text: String,
    steps: Vec<LessonJson>,
    cards_title: &'static str,
    cards_text: String,
    cards: Vec<LessonJson>,
}

/// `GET /guide`: the steps and the cards under `variant`, as JSON.
pub(crate) fn lessons_json(variant: Variant) -> Result<String, GuideError> {
    let steps = STEPS
        .iter()
        .enumerate()
        .map(|(i, l)| l.json(i + 1, variant))
        .collect::<Result<Vec<_>, _>>()?;
    let cards = CARDS
        .iter()
        .enumerate()
        .map(|(i, l)| l.json(i + 1, variant))
        .collect::<Result<Vec<_>, _>>()?;
    let json = GuideJson {
        variant,
        variant_text: variant.text(),
        steps,
        cards_title: "The last seed decides",
        cards_text: "The three cards start from the same position on the full board of six \
                     pits; only the pit you sow differs. Where its last seed lands decides \
                     what follows: on the opponent's side (or in a pit of yours that holds \
                     seeds) the turn passes, in your store you move again, in an empty pit of \
                     yours it may capture."
            .to_string(),
        cards,
    };
    serde_json::to_string(&json).map_err(|e| GuideError {
        status: 500,
        why: format!("failed to write the guide: {e}"),
    })
}

/// A cell a seed falls in: a pit of a side, or its store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Cell {
    pub side: Side,
    /// The pit (1..=pits), or `None` for the store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pit: Option<u8>,
}

/// What one sowing did.
#[derive(Debug, Serialize)]
pub(crate) struct Sowing {
    pub pit: u8,
    /// The cells the seeds fell in, in order.
    pub path: Vec<Cell>,
    pub before: BoardView,
    pub after: BoardView,
    pub extra_turn: bool,
    pub captured: u16,
    pub game_over: bool,
    /// `ordinary`, `extra_turn`, `capture` or `end`.
    pub outcome: &'static str,
    pub text: String,
}

/// The answer to the person's sowings in a lesson.
#[derive(Debug, Serialize)]
pub(crate) struct Played {
    pub lesson: &'static str,
    pub goal: Goal,
    pub sowings: Vec<Sowing>,
    pub position: BoardView,
    /// The lesson's goal was reached (by the last sowing).
    pub done: bool,
    /// The person cannot sow on: the goal is reached, the turn has passed, or the game is
    /// over.
    pub over: bool,
    /// The pits the person may sow next.
    pub legal: Vec<u8>,
    pub verdict: String,
}

/// Reads `moves=3,2,1` (1 to [`MAX_MOVES`] pit numbers).
pub(crate) fn parse_moves(text: Option<&str>) -> Result<Vec<i64>, GuideError> {
    let text = text.unwrap_or("").trim();
    if text.is_empty() {
        return Err(GuideError::bad(
            "give the pits sown as moves=N or moves=N,M,...".to_string(),
        ));
    }
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > MAX_MOVES {
        return Err(GuideError::bad(format!(
            "at most {MAX_MOVES} sowings in a lesson"
        )));
    }
    parts
        .iter()
        .map(|p| {
            p.trim().parse::<i64>().map_err(|_| {
                GuideError::bad(format!(
                    "{:?} is not a pit number",
                    crate::record::clean_text(p)
                ))
            })
        })
        .collect()
}

/// Plays the person's `moves` (south's) in `lesson` under `variant` with the rules, and
/// says what they did and whether the lesson's goal is reached.
pub(crate) fn play(lesson: &str, moves: &[i64], variant: Variant) -> Result<Played, GuideError> {
    let Some(l) = Lesson::find(lesson) else {
        return Err(GuideError {
            status: 404,
            why: "no such lesson in the guide: reload the page".to_string(),
        });
    };
    if moves.is_empty() || moves.len() > MAX_MOVES {
        return Err(GuideError::bad(format!(
            "give 1 to {MAX_MOVES} pits to sow"
        )));
    }
    let mut pos = l.position(variant)?;
    let mut sowings = Vec::new();
    let mut done = false;
    for (i, &pit) in moves.iter().enumerate() {
        if done {
            return Err(GuideError::refused(
                "this step is done: go on to the next one, or start it again".to_string(),
            ));
        }
        if pos.is_over() {
            return Err(GuideError::refused(
                "the game of this step is over: start it again".to_string(),
            ));
        }
        if pos.to_move() != Side::South {
            return Err(GuideError::refused(format!(
                "after sowing {i}, the turn has passed to north: start the step again"
            )));
        }
        let (after, effect) = pos.play_traced(pit).map_err(|e| {
            GuideError::refused(match e.reason {
                IllegalReason::OutOfRange => format!(
                    "there is no pit {pit}: your pits are numbered 1 to {}",
                    l.pits
                ),
                IllegalReason::EmptyPit => format!("pit {pit} is empty: choose a pit with seeds"),
                _ => e.to_string(),
            })
        })?;
        let pit = pit as u8;
        let path = sowing_path(&pos, pit);
        let outcome = if effect.game_over {
            "end"
        } else if effect.extra_turn {
            "extra_turn"
        } else if effect.captured > 0 {
            "capture"
        } else {
            "ordinary"
        };
        let reached = match l.goal {
            Goal::Store => after.store(Side::South) > pos.store(Side::South),
            Goal::ExtraTurn => effect.extra_turn,
            Goal::Capture => effect.captured > 0,
            Goal::End => effect.game_over,
            Goal::Ordinary => !effect.extra_turn && effect.captured == 0 && !effect.game_over,
        };
        let text = describe(&pos, pit, &path, &after, effect);
        sowings.push(Sowing {
            pit,
            path,
            before: pos.view(),
            after: after.view(),
            extra_turn: effect.extra_turn,
            captured: effect.captured,
            game_over: effect.game_over,
            outcome,
            text,
        });
        pos = after;
        done = reached;
    }
    let over = done || pos.is_over() || pos.to_move() != Side::South;
    let last = sowings.last().expect("at least one sowing");
    let verdict = verdict(l, done, over, last, &pos);
    Ok(Played {
        lesson: l.id,
        goal: l.goal,
        position: pos.view(),
        done,
        over,
        legal: if over {
            Vec::new()
        } else {
            pos.legal_moves().collect()
        },
        sowings,
        verdict,
    })
}

/// The cells the seeds of `pit` (of the side to move in `pos`) fall in, in order: the
/// mover's next pits, its store, the opponent's pits, never the opponent's store, and on
/// around (past the emptied pit too).
fn sowing_path(pos: &Position, pit: u8) -> Vec<Cell> {
    let me = pos.to_move();
    let pits = pos.rules().pits() as u8;
    let seeds = pos.pit(me, usize::from(pit));
    let mut path = Vec::with_capacity(usize::from(seeds));
    let (mut side, mut at) = (me, Some(pit));
    while path.len() < usize::from(seeds) {
        (side, at) = match at {
            Some(p) if p < pits => (side, Some(p + 1)),
            // After the last pit: the mover's store, or past the opponent's.
            Some(_) if side == me => (side, None),
            Some(_) => (me, Some(1)),
            None => (side.opponent(), Some(1)),
        };
        path.push(Cell { side, pit: at });
    }
    path
}

mod words;
use words::{describe, verdict};

#[cfg(test)]
mod tests;
