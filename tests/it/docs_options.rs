//! Every `--option` that README.md and docs/*.md name for a command exists in that command's
//! `warpwise COMMAND --help`, so the documentation cannot promise options the tool lacks.
//!
//! Options are read from code: fenced code blocks (one command line each, `\` continuations
//! joined) and inline code spans. In a code line or span, the options after `warpwise CMD`
//! (or after a command name that starts the span, as in `emit --check`) belong to CMD, up to
//! a `--` (the program's own arguments), a shell separator or the next command. Options in
//! a span that starts with them (`--format sarif`) belong to the commands the same paragraph
//! or table row names, or to any command when it names none. Options of other programs
//! (`cargo test --workspace`, `tools/pathological.py --check`) are not warpwise's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The commands whose `--help` is checked; `cc` takes the compiler's own arguments.
const COMMANDS: &[&str] = &[
    "analyze",
    "check",
    "ir",
    "profile",
    "instantiate",
    "emit",
    "validate",
    "explain",
    "completions",
    "man",
];

/// Where an option was found: file, line, and the command it was attributed to (`None`: any).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Mention {
    file: String,
    line: usize,
    command: Option<String>,
    option: String,
}

/// A piece of code from a Markdown file: its text, its line, and the commands its
/// paragraph (or table row) names.
struct Unit {
    text: String,
    line: usize,
    context: Vec<String>,
}

fn trim_token(token: &str) -> &str {
    token.trim_matches(|c: char| {
        matches!(
            c,
            '"' | '\'' | '`' | ',' | '.' | ';' | ':' | '(' | ')' | '[' | ']' | '{' | '}'
        )
    })
}

/// `--name` of a token such as `--format`, `--loop=a.c:3`, `[--strict]`, `--block`.
fn option_of(token: &str) -> Option<String> {
    let t = trim_token(token);
    let t = t.split('=').next().unwrap_or(t);
    let name = t.strip_prefix("--")?;
    let ok = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    ok.then(|| format!("--{name}"))
}

/// The warpwise command a token pair names: `warpwise analyze`, `target/release/warpwise emit`.
fn command_after(token: &str, next: Option<&&str>) -> Option<String> {
    let t = trim_token(token);
    if !(t == "warpwise" || t.ends_with("/warpwise")) {
        return None;
    }
    let cmd = trim_token(next?);
    (COMMANDS.contains(&cmd) || cmd == "cc").then(|| cmd.to_string())
}

/// The options of one code line or span, with the command each belongs to.
fn options_in(text: &str, context: &[String]) -> Vec<(Option<String>, String)> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut found = Vec::new();
    // `Some(cmd)`: options belong to cmd; `Bare`: to the context; `Other`: not warpwise's.
    enum State {
        Bare,
        Command(String),
        Other,
    }
    let mut skip = 0;
    // Leading `$` prompts and `NAME=value` environment assignments are not the program.
    while let Some(t) = tokens.get(skip) {
        let is_env = t.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        });
        if *t == "$" || is_env {
            skip += 1;
        } else {
            break;
        }
    }
    let mut state = match tokens.get(skip).map(|t| trim_token(t)) {
        Some(first) if first.starts_with("--") => State::Bare,
        Some(first) if COMMANDS.contains(&first) => State::Command(first.to_string()),
        Some(first) if first == "warpwise" || first.ends_with("/warpwise") => State::Other,
        Some(_) => State::Other,
        None => return found,
    };
    if matches!(state, State::Command(_)) {
        skip += 1;
    }
    let mut i = skip;
    while i < tokens.len() {
        let token = tokens[i];
        if let Some(cmd) = command_after(token, tokens.get(i + 1)) {
            state = if cmd == "cc" {
                State::Other
            } else {
                State::Command(cmd)
            };
            i += 2;
            continue;
        }
        if matches!(token, "--" | "|" | "||" | "&&" | ";" | ">" | "2>" | "<") {
            state = State::Other;
        } else if let Some(option) = option_of(token) {
            match &state {
                State::Command(cmd) => found.push((Some(cmd.clone()), option)),
                State::Bare => {
                    if context.is_empty() {
                        found.push((None, option));
                    } else {
                        for cmd in context {
                            found.push((Some(format!("{cmd}?")), option.clone()));
                        }
                    }
                }
                State::Other => {}
            }
        }
        i += 1;
    }
    found
}

