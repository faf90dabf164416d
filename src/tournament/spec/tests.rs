use super::*;

#[test]
fn parses_cutechess_style_specs() {
    let s = EngineSpec::parse(&[
        "cmd=/bin/sh",
        "name=shell",
        "arg=-c",
        "arg=exit 0",
        "option.depth=8",
        "env.RUST_LOG=debug",
        "tc=10s+100ms",
    ])
    .unwrap();
    assert_eq!(s.name.as_deref(), Some("shell"));
    assert_eq!(s.args, ["-c", "exit 0"]);
    assert_eq!(s.options["depth"], OptionValue::Text("8".into()));
    assert_eq!(s.env["RUST_LOG"], "debug");
    assert_eq!(s.tc, Some("10s+100ms".parse().unwrap()));
    let r = s.resolve().unwrap();
    assert_eq!(r.command.program, PathBuf::from("/bin/sh"));
    assert_eq!(r.options, [("depth".to_string(), "8".to_string())]);

    assert_eq!(
        EngineSpec::parse(&["bogus=1"]),
        Err(SpecError::UnknownKey("bogus".into()))
    );
    assert!(matches!(
        EngineSpec::parse(&["tc=soon"]),
        Err(SpecError::BadValue { .. })
    ));
    assert!(matches!(
        EngineSpec::parse(&["cmd"]),
        Err(SpecError::NotKeyValue(_))
    ));
    assert_eq!(
        EngineSpec::parse(&["hard", "name=h"]),
        EngineSpec::parse(&["builtin=hard", "name=h"])
    );
    assert!(matches!(
        EngineSpec::parse(&["cmd=./x", "hard"]),
        Err(SpecError::BareArgument(_))
    ));
}

#[test]
fn a_quoted_spec_is_split_at_its_keys() {
    let s = EngineSpec::parse(&["cmd=/bin/sh arg=-c  arg=exit 0 name=x", "option.d=1"]).unwrap();
    assert_eq!(s.cmd, Some(PathBuf::from("/bin/sh")));
    assert_eq!(s.args, ["-c", "exit 0"]);
    assert_eq!(s.name.as_deref(), Some("x"));
    assert_eq!(s.options["d"], OptionValue::Text("1".into()));
    // Values with spaces stay whole, also a value that looks like key=value.
    let s = EngineSpec::parse(&["arg=a b", "arg=x y=z", "env.A=1 2 option.=3"]).unwrap();
    assert_eq!(s.args, ["a b", "x y=z"]);
    assert_eq!(s.env["A"], "1 2 option.=3");
    let s = EngineSpec::parse(&["cmd=x env.PATH_X=/a b option.style=sharp"]).unwrap();
    assert_eq!(s.env["PATH_X"], "/a b");
    assert_eq!(s.options["style"], OptionValue::Text("sharp".into()));
}

#[test]
fn builtins_run_this_executable() {
    let spec = EngineSpec::parse(&["builtin=hard", "option.depth=3"]).unwrap();
    let r = spec.resolve().unwrap();
    assert_eq!(spec.default_name(), "hard");
    assert_eq!(r.command.program, std::env::current_exe().unwrap());
    assert_eq!(r.command.args, ["engine", "hard"]);
}

#[test]
fn missing_and_non_executable_programs_are_refused() {
    let e = EngineSpec::parse(&["cmd=/no/such/engine"])
        .unwrap()
        .resolve()
        .unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("engine.txt");
    std::fs::write(&f, "not a program").unwrap();
    let e = EngineSpec::parse(&[format!("cmd={}", f.display())])
        .unwrap()
        .resolve()
        .unwrap_err();
    assert!(e.to_string().contains("not executable"), "{e}");
    let e = EngineSpec::parse(&["cmd=surely-no-such-program-here"])
        .unwrap()
        .resolve()
        .unwrap_err();
    assert!(e.to_string().contains("PATH"), "{e}");
    assert_eq!(EngineSpec::default().resolve(), Err(SpecError::NoCommand));
    // `sh` is found in PATH.
    assert!(EngineSpec::parse(&["cmd=sh"]).unwrap().resolve().is_ok());
}

