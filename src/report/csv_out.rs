//! `standings.csv` and `h2h.csv`, streamed row by row (h2h.csv has a row per ordered
//! pairing that met, which can be hundreds of thousands).

use super::{num, safe};
use crate::record::FaultKind;
use crate::stats::{AccuracyTable, Standings};
use std::io::{self, Write};

/// A text cell that is safe to show and that a spreadsheet would not run as a formula.
fn text_cell(s: &str) -> String {
    crate::results::text_cell(&safe(s)).into_owned()
}

fn csv_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

/// The columns of `standings.csv`.
pub(crate) const STANDINGS_COLUMNS: [&str; 21] = [
    "rank",
    "engine",
    "games",
    "wins",
    "draws",
    "losses",
    "score",
    "elo",
    "elo_error",
    "mean_margin",
    "margin_error",
    "timeouts",
    "illegal_moves",
    "protocol_errors",
    "crashes",
    "stalls",
    "group",
    "accuracy_moves",
    "loss_per_move",
    "accuracy",
    "loss_blunders",
];

/// One row per engine, best first. The last four columns come from an exact analysis of the
/// games (empty without one): moves analysed, seeds lost per move, the share of perfect
/// moves and the moves that lost 2 seeds or more.
pub(crate) fn standings_csv(
    out: &mut impl Write,
    s: &Standings,
    accuracy: Option<&AccuracyTable>,
) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(STANDINGS_COLUMNS).map_err(csv_error)?;
    for r in &s.rows {
        let acc = accuracy
            .and_then(|t| t.get(&r.engine))
            .filter(|a| a.moves > 0);
        let acc_cells = match acc {
            Some(a) => [
                a.moves.to_string(),
                num(a.loss_per_move(), 4),
                num(a.perfect_share(), 4),
                a.blunders.to_string(),
            ],
            None => Default::default(),
        };
        w.write_record([
            r.rank.to_string(),
            text_cell(&r.engine),
            r.wdl.games().to_string(),
            r.wdl.wins.to_string(),
            r.wdl.draws.to_string(),
            r.wdl.losses.to_string(),
            num(r.wdl.score(), 4),
            num(r.elo.value, 2),
            num(r.elo.error, 2),
            num(r.margin.value, 3),
            num(r.margin.error, 3),
            r.faults.count(FaultKind::Timeout).to_string(),
            r.faults.count(FaultKind::IllegalMove).to_string(),
            r.faults.count(FaultKind::ProtocolError).to_string(),
            r.faults.count(FaultKind::Crash).to_string(),
            r.faults.count(FaultKind::Stall).to_string(),
            (r.group + 1).to_string(),
            acc_cells[0].clone(),
            acc_cells[1].clone(),
            acc_cells[2].clone(),
            acc_cells[3].clone(),
        ])
        .map_err(csv_error)?;
    }
    w.flush()
}

/// The columns of `h2h.csv`.
pub(crate) const H2H_COLUMNS: [&str; 23] = [
    "engine",
    "opponent",
    "games",
    "wins",
    "draws",
    "losses",
    "score",
    "elo",
    "elo_error",
    "los",
    "pairs",
    "ll",
    "ld",
    "wl_dd",
    "wd",
    "ww",
    "penta_elo",
    "penta_elo_error",
    "penta_los",
    "nelo",
    "nelo_error",
    "mean_margin",
    "margin_error",
];

/// One row per ordered pair of engines that met, in standings order. `elo` and `los` are
/// from the games, `penta_*` from the game pairs; `nelo` from the pairs when any pair was
/// completed, else from the games (empty when the results have no spread).
pub(crate) fn h2h_csv(out: &mut impl Write, s: &Standings) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(H2H_COLUMNS).map_err(csv_error)?;
    let mut row: Vec<String> = Vec::with_capacity(H2H_COLUMNS.len());
    for h in s.h2h_rows() {
        let t = &h.tally;
        let elo = t.wdl.elo();
        let penta_elo = t.penta.elo();
        let penta_los = if t.penta.pairs() > 0 {
            num(t.penta.los(), 4)
        } else {
            String::new()
        };
        let nelo = t.nelo();
        let margin = t.margin.estimate();
        row.clear();
        row.extend([
            text_cell(&s.row_of(h.engine_index).engine),
            text_cell(&s.row_of(h.opponent_index).engine),
            t.wdl.games().to_string(),
            t.wdl.wins.to_string(),
            t.wdl.draws.to_string(),
            t.wdl.losses.to_string(),
            num(t.wdl.score(), 4),
            num(elo.value, 2),
            num(elo.error, 2),
            num(t.wdl.los(), 4),
            t.penta.pairs().to_string(),
        ]);
        row.extend(t.penta.0.iter().map(|c| c.to_string()));
        row.extend([
            num(penta_elo.value, 2),
            num(penta_elo.error, 2),
            penta_los,
            num(nelo.value, 2),
            num(nelo.error, 2),
            num(margin.value, 3),
            num(margin.error, 3),
        ]);
        w.write_record(&row).map_err(csv_error)?;
    }
    w.flush()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn to_text(f: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn formula_cells_are_neutralised_numbers_are_not() {
        assert_eq!(text_cell("=1+1"), "'=1+1");
        assert_eq!(text_cell("@x"), "'@x");
        assert_eq!(text_cell("-x"), "'-x");
        assert_eq!(text_cell("+x"), "'+x");
        assert_eq!(text_cell("plain"), "plain");
        let s = super::super::tests::sample();
        let mut acc = AccuracyTable::new();
        acc.add("-minus", Some(3));
        acc.add("-minus", Some(0));
        let text = to_text(|w| standings_csv(w, &s, Some(&acc)));
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 4);
        let names: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
        assert!(names.contains(&"'=cmd|' /C calc'!A0"));
        assert!(names.contains(&"'-minus"));
        // Elo cells stay plain numbers, negative ones included.
        let elos: Vec<f64> = rows.iter().map(|r| r[7].parse().unwrap()).collect();
        assert!(elos.iter().any(|&e| e < 0.0));
        // The analysis columns: filled for the engine analysed, empty for the others.
        let minus = rows.iter().find(|r| &r[1] == "'-minus").unwrap();
        assert_eq!(
            &minus.iter().collect::<Vec<_>>()[17..],
            ["2", "1.5000", "0.5000", "1"]
        );
        let other = rows.iter().find(|r| &r[1] != "'-minus").unwrap();
        assert_eq!(other.iter().skip(17).collect::<String>(), "");
        let h2h = to_text(|w| h2h_csv(w, &s));
        assert_eq!(h2h.lines().count(), 1 + 12);
        let header: Vec<&str> = h2h.lines().next().unwrap().split(',').collect();
        assert_eq!(header, H2H_COLUMNS);
    }
}
