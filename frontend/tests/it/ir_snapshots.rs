//! IR snapshots of every sample: the printed CDFG of each function defined in the sample,
//! with its loop forest (phis, induction variables, trip counts), reviewed against the known
//! answers in the samples' header comments.

use frontend::ir::verify::verify_function;
use frontend::listing::print_function;
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::path::{Path, PathBuf};

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples")
}

#[test]
fn sample_ir_snapshots() {
    let mut samples: Vec<PathBuf> = std::fs::read_dir(samples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    samples.sort();
    assert!(!samples.is_empty());
    for path in samples {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let unit = load_unit(&TranslationUnitInput::new(&path)).expect("sample loads");
        assert!(
            unit.lowered.errors.is_empty(),
            "{name}: {:?}",
            unit.lowered.errors
        );
        let program = &unit.lowered.program;
        // Paths vary between checkouts: print just `file_name:line:col`.
        let locate = |span| {
            unit.resolve(span).map(|r| {
                let file = r.path.file_name().map(|f| f.to_string_lossy().into_owned());
                format!("{}:{}:{}", file.unwrap_or_default(), r.line, r.col)
            })
        };
        let mut text = String::new();
        for func in &program.functions {
            let in_sample = unit
                .resolve(func.name_span)
                .is_some_and(|r| !r.in_system_header && r.path == path);
            if !in_sample {
                continue;
            }
            let problems = verify_function(func);
            assert!(problems.is_empty(), "{name}: {}: {problems:#?}", func.name);
            let forest = analyze_loops(func);
            text.push_str(&print_function(program, func, Some(&forest), &locate));
            text.push('\n');
        }
        insta::assert_snapshot!(name, text);
    }
}

/// Lowering is deterministic: the phis that sealing a `switch`'s case blocks creates come
/// out in the same order in every run (they were sealed in hash-map order, and a report's
/// reasons followed that order; velvet's `commonNodeReads` printed differently each run).
#[test]
fn lowering_a_switch_in_a_loop_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("merge.c");
    std::fs::write(
        &file,
        "int merge(int *a, int *b, int *out, int na, int nb) {\n\
           int i = 0, j = 0, k = 0, x = a[0], y = b[0], *p = a, *q = b;\n\
           while (i < na && j < nb) {\n\
             switch ((x > y) - (x < y)) {\n\
             case -1: out[k++] = x; i++; x = p[i]; break;\n\
             case 0: out[k++] = x; i++; j++; x = p[i]; y = q[j]; break;\n\
             case 1: out[k++] = y; j++; y = q[j]; break;\n\
             case 2: p = q; break;\n\
             case 3: q = p; break;\n\
             default: k--;\n\
             }\n\
           }\n\
           return k;\n\
         }\n",
    )
    .unwrap();
    let print = || {
        let unit = load_unit(&TranslationUnitInput::new(&file)).expect("loads");
        let program = &unit.lowered.program;
        let locate = |_| None;
        program
            .functions
            .iter()
            .map(|f| print_function(program, f, None, &locate))
            .collect::<String>()
    };
    let first = print();
    for _ in 0..20 {
        assert_eq!(print(), first);
    }
}
