//! Hostile input, stable-Rust fuzzing: the bundled samples mutated at random (ranges
//! deleted, duplicated or moved, C tokens and extreme literals inserted) go through the
//! whole static pipeline (preprocess, parse, lower, analyse, serialize), which must answer
//! each with reports or diagnostics and never panic. proptest shrinks a failure to a small
//! mutation and keeps its seed in `proptest-regressions/`.

use advisor::analyze::{analyze_unit, Filter};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use proptest::prelude::*;
use std::path::PathBuf;

const TOKENS: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "*",
    "&",
    "-",
    "+",
    "/",
    "%",
    "=",
    "==",
    "<",
    "<=",
    ">>",
    "<<",
    "?",
    ":",
    "->",
    ".",
    "for",
    "while",
    "do",
    "if",
    "else",
    "goto L;",
    "L:",
    "return",
    "break;",
    "continue;",
    "int",
    "long",
    "double",
    "char",
    "unsigned",
    "struct s",
    "static",
    "const",
    "volatile",
    "restrict",
    "0",
    "1",
    "-1",
    "2147483647",
    "9223372036854775807",
    "0x7fffffffffffffff",
    "1e308",
    "i",
    "j",
    "n",
    "a[i]",
    "a[-1]",
    "i++",
    "--i",
    "sizeof(int)",
    "(double)",
    "\"str\"",
    "'c'",
    "#define M(x) x\n",
    "\n#if 0\n",
    "\n#endif\n",
    "...",
    "__asm__",
    "_Complex",
    "typedef int T;",
    "switch (i) { case 0: ; }",
];

fn samples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("samples")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read_to_string(&p).expect("sample"),
            )
        })
        .collect();
    out.sort();
    out
}

/// One edit at a position given as a fraction of the text.
#[derive(Clone, Debug)]
enum Edit {
    Delete(f64, usize),
    Duplicate(f64, usize),
    Insert(f64, usize),
    Move(f64, f64, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0.0..1.0f64, 1..200usize).prop_map(|(at, n)| Edit::Delete(at, n)),
        (0.0..1.0f64, 1..400usize).prop_map(|(at, n)| Edit::Duplicate(at, n)),
        (0.0..1.0f64, 0..TOKENS.len()).prop_map(|(at, t)| Edit::Insert(at, t)),
        (0.0..1.0f64, 0.0..1.0f64, 1..300usize).prop_map(|(a, b, n)| Edit::Move(a, b, n)),
    ]
}

/// A byte position at `at` of `text`, moved back to a character boundary.
fn position(text: &str, at: f64) -> usize {
    let mut p = ((text.len() as f64) * at) as usize;
    p = p.min(text.len());
    while !text.is_char_boundary(p) {
        p -= 1;
    }
    p
}

fn apply(text: &mut String, e: &Edit) {
    match *e {
        Edit::Delete(at, n) => {
            let start = position(text, at);
            let end = position(
                text,
                ((start + n) as f64 / text.len().max(1) as f64).min(1.0),
            );
            text.replace_range(start..end.max(start), "");
        }
        Edit::Duplicate(at, n) => {
            let start = position(text, at);
            let end = position(
                text,
                ((start + n) as f64 / text.len().max(1) as f64).min(1.0),
            );
            let piece = text[start..end.max(start)].to_string();
            text.insert_str(start, &piece);
        }
        Edit::Insert(at, t) => {
            let p = position(text, at);
            text.insert_str(p, &format!(" {} ", TOKENS[t]));
        }
        Edit::Move(a, b, n) => {
            let start = position(text, a);
            let end = position(
                text,
                ((start + n) as f64 / text.len().max(1) as f64).min(1.0),
            );
            let piece = text[start..end.max(start)].to_string();
            text.replace_range(start..end.max(start), "");
            let to = position(text, b);
            text.insert_str(to, &piece);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mutated_samples_get_reports_or_diagnostics(
        which in 0usize..64,
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let all = samples();
        let (name, original) = &all[which % all.len()];
        let mut text = original.clone();
        for e in &edits {
            apply(&mut text, e);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        std::fs::write(&path, &text).expect("write");
        // An abort (a stack overflow) leaves proptest no failure to shrink or save:
        // `WARPWISE_KEEP_LAST_INPUT=path` keeps the input being analysed.
        if let Some(keep) = std::env::var_os("WARPWISE_KEEP_LAST_INPUT") {
            std::fs::write(keep, &text).expect("keep the input");
        }
        // A failure to load is a diagnostic (with a location), never a panic.
        if let Ok(unit) = load_unit(&TranslationUnitInput::new(path)) {
            let reports = analyze_unit(&unit, &Filter::default());
            let yaml = serde_yaml::to_string(&reports).expect("reports serialize");
            prop_assert!(yaml.len() < 50_000_000);
        }
    }
}
