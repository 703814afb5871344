//! The compile command a `render` or `preview` suggests when the manifest its instruction
//! names is missing or stale: the same options, so that the manifest it writes is the one
//! this render compiled ("a hint that suggests a command keeps the options it was given").

use std::ffi::OsString;

use clap::CommandFactory;

use crate::cli::args::Cli;

/// `curate` and `args` (a `render` or `preview` command line, the program left out) but for
/// the subcommand's word and the options only rendering takes (with their values), each
/// word quoted as a POSIX shell reads it back. Options are told by clap's own definitions:
/// every option a compile takes stays, in the order and the form it was given.
#[must_use]
pub fn compile_command(args: &[OsString]) -> String {
    let mut cli = Cli::command();
    cli.build();
    let compile_ids: Vec<&str> = cli.get_arguments().map(|a| a.get_id().as_str()).collect();
    let mut words = vec!["curate".to_owned()];
    let mut rest = args.iter().map(|a| a.to_string_lossy().into_owned());
    let mut sub: Option<&clap::Command> = None;
    while let Some(word) = rest.next() {
        if word == "--" {
            words.push(word);
            words.extend(rest.by_ref());
            break;
        }
        let scope = sub.unwrap_or(&cli);
        let (arg, inline) = if let Some(long) = word.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, false), |(n, _)| (n, true));
            let arg = scope.get_arguments().find(|a| a.get_long() == Some(name));
            (arg, value)
        } else if let Some(short) = word.strip_prefix('-').and_then(|s| s.chars().next()) {
            let arg = scope.get_arguments().find(|a| a.get_short() == Some(short));
            (arg, word.len() > 2)
        } else {
            if sub.is_none()
                && let Some(found) = cli.find_subcommand(&word)
            {
                // The subcommand's word: the compile has none.
                sub = Some(found);
                continue;
            }
            words.push(word);
            continue;
        };
        let takes_value = arg.is_some_and(|a| a.get_action().takes_values());
        let value = if takes_value && !inline {
            rest.next()
        } else {
            None
        };
        let rendering_only = arg.is_some_and(|a| !compile_ids.contains(&a.get_id().as_str()));
        if !rendering_only {
            words.push(word);
            words.extend(value);
        }
    }
    let quoted: Vec<String> = words.iter().map(|w| crate::report::shell_word(w)).collect();
    quoted.join(" ")
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
}
