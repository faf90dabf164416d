//! Finding an engine's program as the operating system would run it, with a hint that says
//! what to run when it is not found or not executable.

use std::path::{Path, PathBuf};

/// Finds `cmd` as the operating system would run it (a name without `/` is looked up in
/// `PATH`; a relative path is taken from the current folder, else from `dir`, the engine's
/// working directory) and checks that it is executable. Returns the absolute path, or why
/// it cannot be run, with what to do.
pub(crate) fn find_program(cmd: &Path, dir: Option<&Path>) -> Result<PathBuf, String> {
    let has_slash = cmd.components().count() > 1 || cmd.is_absolute();
    let candidates: Vec<PathBuf> = if has_slash {
        let mut c = vec![cmd.to_path_buf()];
        if let Some(d) = dir
            && cmd.is_relative()
        {
            c.push(d.join(cmd));
        }
        c
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join(cmd)).collect())
            .unwrap_or_default()
    };
    let mut not_executable = None;
    for c in candidates {
        if c.is_file() {
            if is_executable(&c) {
                return Ok(std::path::absolute(&c).unwrap_or(c));
            }
            not_executable.get_or_insert(c);
        }
    }
    if let Some(file) = not_executable {
        return Err(format!(
            "is not executable: {}",
            not_executable_hint(&file, &cmd.display().to_string())
        ));
    }
    if let Some(hint) = words_hint(cmd, dir) {
        return Err(hint);
    }
    if has_slash {
        if let Some(folder) = [Some(cmd.to_path_buf()), dir.map(|d| d.join(cmd))]
            .into_iter()
            .flatten()
            .find(|p| p.is_dir())
        {
            return Err(format!(
                "is a folder, not a program: give the program inside it (cmd={}/NAME), or                  run it from there with dir={}",
                crate::record::shown_path(cmd),
                crate::record::shown_path(&folder)
            ));
        }
        return Err("does not exist".to_string());
    }
    // A file of that name here (or in the working directory): the user meant it.
    let near = [Some(Path::new(".")), dir]
        .into_iter()
        .flatten()
        .map(|d| d.join(cmd))
        .find(|p| p.is_file());
    let Some(file) = near else {
        return Err("was not found in PATH".to_string());
    };
    let local = format!("./{}", crate::record::shown_path(cmd));
    let mut reason = format!(
        "was not found in PATH (a name without / is looked up there): a file {} is in {}, \
         give it as {local}",
        crate::record::shown_path(cmd),
        if file.starts_with(".") {
            "the current folder".to_string()
        } else {
            format!(
                "the engine's folder {}",
                dir.map_or(".".into(), |d| d.display().to_string())
            )
        }
    );
    if !is_executable(&file) {
        reason.push_str(&format!(
            "; it is not executable: {}",
            not_executable_hint(&file, &local)
        ));
    }
    Err(reason)
}

/// A program given with its arguments in one value (`cmd=node myengine/engine.js`): when
/// its first word is a program, the spec that runs it, each argument an `arg=`.
fn words_hint(cmd: &Path, dir: Option<&Path>) -> Option<String> {
    let text = cmd.to_str()?;
    let mut words = text.split_whitespace();
    let program = words.next()?;
    let args: Vec<&str> = words.collect();
    if args.is_empty() || find_program(Path::new(program), dir).is_err() {
        return None;
    }
    let mut spec = format!("cmd={program}");
    for a in &args {
        spec.push_str(&format!(" arg={a}"));
    }
    Some(format!(
        "does not exist: cmd= names the program alone, and each of its arguments is an \
         arg=: give `{spec}` (in a configuration file: cmd = \"{program}\", args = [{}])",
        args.iter()
            .map(|a| format!("\"{a}\""))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// What to do with a program file that is not executable: `chmod +x`, or run it with its
/// interpreter (from its `#!` line or its extension).
fn not_executable_hint(file: &Path, shown: &str) -> String {
    let interpreter = interpreter_of(file).unwrap_or_else(|| "INTERPRETER".to_string());
    format!("run `chmod +x {shown}`, or give its interpreter: cmd={interpreter} arg={shown}")
}

/// The interpreter a script names in its `#!` line, else the usual one for its extension.
fn interpreter_of(file: &Path) -> Option<String> {
    let mut head = [0u8; 128];
    let n = std::fs::File::open(file)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    if let Some(line) = head.strip_prefix("#!").and_then(|h| h.lines().next()) {
        let mut words = line.split_whitespace();
        let first = words.next()?;
        // `#!/usr/bin/env python3` names the interpreter after env.
        let name = if first.ends_with("/env") {
            words.find(|w| !w.starts_with('-'))?
        } else {
            first.rsplit('/').next()?
        };
        return Some(name.to_string());
    }
    let by_extension = match file.extension()?.to_str()? {
        "py" => "python3",
        "js" | "mjs" => "node",
        "rb" => "ruby",
        "pl" => "perl",
        "sh" => "sh",
        "jar" => return Some("java arg=-jar".to_string()),
        _ => return None,
    };
    Some(by_extension.to_string())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_named_as_a_folder_not_as_missing() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("mine");
        std::fs::create_dir(&folder).unwrap();
        let e = find_program(&folder, None).unwrap_err();
        assert!(e.starts_with("is a folder, not a program"), "{e}");
        let e = find_program(Path::new("./mine"), Some(dir.path())).unwrap_err();
        assert!(e.starts_with("is a folder, not a program"), "{e}");
        let e = find_program(&dir.path().join("none"), None).unwrap_err();
        assert_eq!(e, "does not exist");
    }

    #[test]
    fn a_script_is_run_by_its_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let py = dir.path().join("eng.py");
        std::fs::write(&py, "print(1)\n").unwrap();
        assert_eq!(interpreter_of(&py).as_deref(), Some("python3"));
        let sh = dir.path().join("eng");
        std::fs::write(&sh, "#!/usr/bin/env -S node --x\n").unwrap();
        assert_eq!(interpreter_of(&sh).as_deref(), Some("node"));
        std::fs::write(&sh, "#!/bin/bash\n").unwrap();
        assert_eq!(interpreter_of(&sh).as_deref(), Some("bash"));
        let e = find_program(&sh, None).unwrap_err();
        assert!(e.contains("chmod +x") && e.contains("cmd=bash arg="), "{e}");
    }

    #[test]
    fn a_program_given_with_its_arguments_gets_the_spec_that_runs_it() {
        let e = find_program(Path::new("sh myengine/engine.sh -v"), None).unwrap_err();
        assert!(
            e.contains("give `cmd=sh arg=myengine/engine.sh arg=-v`")
                && e.contains(r#"cmd = "sh", args = ["myengine/engine.sh", "-v"]"#),
            "{e}"
        );
        // A first word that is no program: no such advice.
        let e = find_program(Path::new("no-such-program-x engine.js"), None).unwrap_err();
        assert_eq!(e, "was not found in PATH");
    }
}
