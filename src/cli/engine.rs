//! `kalaha engine`: runs a built-in engine on stdin/stdout with the engine protocol.

use super::{CliError, CliResult};
use crate::engines::{BUILTIN_NAMES, Player, builtin, serve};
use crate::protocol::OptionKind;

/// Run a built-in engine, speaking the engine protocol (protocol.md) on stdin and stdout.
///
/// Options can be given after the name as `--NAME VALUE` or `--NAME=VALUE`; they are the
/// same options the engine declares in its `hello`, and the referee can still change them
/// with `option` messages.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Engines and their options:
  random   seed (0)                      a random legal move
  first                                  the lowest-numbered legal pit
  easy     seed (0), miss (50, percent)  greedy that often overlooks captures
  greedy                                 the largest store gain this turn
  medium   depth (3)                     a few sowings of lookahead on the stores
  hard     depth (0 = no limit), hash_mb (16, at most 1024)
                                         iterative-deepening alpha-beta within the time given
  perfect  depth (0), hash_mb (64, at most 1024)
                                         the exact solver when it finishes in time, else hard

Example:
  kalaha engine hard --depth 12 --hash_mb 64
  kalaha engine random --seed=7")]
pub struct Args {
    /// The engine: random, first, easy, greedy, medium, hard or perfect.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Engine options, `--NAME VALUE` or `--NAME=VALUE`.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "--OPTION VALUE"
    )]
    pub options: Vec<String>,
}

pub(crate) fn run(args: Args) -> CliResult {
    let Some(mut player) = builtin(&args.name) else {
        return Err(CliError::input_msg(format!(
            "unknown engine {:?}: the built-in engines are {}",
            args.name,
            BUILTIN_NAMES.join(", ")
        )));
    };
    apply_options(player.as_mut(), &args.options).map_err(CliError::input_msg)?;
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    serve(player.as_mut(), stdin.lock(), stdout.lock())?;
    Ok(super::exit::OK)
}

/// Applies `--NAME VALUE` / `--NAME=VALUE` pairs, converting each value to the option's
/// declared type.
fn apply_options(player: &mut dyn Player, tokens: &[String]) -> Result<(), String> {
    let declared = player.options();
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        let Some(flag) = token.strip_prefix("--") else {
            return Err(format!(
                "unexpected argument {token:?}: options are written --NAME VALUE"
            ));
        };
        let (name, text) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => {
                let value = tokens
                    .get(i + 1)
                    .ok_or_else(|| format!("option --{flag} needs a value"))?;
                i += 1;
                (flag.to_string(), value.clone())
            }
        };
        i += 1;
        let name = name.replace('-', "_");
        let Some(opt) = declared.iter().find(|o| o.name == name) else {
            let names: Vec<String> = declared.iter().map(|o| format!("--{}", o.name)).collect();
            return Err(if names.is_empty() {
                format!("engine {} has no options (got --{name})", player.name())
            } else {
                format!(
                    "engine {} has no option --{name}: its options are {}",
                    player.name(),
                    names.join(", ")
                )
            });
        };
        let value = match &opt.kind {
            OptionKind::Int { .. } => text
                .parse::<i64>()
                .map(serde_json::Value::from)
                .map_err(|_| format!("option --{name}: expected an integer, got {text:?}"))?,
            OptionKind::Bool { .. } => text
                .parse::<bool>()
                .map(serde_json::Value::from)
                .map_err(|_| format!("option --{name}: expected true or false, got {text:?}"))?,
            OptionKind::String { .. } | OptionKind::Choice { .. } => serde_json::Value::from(text),
        };
        player.set_option(&name, &value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_parse_in_both_forms_and_errors_name_the_choices() {
        let mut hard = builtin("hard").unwrap();
        apply_options(hard.as_mut(), &tokens("--depth 6 --hash_mb=8")).unwrap();
        apply_options(hard.as_mut(), &tokens("--hash-mb 2")).unwrap();
        let e = apply_options(hard.as_mut(), &tokens("--speed 3")).unwrap_err();
        assert!(e.contains("--depth, --hash_mb"), "{e}");
        let e = apply_options(hard.as_mut(), &tokens("--depth six")).unwrap_err();
        assert!(e.contains("expected an integer"), "{e}");
        let e = apply_options(hard.as_mut(), &tokens("--depth")).unwrap_err();
        assert!(e.contains("needs a value"), "{e}");
        let e = apply_options(hard.as_mut(), &tokens("--depth 999")).unwrap_err();
        assert!(e.contains("between 0 and 250"), "{e}");
        let e = apply_options(hard.as_mut(), &tokens("depth 3")).unwrap_err();
        assert!(e.contains("unexpected argument"), "{e}");
        let mut first = builtin("first").unwrap();
        let e = apply_options(first.as_mut(), &tokens("--seed 1")).unwrap_err();
        assert!(e.contains("no options"), "{e}");
    }
}
