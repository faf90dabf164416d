//! `standings.csv` and `h2h.csv`.

use super::num;
use crate::record::FaultKind;
use crate::stats::Standings;

/// A text cell that a spreadsheet would not run as a formula.
fn text_cell(s: &str) -> String {
    crate::results::text_cell(s).into_owned()
}

fn to_string(rows: Vec<Vec<String>>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record(&r).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("utf-8 input")
}

fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// One row per engine, best first.
pub(crate) fn standings_csv(s: &Standings) -> String {
    let mut rows = vec![header(&[
        "rank",
        "engine",
        "games",
        "wins",
        "draws",
        "losses",
        "score",
        "elo",
        "elo_error",
        "nelo",
        "nelo_error",
        "mean_margin",
        "margin_error",
        "timeouts",
        "illegal_moves",
        "protocol_errors",
        "crashes",
        "stalls",
        "group",
    ])];
    for r in &s.rows {
        rows.push(vec![
            r.rank.to_string(),
            text_cell(&r.engine),
            r.wdl.games().to_string(),
            r.wdl.wins.to_string(),
            r.wdl.draws.to_string(),
            r.wdl.losses.to_string(),
            num(r.wdl.score(), 4),
            num(r.elo.value, 2),
            num(r.elo.error, 2),
            num(r.nelo.value, 2),
            num(r.nelo.error, 2),
            num(r.margin.value, 3),
            num(r.margin.error, 3),
            r.faults.count(FaultKind::Timeout).to_string(),
            r.faults.count(FaultKind::IllegalMove).to_string(),
            r.faults.count(FaultKind::ProtocolError).to_string(),
            r.faults.count(FaultKind::Crash).to_string(),
            r.faults.count(FaultKind::Stall).to_string(),
            (r.group + 1).to_string(),
        ]);
    }
    to_string(rows)
}

/// One row per ordered pair of engines that met.
pub(crate) fn h2h_csv(s: &Standings) -> String {
    let mut rows = vec![header(&[
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
        "nelo",
        "nelo_error",
        "mean_margin",
        "margin_error",
    ])];
    for h in &s.h2h {
        let t = &h.tally;
        let elo = t.wdl.elo();
        let penta_elo = t.penta.elo();
        let nelo = if t.penta.pairs() > 0 {
            t.penta.nelo()
        } else {
            t.wdl.nelo()
        };
        let margin = t.margin.estimate();
        let mut row = vec![
            text_cell(&h.engine),
            text_cell(&h.opponent),
            t.wdl.games().to_string(),
            t.wdl.wins.to_string(),
            t.wdl.draws.to_string(),
            t.wdl.losses.to_string(),
            num(t.wdl.score(), 4),
            num(elo.value, 2),
            num(elo.error, 2),
            num(t.wdl.los(), 4),
            t.penta.pairs().to_string(),
        ];
        row.extend(t.penta.0.iter().map(|c| c.to_string()));
        row.extend([
            num(penta_elo.value, 2),
            num(penta_elo.error, 2),
            num(nelo.value, 2),
            num(nelo.error, 2),
            num(margin.value, 3),
            num(margin.error, 3),
        ]);
        rows.push(row);
    }
    to_string(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised_numbers_are_not() {
        assert_eq!(text_cell("=1+1"), "'=1+1");
        assert_eq!(text_cell("@x"), "'@x");
        assert_eq!(text_cell("-x"), "'-x");
        assert_eq!(text_cell("+x"), "'+x");
        assert_eq!(text_cell("plain"), "plain");
        let s = super::super::tests::sample();
        let text = standings_csv(&s);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 4);
        let names: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
        assert!(names.contains(&"'=cmd|' /C calc'!A0"));
        assert!(names.contains(&"'-minus"));
        // Elo cells stay plain numbers, negative ones included.
        let elos: Vec<f64> = rows.iter().map(|r| r[7].parse().unwrap()).collect();
        assert!(elos.iter().any(|&e| e < 0.0));
        let h2h = h2h_csv(&s);
        assert_eq!(h2h.lines().count(), 1 + 12);
    }
}
