//! Values the analysis knows without a search: the exact value of the position each line of
//! a shipped book of balanced openings reaches (`books/*.openings`, written by `kalaha
//! openings` with `--budget none`: the comment `# value +N` of every line is the value for
//! south, proved by the solver).
//!
//! The files are those [`super::default_book`] plays; their values are read here from the
//! comments, which the openings reader skips.

use super::openings::book_of;
use crate::rules::{Position, Rules, Side};

/// The positions the shipped book of `rules` reaches, each with its exact value for its
/// side to move (none when kalaha ships no book for `rules`). A line that does not read or
/// replay is left out.
pub(crate) fn book_values(rules: Rules) -> Vec<(Position, i32)> {
    book_of(rules)
        .into_iter()
        .flat_map(|book| book.text.lines())
        .filter_map(|line| valued_line(line, rules))
        .collect()
}

/// The position a book line `PITS...  # value +N` reaches and its value for the side to
/// move there.
fn valued_line(line: &str, rules: Rules) -> Option<(Position, i32)> {
    let (pits, comment) = line.split_once('#')?;
    let south: i32 = comment.trim().strip_prefix("value")?.trim().parse().ok()?;
    let mut pos = Position::start(rules);
    let mut any = false;
    for pit in pits.split_whitespace() {
        pos = pos.play(pit.parse::<i64>().ok()?).ok()?;
        any = true;
    }
    if !any || pos.is_over() {
        return None;
    }
    let value = if pos.to_move() == Side::South {
        south
    } else {
        -south
    };
    Some((pos, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::openings::BOOKS;
    use crate::rules::Sweep;

    #[test]
    fn every_line_of_the_shipped_books_gives_its_value() {
        for book in BOOKS {
            let rules = Rules::new(
                book.pits as u32,
                book.seeds as u32,
                book.empty_capture,
                book.sweep,
            )
            .unwrap();
            let values = book_values(rules);
            assert_eq!(values.len(), 1000, "{}: every line reads", book.name);
            assert!(values.iter().all(|(_, v)| v.abs() <= 2), "{}", book.name);
            // A value of the board's parity (an even number of seeds on every board with
            // a book: the stores' difference is even), for the side to move: south's value
            // negated when north moves.
            assert_eq!(book.pits * book.seeds % 2, 0, "{}", book.name);
            assert!(values.iter().all(|(_, v)| v % 2 == 0), "{}", book.name);
            let (pos, v) = &values[0];
            let south = if pos.to_move() == Side::South { *v } else { -v };
            let line = book.text.lines().find(|l| !l.starts_with('#')).unwrap();
            assert!(line.ends_with(&format!("# value {south:+}")), "{line}");
        }
        let other = Rules::new(6, 6, false, Sweep::Owner).unwrap();
        assert!(book_values(other).is_empty());
        // A line that does not read is left out.
        let rules = Rules::default();
        assert!(valued_line("3 9  # value +2", rules).is_none());
        assert!(valued_line("3 4  # value x", rules).is_none());
        assert!(valued_line("# value +2", rules).is_none());
        let (pos, v) = valued_line("1  # value -2", rules).unwrap();
        assert_eq!((pos.to_move(), v), (Side::North, 2));
    }
}