#[test]
fn each_applies_to_every_engine_without_overriding() {
    let each = EngineSpec::parse(&["option.depth=4", "tc=50ms", "arg=--quiet"]).unwrap();
    let e = EngineSpec::parse(&["builtin=hard", "option.depth=6"])
        .unwrap()
        .with_defaults(&each);
    assert_eq!(e.options["depth"], OptionValue::Text("6".into()));
    assert_eq!(e.tc, Some("50ms".parse().unwrap()));
    assert_eq!(e.args, ["--quiet"]);
}

#[test]
fn repeated_names_are_numbered_and_chosen_names_win() {
    use NameSource::{Given, Hello, User};
    let mut names = vec!["first".to_string(), "first".into(), "hard".into()];
    dedupe_names(&mut names, &[Given, Given, Given]).unwrap();
    assert_eq!(names, ["first", "first-2", "hard"]);
    let mut names = vec!["a".to_string(), "a".into()];
    assert!(dedupe_names(&mut names, &[User, User]).is_err());
    // An engine that calls itself like another cannot take that name.
    let mut names = vec!["champion".to_string(), "champion".into(), "hard".into()];
    dedupe_names(&mut names, &[Hello, User, Hello]).unwrap();
    assert_eq!(names, ["champion-2", "champion", "hard"]);
    let mut names = vec!["hard".to_string(), "hard".into()];
    dedupe_names(&mut names, &[Hello, Given]).unwrap();
    assert_eq!(names, ["hard-2", "hard"]);
    // A name of the longest length stays a valid name once numbered (a resume reads it).
    let long = "x".repeat(crate::record::MAX_NAME_CHARS);
    let mut names = vec![long.clone(), long.clone(), long.clone()];
    dedupe_names(&mut names, &[Hello, Hello, Hello]).unwrap();
    assert_eq!(names[1], format!("{}-2", &long[..long.len() - 2]));
    assert_eq!(names[2], format!("{}-3", &long[..long.len() - 2]));
    for n in &names {
        crate::record::check_name(n).unwrap();
    }
}

#[test]
fn protocol_kgp_is_a_key_and_a_toml_field() {
    let s = EngineSpec::parse(&["cmd=sh", "protocol=kgp", "arg=agent.py"]).unwrap();
    assert_eq!(s.protocol, Some(EngineProtocol::Kgp));
    assert_eq!(s.resolve().unwrap().protocol, EngineProtocol::Kgp);
    let text = toml::to_string(&s).unwrap();
    assert!(text.contains("protocol = \"kgp\""), "{text}");
    assert_eq!(toml::from_str::<EngineSpec>(&text).unwrap(), s);
    // The default is kalaha, and is not written.
    let k = EngineSpec::parse(&["cmd=sh"]).unwrap();
    assert_eq!(k.resolve().unwrap().protocol, EngineProtocol::Kalaha);
    assert!(!toml::to_string(&k).unwrap().contains("protocol"));
    // --each protocol=kgp applies where an engine says nothing.
    let each = EngineSpec::parse(&["protocol=kgp"]).unwrap();
    assert_eq!(k.with_defaults(&each).protocol, Some(EngineProtocol::Kgp));
    let e = EngineSpec::parse(&["protocol=uci"]).unwrap_err();
    assert!(e.to_string().contains("kalaha or kgp"), "{e}");
    let e = EngineSpec::parse(&["builtin=hard", "protocol=kgp"])
        .unwrap()
        .resolve()
        .unwrap_err();
    assert!(e.to_string().contains("kalaha protocol"), "{e}");
    let e = EngineSpec::parse(&["cmd=sh", "protocol=kgp", "option.depth=3"])
        .unwrap()
        .resolve()
        .unwrap_err();
    assert!(e.to_string().contains("no options"), "{e}");
}