/// The commands a paragraph or table row names (`warpwise CMD`).
fn commands_named(text: &str) -> Vec<String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut named: Vec<String> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let t = t.trim_start_matches(['`', '|', '"']);
        if let Some(cmd) = command_after(t, tokens.get(i + 1)) {
            if cmd != "cc" && !named.contains(&cmd) {
                named.push(cmd);
            }
        }
    }
    named
}

/// The code of a Markdown text: fenced lines and inline spans, with their contexts.
fn units(markdown: &str) -> Vec<Unit> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut units = Vec::new();
    let mut in_fence = false;
    let mut pending = String::new();
    let mut pending_line = 0;
    // Paragraph contexts: a table row is its own paragraph.
    let mut contexts = vec![Vec::new(); lines.len()];
    let mut start = 0;
    for i in 0..=lines.len() {
        // A blank line, a table row or a list item starts a new paragraph.
        let item = |l: &str| {
            let t = l.trim_start();
            t.starts_with("- ")
                || t.starts_with("* ")
                || t.split_once(". ")
                    .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        };
        let end = i == lines.len()
            || lines[i].trim().is_empty()
            || lines[i].starts_with('|')
            || (i > start && item(lines[i]));
        if end {
            let named = commands_named(&lines[start..i].join(" "));
            for c in contexts.iter_mut().take(i).skip(start) {
                *c = named.clone();
            }
            if i < lines.len() && lines[i].starts_with('|') {
                contexts[i] = commands_named(lines[i]);
            }
            // A list item belongs to the paragraph it starts.
            start = if i < lines.len() && !lines[i].trim().is_empty() && !lines[i].starts_with('|')
            {
                i
            } else {
                i + 1
            };
        }
    }
    for (n, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            // A comment after the command is prose.
            let code = line.split(" # ").next().unwrap_or(line);
            if pending.is_empty() {
                pending_line = n + 1;
            }
            pending.push_str(code.trim_end_matches('\\'));
            pending.push(' ');
            if !code.trim_end().ends_with('\\') {
                units.push(Unit {
                    text: std::mem::take(&mut pending),
                    line: pending_line,
                    context: Vec::new(),
                });
            }
            continue;
        }
        // Inline spans: text between pairs of backticks (a table cell's `\|` is a `|`).
        let text = line.replace("\\|", "|");
        for (k, span) in text.split('`').enumerate() {
            if k % 2 == 1 {
                units.push(Unit {
                    text: span.to_string(),
                    line: n + 1,
                    context: contexts[n].clone(),
                });
            }
        }
    }
    units
}

fn mentions(file: &str, markdown: &str) -> Vec<Mention> {
    let mut all = Vec::new();
    for unit in units(markdown) {
        for (command, option) in options_in(&unit.text, &unit.context) {
            all.push(Mention {
                file: file.to_string(),
                line: unit.line,
                command,
                option,
            });
        }
    }
    all
}

