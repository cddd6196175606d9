//! Expression reconstruction on the samples and the thesis' Fig. 8.10 / §8.7 examples.

use analyses::reconstruct::{reconstruct, ReconstructConfig};
use frontend::ir::InstKind;
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::path::PathBuf;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
}

/// Every memory access of `function` as `kind text: address` lines.
fn accesses(file: &str, function: &str) -> String {
    let unit = load_unit(&TranslationUnitInput::new(sample(file))).expect("sample loads");
    let program = &unit.lowered.program;
    let func = program.function(function).expect("function exists");
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let mut out = Vec::new();
    for b in func.blocks() {
        for &v in &func.block(b).insts {
            let (kind, addr) = match func.inst(v).kind {
                InstKind::Load { addr } => ("load", addr),
                InstKind::Store { addr, .. } => ("store", addr),
                _ => continue,
            };
            let exprs: Vec<String> = rec.of(addr).iter().map(|e| e.to_string()).collect();
            out.push(format!(
                "{kind} {}: {}",
                unit.snippet(func.inst(v).origin.span),
                exprs.join(" | ")
            ));
        }
    }
    out.join("\n")
}

/// The unit of C text `source`, written to a fresh file (tests run in parallel).
pub(crate) fn unit_of(source: &str) -> frontend::unit::Unit {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("reconstruct-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("fixture.c");
    std::fs::write(&file, source).unwrap();
    load_unit(&TranslationUnitInput::new(file)).expect("fixture loads")
}

fn check(file: &str, function: &str, expected: &[&str]) {
    let actual = accesses(file, function);
    for line in expected {
        assert!(
            actual.lines().any(|l| l == *line),
            "missing `{line}` in:\n{actual}"
        );
    }
}

#[test]
fn struct_matrix_add_addresses_go_through_the_nested_pointer() {
    check(
        "matrix_add_struct.c",
        "add",
        &[
            "load c->data: c",
            "load a[i * N + j]: a + 4*j + 4*N*i",
            "store c->data[i * N + j]: c->data + 4*j + 4*N*i",
        ],
    );
}

#[test]
fn get_index_is_reconstructed_per_call_site() {
    // Thesis §8.7: a[getIndex(i)] and b[getIndex(i*n)] differ once the callee is expanded.
    let text = accesses("get_index.c", "f");
    eprintln!("{text}");
    assert!(
        text.contains("a + 8*i + 16") || text.contains("a + 16 + 8*i"),
        "{text}"
    );
}

#[test]
fn every_fourth_add_indexes_relative_to_n() {
    check(
        "every_fourth_add.c",
        "every_fourth",
        &["load b[i + n]: b + 4*i + 4*n"],
    );
}

/// Reconstructions of the named locals of `function`, `name = {e1, e2}` per SSA value.
fn named_values(file: &str, function: &str) -> Vec<String> {
    let unit = load_unit(&TranslationUnitInput::new(sample(file))).expect("sample loads");
    let program = &unit.lowered.program;
    let func = program.function(function).expect("function exists");
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let mut out = Vec::new();
    for v in func.values() {
        let Some(name) = &func.inst(v).origin.var_name else {
            continue;
        };
        let set = rec.recurrence(v).unwrap_or(rec.of(v));
        let exprs: Vec<String> = set.iter().map(|e| e.to_string()).collect();
        out.push(format!("{name} = {{{}}}", exprs.join(", ")));
    }
    out
}

#[test]
fn figure_8_10_row_pointer_and_accumulator() {
    // Thesis Fig. 8.10: row = img + i*n (here in bytes: 4 per int), and the recursive
    // accumulator: the inner loop's `sum` is {sum on entry, α + sum} where α is the loaded
    // row element `img[i * n + j]` (the thesis' single loop shows it as {0, sum + α}).
    let values = named_values("reconstruction_example.c", "sum_rows");
    assert!(
        values.contains(&"row_idx = {i*n}".to_string()),
        "{values:#?}"
    );
    assert!(
        values.contains(&"row = {img + 4*i*n}".to_string()),
        "{values:#?}"
    );
    assert!(
        values.contains(&"val = {img[i * n + j]}".to_string()),
        "{values:#?}"
    );
    assert!(
        values.contains(&"sum = {sum, img[i * n + j] + sum#2}".to_string()),
        "{values:#?}"
    );
    assert!(
        values.contains(&"sum = {0, sum#2}".to_string()),
        "{values:#?}"
    );
}

/// Every value's expressions, symbol and recurrence, one line per value.
fn dump(func: &frontend::ir::Function, rec: &analyses::reconstruct::Reconstruction) -> String {
    let mut out = String::new();
    for b in func.blocks() {
        for &v in &func.block(b).insts {
            let exprs: Vec<String> = rec.of(v).iter().map(|e| e.to_string()).collect();
            let recurrence: Option<Vec<String>> = rec
                .recurrence(v)
                .map(|r| r.iter().map(|e| e.to_string()).collect());
            out.push_str(&format!(
                "{v:?}: {} | {:?} | {recurrence:?}\n",
                exprs.join(" ; "),
                rec.symbol(v)
            ));
        }
    }
    out
}

#[test]
fn sharing_callees_between_reconstructions_changes_nothing() {
    use analyses::reconstruct::{reconstruct_sharing, CalleeMemo};
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/callee_sharing.c");
    let unit = load_unit(&TranslationUnitInput::new(path)).expect("fixture loads");
    let program = &unit.lowered.program;
    let index = |name: &str| {
        program
            .functions
            .iter()
            .position(|f| f.name == name)
            .unwrap()
    };
    let deeper = ReconstructConfig {
        max_call_depth: 5,
        ..ReconstructConfig::default()
    };
    for (config, inlined) in [
        (ReconstructConfig::default(), "2*i + 6"),
        // `via_ww` -> `ww` -> `wx` -> `hw`: 3*(2*i + 1) + 5.
        (deeper, "6*i + 8"),
    ] {
        let alone: Vec<String> = program
            .functions
            .iter()
            .map(|f| dump(f, &reconstruct(program, f, &analyze_loops(f), &config)))
            .collect();
        assert!(
            alone[index("fill")].contains("2*i + 1"),
            "{}",
            alone[index("fill")]
        );
        let other = &alone[index("other")];
        assert!(other.contains(inlined), "missing {inlined}:\n{other}");
        // Both orders: the first reconstruction of a callee is made under different stacks.
        for reversed in [false, true] {
            let memo = CalleeMemo::new();
            let mut indices: Vec<usize> = (0..program.functions.len()).collect();
            if reversed {
                indices.reverse();
            }
            for k in indices {
                let f = &program.functions[k];
                let shared = reconstruct_sharing(program, f, &analyze_loops(f), &config, &memo);
                assert_eq!(
                    dump(f, &shared),
                    alone[k],
                    "{} (reversed: {reversed})",
                    f.name
                );
            }
        }
    }
}

/// `d[k]: expressions` for every load of an element of the local array `d` in `f`, whose
/// body is `body` (with `m`, `b`, `n` and `flag` as parameters).
fn reads_of_d(body: &str) -> Vec<String> {
    let source = format!(
        "void g(int *p);\nvoid f(double *m, const int *b, int n, int flag) {{\n{body}\n}}\n"
    );
    let unit = unit_of(&source);
    let program = &unit.lowered.program;
    let func = program.function("f").expect("function exists");
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let mut out = Vec::new();
    for b in func.blocks() {
        for &v in &func.block(b).insts {
            if !matches!(func.inst(v).kind, InstKind::Load { .. }) {
                continue;
            }
            let text = unit.snippet(func.inst(v).origin.span);
            if !text.starts_with("d[") {
                continue;
            }
            let exprs: Vec<String> = rec.of(v).iter().map(|e| e.to_string()).collect();
            out.push(format!("{text}: {}", exprs.join(" | ")));
        }
    }
    out
}

/// The loop of most of the cases below: it reads `d[0]`, `d[1]` and `d[2]`.
const READ_IN_LOOP: &str = "for (int i = 0; i < n; i++) m[i * d[1] + d[0] + d[2]] = 1.0;";

fn check_reads(body: &str, expected: &[&str]) {
    let reads = reads_of_d(body);
    assert_eq!(reads, expected, "{body}");
}

#[test]
fn elements_an_initializer_wrote_read_back_as_its_values() {
    // code_saturne's `db_size[2] = {b_size[0], b_size[0]*b_size[0]}`; the element the
    // list leaves out is zero (the initializer's memset).
    check_reads(
        &format!("int d[3] = {{b[0], b[0] * b[0]}};\n{READ_IN_LOOP}"),
        &["d[1]: b[0]^2", "d[0]: b[0]", "d[2]: 0"],
    );
}

#[test]
fn an_element_stored_in_the_iteration_before_its_read() {
    check_reads(
        "int d[3];\nfor (int i = 0; i < n; i++) { d[0] = i + 1; m[d[0]] = 1.0; }",
        &["d[0]: i + 1"],
    );
}

#[test]
fn elements_that_may_hold_another_value_stay_loads() {
    let symbols = ["d[1]: d[1]", "d[0]: d[0]", "d[2]: d[2]"];
    // The callee may write any element.
    check_reads(
        &format!("int d[3] = {{b[0], b[0] * b[0], 1}};\ng(d);\n{READ_IN_LOOP}"),
        &symbols,
    );
    // A second store, under a condition, of the element read.
    check_reads(
        &format!("int d[3] = {{b[0], b[0] * b[0], 1}};\nif (flag) d[1] = 1;\n{READ_IN_LOOP}"),
        &["d[1]: d[1]", "d[0]: b[0]", "d[2]: 1"],
    );
    // A store through a variable index may write any element.
    check_reads(
        &format!("int d[3] = {{b[0], b[0] * b[0], 1}};\nd[flag] = 2;\n{READ_IN_LOOP}"),
        &symbols,
    );
    // A wider store over two elements: neither reads back the 4-byte stores before it.
    check_reads(
        &format!("int d[4] = {{b[0], b[0] * b[0], 1, 2}};\n*(long *) &d[1] = 7;\n{READ_IN_LOOP}"),
        &["d[1]: d[1]", "d[0]: b[0]", "d[2]: d[2]"],
    );
    // Stored after the read in the iteration: the read sees the previous iteration's.
    check_reads(
        "int d[3] = {0, 0, 0};\nfor (int i = 0; i < n; i++) { m[d[0]] = 1.0; d[0] = i; }",
        &["d[0]: d[0]"],
    );
    // Stored in an inner loop, read after it: the read sees the inner loop's last store.
    check_reads(
        "int d[3];\nd[0] = 0;\nfor (int i = 0; i < n; i++) {\n\
           for (int j = 0; j < n; j++) d[0] = j;\n m[d[0]] = 1.0; }",
        &["d[0]: d[0]"],
    );
}

/// The symbols of a function in the order the reconstruction made them, the same in every
/// reconstruction: consumers read them in this order (the witness search's constraints
/// once followed a hash map's order, and the number of combinations it reported tried
/// changed from run to run).
#[test]
fn symbols_come_in_the_order_they_were_made() {
    let loads: Vec<String> = (0..40).map(|k| format!("b[{k}]")).collect();
    let source = format!(
        "void f(double *m, const int *b, int n, int flag) {{\n\
           for (int i = 0; i < n; i++) m[i] = {};\n\
         }}\n",
        loads.join(" + ")
    );
    let unit = unit_of(&source);
    let program = &unit.lowered.program;
    let func = program.function("f").expect("function exists");
    let forest = analyze_loops(func);
    let names = || -> Vec<String> {
        let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
        rec.symbols
            .iter()
            .map(|s| s.var.name().to_string())
            .collect()
    };
    let first = names();
    // Each reconstruction's maps hash with keys of their own: an order taken from them
    // would differ between these two.
    assert_eq!(first, names());
    let made: Vec<&String> = first.iter().filter(|n| n.starts_with("b[")).collect();
    assert_eq!(made, loads.iter().collect::<Vec<_>>(), "{first:?}");
}