#[test]
fn specs_round_trip_through_toml() {
    let s = EngineSpec::parse(&["builtin=hard", "name=h", "option.depth=6", "tc=1s+10ms"]).unwrap();
    let text = toml::to_string(&s).unwrap();
    let back: EngineSpec = toml::from_str(&text).unwrap();
    assert_eq!(back, s);
    let typed: EngineSpec =
        toml::from_str("builtin = \"hard\"\noptions = { depth = 6, ponder = false }\n").unwrap();
    assert_eq!(typed.options["depth"], OptionValue::Int(6));
    assert_eq!(typed.options["ponder"].text(), "false");
}

#[test]
fn a_name_with_a_control_character_is_shown_escaped_once() {
    let e = EngineSpec::parse(&["builtin=hard", "name=a\u{1b}[31mb"])
        .unwrap()
        .resolve()
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(r#"engine name "a\u{1b}[31mb": "#),
        "{text}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains(r"\\u"), "{text}");
}

/// A mistyped built-in's name gets the nearest built-in, and only when it is near.
#[test]
fn a_mistyped_built_in_name_gets_the_nearest() {
    for (typed, meant) in [
        ("hadr", Some("hard")),
        ("medum", Some("medium")),
        ("Hard", Some("hard")),
        ("perfcet", Some("perfect")),
        ("grredy", Some("greedy")),
        ("rnd", None),
        ("myengine", None),
        ("./engine", None),
        ("", None),
    ] {
        assert_eq!(nearest_builtin(typed), meant, "{typed:?}");
    }
    let e = EngineSpec::parse(&["hadr"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "engine spec \"hadr\": there is no built-in engine \"hadr\": did you mean \
             builtin=hard? (built-ins: {})",
            crate::engines::BUILTIN_NAMES.join(", ")
        )
    );
    let e = EngineSpec::builtin("medum").resolve().unwrap_err();
    assert!(
        e.to_string().starts_with(
            "engine spec: unknown built-in engine \"medum\": did you mean builtin=medium?"
        ),
        "{e}"
    );
    // The reason alone, for a message that names the engine otherwise.
    assert!(e.reason().starts_with("unknown built-in engine"), "{e}");
}

/// An empty `cmd=` is refused as a spec, with what to write, not as a program "" that is
/// not in PATH.
#[test]
fn an_empty_cmd_says_what_to_give() {
    for words in [&["cmd="][..], &["cmd=  ", "name=x"][..]] {
        let e = EngineSpec::parse(words).unwrap_err().to_string();
        assert!(
            e.contains("give the program, e.g. cmd=./my-engine"),
            "{words:?}: {e}"
        );
    }
}

/// A quoted spec that begins with a bare word (`"hard arg=1"`) says which word is not
/// `KEY=VALUE` and the spec to write, not that "hard arg" is an unknown key.
#[test]
fn a_bare_first_word_in_a_quoted_spec_gets_the_spec_to_write() {
    let cases = [
        (
            "hard arg=1",
            "engine spec \"hard arg=1\": \"hard\" is not KEY=VALUE, and a spec quoted as one \
             word is split only before a KEY=: write \"builtin=hard arg=1\"",
        ),
        (
            "hadr  name=h",
            "engine spec \"hadr  name=h\": \"hadr\" is not KEY=VALUE, and a spec quoted as \
             one word is split only before a KEY=: write \"builtin=hard name=h\"",
        ),
        (
            "./x arg=-v",
            "engine spec \"./x arg=-v\": \"./x\" is not KEY=VALUE, and a spec quoted as one \
             word is split only before a KEY=: write \"cmd=./x arg=-v\"",
        ),
    ];
    for (spec, message) in cases {
        let e = EngineSpec::parse(&[spec]).unwrap_err();
        assert_eq!(e, SpecError::LooseWord(spec.into()));
        assert_eq!(e.to_string(), message);
    }
    // An unknown key without a space is still an unknown key.
    assert_eq!(
        EngineSpec::parse(&["bogus=1"]),
        Err(SpecError::UnknownKey("bogus".into()))
    );
}

/// Words joined with commas (`builtin=hard,name=x`) are refused with the spaced spec,
/// while a comma in a value that is not followed by a key stays in the value.
#[test]
fn comma_separated_words_get_the_spaced_spec() {
    for (spec, fixed) in [
        ("builtin=hard,name=x", "builtin=hard name=x"),
        ("hard,name=x", "hard name=x"),
        ("cmd=./x,arg=-v,tc=1s", "cmd=./x arg=-v tc=1s"),
        ("cmd=./x,option.depth=3", "cmd=./x option.depth=3"),
    ] {
        let e = EngineSpec::parse(&[spec]).unwrap_err();
        assert_eq!(e, SpecError::Commas(spec.into()));
        assert_eq!(
            e.to_string(),
            format!(
                "engine spec {spec:?}: engine spec words are separated by spaces, not commas: \
                 write \"{fixed}\""
            )
        );
    }
    let s = EngineSpec::parse(&["cmd=./x", "arg=a,b", "arg=--list=1,2,name"]).unwrap();
    assert_eq!(s.args, ["a,b", "--list=1,2,name"]);
}

/// A `cmd=` holding a whole command line gives no engine name to the message: it is about
/// the engine spec, not about an engine called `engine` (the file stem of its last word).
#[test]
fn a_command_line_in_cmd_is_not_an_engine_name() {
    let e = EngineSpec::parse(&["cmd=node ne/engine.js"])
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "engine spec: the program \"node ne/engine.js\" does not exist: cmd= names the \
             program alone"
        ),
        "{e}"
    );
    assert!(e.contains("give `cmd=node arg=ne/engine.js`"), "{e}");
    // A name given, or a program without spaces, is still named.
    let named = EngineSpec::parse(&["cmd=node ne/engine.js name=js"])
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(named.starts_with("engine js: the program"), "{named}");
    let plain = EngineSpec::parse(&["cmd=./no-such-engine"])
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(
        plain.starts_with("engine no-such-engine: the program \"./no-such-engine\""),
        "{plain}"
    );
    let dir = EngineSpec::parse(&["cmd=python3 e.py dir=/no/such/dir"])
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert_eq!(
        dir,
        "engine spec: the working directory \"/no/such/dir\" does not exist"
    );
}

