//! The compile command a `render` or `preview` suggests when the manifest its instruction
//! names is missing or stale: the same options, so that the manifest it writes is the one
//! this render compiled ("a hint that suggests a command keeps the options it was given").

use std::ffi::OsString;

use clap::CommandFactory;

use crate::cli::args::Cli;

/// One word of a command line as clap reads it, or one option with its value.
struct Token {
    /// The option's clap id; `None` for a positional word or an option curate does not know.
    id: Option<String>,
    /// The word as given (`--role`, `--role=x`, `-j2`, `fix`).
    word: String,
    /// The value given in a separate word, for an option that takes one.
    value: Option<String>,
    /// The subcommand's word.
    subcommand: bool,
}

impl Token {
    /// The words this token stands for, its value (inline or separate) replaced by `value`.
    fn with_value(&self, value: &str) -> Vec<String> {
        if self.value.is_some() {
            return vec![self.word.clone(), value.to_owned()];
        }
        match self.word.split_once('=') {
            Some((name, _)) if self.word.starts_with("--") => vec![format!("{name}={value}")],
            _ if !self.word.starts_with("--") && self.word.len() > 2 => {
                vec![format!("{}{value}", &self.word[..2])]
            }
            _ => vec![self.word.clone()],
        }
    }

    fn words(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.word).chain(self.value.as_ref())
    }
}

/// `args` (the program left out) as clap's definitions read them: which word is an option,
/// which its value, which the subcommand; every word after `--` is a positional one.
fn tokens(cli: &clap::Command, args: &[OsString]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = args.iter().map(|a| a.to_string_lossy().into_owned());
    let mut sub: Option<&clap::Command> = None;
    let plain = |word: String| Token {
        id: None,
        word,
        value: None,
        subcommand: false,
    };
    while let Some(word) = rest.next() {
        if word == "--" {
            out.push(plain(word));
            out.extend(rest.by_ref().map(plain));
            break;
        }
        let scope = sub.unwrap_or(cli);
        let (arg, inline) = if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = long
                .split_once('=')
                .map_or((long, false), |(n, _)| (n, true));
            (
                scope.get_arguments().find(|a| a.get_long() == Some(name)),
                inline,
            )
        } else if let Some(short) = word.strip_prefix('-').and_then(|s| s.chars().next()) {
            let arg = scope.get_arguments().find(|a| a.get_short() == Some(short));
            (arg, word.len() > 2)
        } else {
            if sub.is_none()
                && let Some(found) = cli.find_subcommand(&word)
            {
                sub = Some(found);
                out.push(Token {
                    subcommand: true,
                    ..plain(word)
                });
            } else {
                out.push(plain(word));
            }
            continue;
        };
        let takes_value = arg.is_some_and(|a| a.get_action().takes_values());
        out.push(Token {
            id: arg.map(|a| a.get_id().to_string()),
            word,
            value: if takes_value && !inline {
                rest.next()
            } else {
                None
            },
            subcommand: false,
        });
    }
    out
}

fn command_line<'a>(words: impl IntoIterator<Item = &'a String>) -> String {
    let quoted: Vec<String> = std::iter::once("curate")
        .chain(words.into_iter().map(String::as_str))
        .map(crate::report::shell_word)
        .collect();
    quoted.join(" ")
}

/// `curate` and `args` (a `render` or `preview` command line, the program left out) but for
/// the subcommand's word and the options only rendering takes (with their values), each
/// word quoted as a POSIX shell reads it back. Options are told by clap's own definitions:
/// every option a compile takes stays, in the order and the form it was given.
#[must_use]
pub fn compile_command(args: &[OsString]) -> String {
    let mut cli = Cli::command();
    cli.build();
    let compile_ids: Vec<&str> = cli.get_arguments().map(|a| a.get_id().as_str()).collect();
    let tokens = tokens(&cli, args);
    let kept = tokens
        .iter()
        .filter(|t| !t.subcommand && t.id.as_deref().is_none_or(|id| compile_ids.contains(&id)));
    command_line(kept.flat_map(Token::words))
}

/// `curate --profile <profile>` and `args` (this run's command line, the program left out)
/// without a `--profile` or `--changes-dir` of their own, the role's value passed through
/// `role`: the same run in another workflow's layout, no other option lost.
#[must_use]
pub fn with_profile(args: &[OsString], profile: &str, role: impl Fn(&str) -> String) -> String {
    let mut cli = Cli::command();
    cli.build();
    let mut words = vec!["--profile".to_owned(), profile.to_owned()];
    for t in tokens(&cli, args) {
        match t.id.as_deref() {
            Some("profile" | "changes_dir") => {}
            Some("role") => {
                let given = t
                    .value
                    .clone()
                    .or_else(|| t.word.split_once('=').map(|(_, v)| v.to_owned()));
                match given {
                    Some(v) => words.extend(t.with_value(&role(&v))),
                    None => words.extend(t.words().cloned()),
                }
            }
            _ => words.extend(t.words().cloned()),
        }
    }
    command_line(&words)
}

/// [`with_profile`] of this process's command line: the report's [`crate::report::Again`].
pub fn this_run_with_profile(profile: &str, role: &dyn Fn(&str) -> String) -> String {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    with_profile(&args, profile, role)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn again(line: &str) -> String {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        compile_command(&args)
    }

    #[test]
    fn the_subcommand_and_rendering_options_go_every_compile_option_stays() {
        assert_eq!(
            again("preview --role worker --change fix --owns command.go --related 4000"),
            "curate --role worker --change fix --owns command.go --related 4000"
        );
        assert_eq!(
            again(
                "-C repo render --template bundle -o out.md --role worker --lang=zh --change \
                 fix --max-file-bytes 100 --owns src/** --no-degrade -j2 --max-total-bytes=9"
            ),
            "curate -C repo --role worker --change fix --owns 'src/**' --no-degrade -j2"
        );
        // A global option's value is no subcommand.
        assert_eq!(
            again("-C preview preview --role r --change c --format json"),
            "curate -C preview --role r --change c --format json"
        );
        // Quoted as a shell reads it back.
        let args: Vec<OsString> = [
            "preview",
            "--role",
            "it's",
            "--change",
            "c d",
            "--manifest",
            "m",
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        assert_eq!(
            compile_command(&args),
            r"curate --role 'it'\''s' --change 'c d'"
        );
    }

    fn elsewhere(line: &str) -> String {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        with_profile(&args, "openspec", |r| format!("{r}-x"))
    }

    #[test]
    fn another_profile_replaces_this_ones_layout_and_maps_the_role_in_any_form() {
        assert_eq!(
            elsewhere("--profile curate --role worker --change fix --changes-dir d -j2"),
            "curate --profile openspec --role worker-x --change fix -j2"
        );
        assert_eq!(
            elsewhere("--profile=curate --role=explorer --change=add-2fa --changes-dir=x"),
            "curate --profile openspec --role=explorer-x --change=add-2fa"
        );
        // A global option's value and the subcommand's word are kept as given; so is every
        // word after `--`.
        assert_eq!(
            elsewhere("-C --role preview --role r --change c -- --role"),
            "curate --profile openspec -C --role preview --role r-x --change c -- --role"
        );
    }
}