fn help(command: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .args([command, "--help"])
        .output()
        .expect("warpwise runs");
    assert!(out.status.success(), "warpwise {command} --help failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// Whether `help` lists `option` as a whole word.
fn lists(help: &str, option: &str) -> bool {
    help.match_indices(option).any(|(at, _)| {
        let after = help[at + option.len()..].chars().next();
        let before = help[..at].chars().next_back();
        !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

fn documentation() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The mentions whose option no matching `--help` lists.
fn missing(all: &[Mention], helps: &BTreeMap<&str, String>) -> Vec<String> {
    let mut wrong = BTreeSet::new();
    for m in all {
        if m.option == "--help" || m.option == "--version" {
            continue;
        }
        let ok = match m.command.as_deref() {
            // A command the paragraph names: any of them may have it (checked per paragraph
            // below by requiring one of them to list it).
            Some(cmd) if cmd.ends_with('?') => {
                let cmd = cmd.trim_end_matches('?');
                all.iter()
                    .filter(|o| o.file == m.file && o.line == m.line && o.option == m.option)
                    .filter_map(|o| o.command.as_deref())
                    .map(|c| c.trim_end_matches('?'))
                    .any(|c| helps.get(c).is_some_and(|h| lists(h, &m.option)))
                    || helps.get(cmd).is_some_and(|h| lists(h, &m.option))
            }
            Some(cmd) => helps.get(cmd).is_some_and(|h| lists(h, &m.option)),
            None => helps.values().any(|h| lists(h, &m.option)),
        };
        if !ok {
            let cmd = m
                .command
                .as_deref()
                .map(|c| format!("warpwise {}", c.trim_end_matches('?')))
                .unwrap_or_else(|| "any command".to_string());
            wrong.insert(format!(
                "{}:{}: `{}` is not in `{cmd} --help`",
                m.file, m.line, m.option
            ));
        }
    }
    wrong.into_iter().collect()
}

#[test]
fn every_documented_option_is_in_the_commands_help() {
    let helps: BTreeMap<&str, String> = COMMANDS.iter().map(|c| (*c, help(c))).collect();
    let mut all = Vec::new();
    for path in documentation() {
        let text = std::fs::read_to_string(&path).expect("readable");
        let name = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(&path)
            .display()
            .to_string();
        all.extend(mentions(&name, &text));
    }
    // The documentation names options of most commands; finding few means the reader broke.
    let commands: BTreeSet<&str> = all
        .iter()
        .filter_map(|m| m.command.as_deref())
        .filter(|c| !c.ends_with('?'))
        .collect();
    assert!(
        all.len() >= 40 && commands.len() >= 5,
        "only {} option mentions for {commands:?} were found",
        all.len()
    );
    let wrong = missing(&all, &helps);
    assert!(
        wrong.is_empty(),
        "options the documentation names that the tool does not have:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn an_option_a_command_lacks_is_reported() {
    let helps: BTreeMap<&str, String> = ["emit", "analyze"].iter().map(|c| (*c, help(c))).collect();
    let doc = "Port: `warpwise emit a.c --target openmp --function F -o out`.\n\n\
               ```sh\nwarpwise analyze src/ \\\n  --no-such-option\n```\n\n\
               | `warpwise analyze` | `--format sarif`, `--strict` |\n\n\
               - `warpwise emit a.c --loop a.c:3 -o out` writes a kernel.\n\
               - `--format sarif` is for code scanning;\n  \
               `--bogus` is not an option.\n";
    let all = mentions("doc.md", doc);
    let wrong = missing(&all, &helps);
    assert_eq!(
        wrong,
        [
            "doc.md:12: `--bogus` is not in `any command --help`",
            "doc.md:1: `--function` is not in `warpwise emit --help`",
            "doc.md:4: `--no-such-option` is not in `warpwise analyze --help`",
            "doc.md:8: `--strict` is not in `warpwise analyze --help`",
        ],
        "{all:?}"
    );
}

#[test]
fn options_of_other_programs_are_not_warpwise_options() {
    let doc = "Run `cargo test --workspace` and `tools/pathological.py --check --ww BIN`;\n\
               `CC=\"warpwise cc\" make -j --keep-going`, then\n\n\
               ```sh\nWARPWISE_X=1 cargo test --test it cuda_gpu::\n\
               warpwise validate a.c --loop a.c:3 -- --input x\n```\n";
    let found: Vec<(Option<String>, String)> = mentions("doc.md", doc)
        .into_iter()
        .map(|m| (m.command, m.option))
        .collect();
    assert_eq!(
        found,
        [(Some("validate".to_string()), "--loop".to_string())]
    );
}