/// A bare word after `cmd=` (`--engine cmd=python3 engine.py`, unquoted) is most likely the
/// program's argument: the message says to give it with `arg=`.
#[test]
fn a_bare_word_after_cmd_is_said_to_be_an_arg() {
    let e = EngineSpec::parse(&["cmd=python3", "eng/mine.py"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "engine spec \"eng/mine.py\": \"eng/mine.py\" is not KEY=VALUE: a program's arguments \
         are given with arg=, one each: write arg=eng/mine.py"
    );
    // Before any cmd=, a bare word is no argument of anything.
    let e = EngineSpec::parse(&["eng/mine.py"]).unwrap_err().to_string();
    assert!(e.contains("expected KEY=VALUE"), "{e}");
}

/// A bare word that is no built-in's near miss is said to be what it most likely is: a
/// path the program (`cmd=`), a plain word the name of a built-in that does not exist.
#[test]
fn a_bare_word_is_said_to_be_a_program_or_an_unknown_built_in() {
    let e = EngineSpec::parse(&["./eng.py"]).unwrap_err().to_string();
    assert!(e.contains("write cmd=./eng.py"), "{e}");
    let e = EngineSpec::parse(&["hardest"]).unwrap_err().to_string();
    assert!(
        e.contains("there is no built-in engine \"hardest\" (built-ins: random,"),
        "{e}"
    );
    let e = EngineSpec::parse(&["x:y"]).unwrap_err().to_string();
    assert!(e.contains("e.g. cmd=PROGRAM for a program"), "{e}");
}
