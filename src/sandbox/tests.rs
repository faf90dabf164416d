use super::*;

#[test]
fn the_results_folder_is_hidden_unless_the_engine_lives_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    std::fs::create_dir_all(out.join("engines")).unwrap();
    let real = std::fs::canonicalize(&out).unwrap();
    let elsewhere = Path::new("/bin/true");
    assert_eq!(folder_to_hide(&out, elsewhere, None), Some(real.clone()));
    assert_eq!(folder_to_hide(&out, Path::new("sh"), None), Some(real));
    assert_eq!(folder_to_hide(&out, &out.join("engines/e"), None), None);
    assert_eq!(
        folder_to_hide(&out, elsewhere, Some(&out.join("engines"))),
        None
    );
    assert_eq!(
        folder_to_hide(&dir.path().join("none"), elsewhere, None),
        None
    );
}

#[test]
fn the_warning_names_what_does_not_hold() {
    let full = Layers {
        namespaces: Namespaces::User,
        own_proc: true,
        read_only: true,
        landlock: true,
        landlock_scopes: true,
        network: true,
        seccomp: true,
    };
    assert!(full.is_full());
    assert_eq!(full.warning(), None);
    assert!(full.missing().is_empty());
    let bare = Layers::default();
    let w = bare.warning().unwrap();
    assert!(w.contains("read your terminal"), "{w}");
    assert!(w.contains("write wherever your user can"), "{w}");
    assert!(w.contains("signal your processes"), "{w}");
    let landlock_only = Layers {
        landlock: true,
        landlock_scopes: true,
        ..bare
    };
    let w = landlock_only.warning().unwrap();
    assert!(!w.contains("write wherever"), "{w}");
    assert!(!w.contains("signal"), "{w}");
    // Namespaces without Landlock: the promises hold, a layer is missing.
    let namespaces_only = Layers {
        landlock: false,
        landlock_scopes: false,
        ..full
    };
    assert_eq!(namespaces_only.warning(), None);
    assert_eq!(
        namespaces_only.missing(),
        ["Landlock (Linux 5.13)", "Landlock scopes (Linux 6.12)"]
    );
    // Namespaces but the network's: said, and missing.
    let shared_network = Layers {
        network: false,
        ..full
    };
    let w = shared_network.warning().unwrap();
    assert!(w.contains("share the machine's network"), "{w}");
    assert!(w.contains("connect to every port of 127.0.0.1"), "{w}");
    assert_eq!(
        shared_network.missing(),
        ["a network namespace of the engine's own"]
    );
    assert!(bare.warning().unwrap().contains("/proc/net"));
    // Everything but the filter against set-id files: said, and missing.
    let no_seccomp = Layers {
        seccomp: false,
        ..full
    };
    let w = no_seccomp.warning().unwrap();
    assert!(w.contains("set-user-ID and set-group-ID files"), "{w}");
    assert_eq!(
        no_seccomp.missing(),
        ["a seccomp filter against set-id files"]
    );
}
