use super::*;
use std::sync::atomic::AtomicBool;

fn small() -> TableRules {
    TableRules {
        pits: 3,
        empty_capture: true,
        sweep: Sweep::EmptySide,
    }
}

#[test]
fn names_and_headers_round_trip() {
    for sweep in Sweep::ALL {
        for empty_capture in [false, true] {
            let rules = TableRules {
                pits: 6,
                empty_capture,
                sweep,
            };
            let name = TableStore::file_name(rules, 23);
            assert_eq!(parse_file_name(&name), Some((rules, 23)), "{name}");
            let h = TableHeader {
                rules,
                k: 23,
                entries: 834_451_800,
                checksum: 0xdead_beef,
            };
            assert_eq!(TableHeader::parse(h.to_text().as_bytes()), Ok(h));
        }
    }
    assert_eq!(parse_file_name("endgame-p6-owner-k023.tbl"), None);
    assert_eq!(parse_file_name("endgame-p6-sideways-k3.tbl"), None);
}

/// The folder is checked before a build; the file of a save killed halfway is
/// reported, and deleted by the next build.
#[test]
fn a_bad_folder_fails_before_building_and_unfinished_saves_are_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a file");
    std::fs::write(&file, "").unwrap();
    let stop = AtomicBool::new(false);
    let built = AtomicBool::new(false);
    let store = TableStore::new(file.join("tables"));
    let e = store
        .open_or_build(
            small(),
            8,
            1,
            &|e| {
                if matches!(e, TableEvent::Building { .. }) {
                    built.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            },
            &stop,
        )
        .unwrap_err();
    assert!(
        !built.load(std::sync::atomic::Ordering::Relaxed),
        "built before checking the folder"
    );
    let text = e.to_string();
    assert!(text.contains("failed to create the folder"), "{text}");
    // The message holds the OS error once, and the error has no source to repeat it.
    assert!(std::error::Error::source(&e).is_none());

    let store = TableStore::new(dir.path().join("t"));
    std::fs::create_dir_all(store.dir()).unwrap();
    // No process has this id (above any pid_max).
    let stale = store
        .dir()
        .join(".endgame-p3-empty_side-ec-k8.tbl.999999999.tmp");
    std::fs::write(&stale, [0u8; 100]).unwrap();
    let mine = store.dir().join(format!(
        ".endgame-p3-empty_side-ec-k9.tbl.{}.tmp",
        std::process::id()
    ));
    std::fs::write(&mine, [0u8; 10]).unwrap();
    if cfg!(target_os = "linux") {
        assert_eq!(store.unfinished().unwrap(), [(stale.clone(), 100)]);
        store.open_or_build(small(), 8, 1, &|_| {}, &stop).unwrap();
        assert!(!stale.exists() && mine.exists());
        assert!(store.unfinished().unwrap().is_empty());
    }
}

#[test]
fn a_saved_table_loads_and_a_damaged_one_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let store = TableStore::new(dir.path().join("t"));
    let stop = AtomicBool::new(false);
    let built = store.open_or_build(small(), 8, 2, &|_| {}, &stop).unwrap();
    let loaded = store.load(small(), 8).unwrap();
    assert_eq!(built.bytes(), loaded.bytes());
    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].rules, listed[0].k), (small(), 8));

    // One flipped byte in the data: the checksum catches it.
    let path = store.path(small(), 8);
    let mut raw = std::fs::read(&path).unwrap();
    let last = raw.len() - 1;
    raw[last] ^= 1;
    std::fs::write(&path, &raw).unwrap();
    let err = store.load(small(), 8).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
    let damaged = std::sync::Mutex::new(0);
    let again = store
        .open_or_build(
            small(),
            8,
            1,
            &|e| {
                if matches!(e, TableEvent::Damaged { .. }) {
                    *damaged.lock().unwrap() += 1;
                }
            },
            &stop,
        )
        .unwrap();
    assert_eq!(*damaged.lock().unwrap(), 1);
    assert_eq!(again.bytes(), built.bytes());

    // A truncated file and a file whose header names other rules.
    std::fs::write(&path, &raw[..300]).unwrap();
    assert!(
        store
            .header(&path)
            .unwrap_err()
            .to_string()
            .contains("bytes")
    );
    let other = store.path(small(), 9);
    store.save(&built).unwrap();
    std::fs::copy(store.path(small(), 8), &other).unwrap();
    let err = store.header(&other).unwrap_err().to_string();
    assert!(err.contains("not what its name says"), "{err}");

    assert_eq!(store.clear().unwrap().0, 2);
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn the_best_table_within_a_budget_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = TableStore::new(dir.path());
    let stop = AtomicBool::new(false);
    for k in [4, 7] {
        store.open_or_build(small(), k, 1, &|_| {}, &stop).unwrap();
    }
    let len7 = table_len(small(), 7).unwrap();
    let (t, errors) = store.open_best(small(), len7).unwrap();
    assert!(errors.is_empty());
    assert_eq!(t.unwrap().max_seeds(), 7);
    let (t, _) = store.open_best(small(), len7 - 1).unwrap();
    assert_eq!(t.unwrap().max_seeds(), 4);
    let (t, _) = store.open_best(small(), 10).unwrap();
    assert!(t.is_none());
}
