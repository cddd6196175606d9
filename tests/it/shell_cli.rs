//! `warpwise completions` and `warpwise man`: generated from the same clap definition the
//! binary parses with, checked for what a shell and `man` need.

use std::process::{Command, Output};

fn warpwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .args(args)
        .output()
        .expect("warpwise runs")
}

fn stdout_of(args: &[&str]) -> String {
    let out = warpwise(args);
    assert!(
        out.status.success(),
        "warpwise {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn bash_completion_is_a_valid_script_that_knows_every_subcommand_and_option() {
    let script = stdout_of(&["completions", "bash"]);
    for word in [
        "analyze",
        "profile",
        "instantiate",
        "emit",
        "validate",
        "--aliasing",
        "--format",
    ] {
        assert!(script.contains(word), "no `{word}` in the bash completion");
    }
    // bash itself parses it.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("warpwise.bash");
    std::fs::write(&path, &script).expect("write");
    let check = Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .expect("bash runs");
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn zsh_and_fish_completions_name_the_tool() {
    let zsh = stdout_of(&["completions", "zsh"]);
    assert!(
        zsh.starts_with("#compdef warpwise"),
        "{}",
        &zsh[..80.min(zsh.len())]
    );
    assert!(zsh.contains("--work-budget"));
    let fish = stdout_of(&["completions", "fish"]);
    assert!(fish.contains("complete -c warpwise"));
    assert!(fish.contains("analyze"));
}

#[test]
fn the_manual_page_is_roff_with_every_subcommand() {
    let page = stdout_of(&["man"]);
    assert!(
        page.contains(".TH warpwise 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    for sub in ["analyze", "profile", "emit", "validate", "completions"] {
        assert!(page.contains(sub), "no `{sub}` in the manual page");
    }
    let analyze = stdout_of(&["man", "analyze"]);
    assert!(analyze.contains(".TH warpwise-analyze 1"));
    // roff escapes the dashes of options.
    assert!(analyze.contains("\\-\\-aliasing"), "{analyze}");
}

#[test]
fn an_unknown_subcommand_page_is_a_usage_error() {
    let out = warpwise(&["man", "no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no subcommand `no-such-command`"), "{err}");
    let out = warpwise(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}
