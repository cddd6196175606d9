//! A recipe's kernel reads its bounds from its arguments: a bound that names what the kernel
//! takes no argument for (a field, a global, a legend's value, the value a loop continues
//! from) is computed on the host where the loop starts and passed, and a triangular nest's
//! grid is sized by its inner trip count's largest value. Its body writes each array as
//! its device pointer, which the recipe names for each name the loop gives the array.

use crate::common::{text, warpwise};

/// The recipes of `input` (a file or a directory), one text each.
fn recipes(input: &str) -> Vec<String> {
    let out = warpwise(&["analyze", input, "--format", "text"]);
    assert!(out.status.success(), "{}", text(&out));
    let all = String::from_utf8(out.stdout).unwrap();
    let mut recipes: Vec<String> = Vec::new();
    for line in all.lines() {
        if !line.starts_with(' ') && line.contains(": loop in `") {
            recipes.push(String::new());
        }
        if let Some(r) = recipes.last_mut() {
            r.push_str(line);
            r.push('\n');
        }
    }
    recipes
        .into_iter()
        .filter(|r| r.contains("__global__"))
        .collect()
}

/// The identifiers of `text` that are not called (`min(`) and not numbers.
fn names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let called = text[i..].trim_start().starts_with('(');
            if !b[start].is_ascii_digit() && !called {
                out.push(text[start..i].to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The names a kernel's signature declares (`d_m_cells` of `const int (*d_m_cells)[2]`).
fn parameters(signature: &str) -> Vec<String> {
    let params = &signature[signature.find('(').unwrap() + 1..signature.rfind(')').unwrap()];
    params
        .split(", ")
        .filter_map(|p| {
            let declarator = p.split("/*").next().unwrap();
            // The name is the last identifier before a declarator's dimensions.
            let outside = declarator.split('[').next().unwrap();
            names(outside).last().cloned()
        })
        .collect()
}

/// What a recipe's kernel may read in its guard and what its launch may size the grid by:
/// the signature's parameters, the indices and variables step 2 computes, and a grid size a
/// following line defines.
fn undeclared(recipe: &str) -> Vec<String> {
    let signature = recipe
        .lines()
        .find(|l| l.contains("__global__ void"))
        .expect("a signature");
    let mut known = parameters(signature);
    // The host sizes the grid: by arguments, and by names a line after it defines.
    let mut on_host = known.clone();
    for line in recipe.lines() {
        if let Some(rest) = line.trim_start().strip_prefix('`') {
            on_host.extend(rest.split('`').next().map(str::to_string));
        }
    }
    // The kernel also reads what step 2 computes from the thread's index.
    for line in recipe.lines() {
        for assignment in line.split(';') {
            if let Some((lhs, _)) = assignment.split_once(" = ") {
                known.extend(names(lhs).last().cloned());
            }
        }
    }
    let ignored = [
        "or",
        "blockIdx",
        "blockDim",
        "threadIdx",
        "x",
        "y",
        "block",
        "grid",
    ];
    let unknown = |read: Vec<String>, known: &[String]| -> Vec<String> {
        read.into_iter()
            .filter(|n| !known.contains(n) && !ignored.contains(&n.as_str()))
            .collect()
    };
    let mut missing = Vec::new();
    for line in recipe.lines() {
        if let Some(guard) = line.split("return if ").nth(1) {
            missing.extend(unknown(names(guard.trim_end_matches('.')), &known));
        }
        if let Some(grid) = line.split("dim3 grid(").nth(1) {
            missing.extend(unknown(names(grid), &on_host));
        }
        if let Some(launch) = line.split("<<<").nth(1) {
            missing.extend(unknown(
                names(launch.split(">>>").next().unwrap()),
                &on_host,
            ));
        }
    }
    missing.sort();
    missing.dedup();
    missing
}

/// The pairs of a recipe's line saying what the body writes for each array: (device
/// pointer, the body's name).
fn body_names(recipe: &str) -> Vec<(String, String)> {
    let Some(line) = recipe
        .lines()
        .find_map(|l| l.split("write each array as its device pointer: ").nth(1))
    else {
        return Vec::new();
    };
    line.trim_end_matches('.')
        .split(", `")
        .map(|pair| {
            let mut quoted = pair.split('`').filter(|p| !p.is_empty() && *p != " for ");
            let device = quoted.next().unwrap().to_string();
            let body = quoted.next().unwrap().to_string();
            (device, body)
        })
        .collect()
}

/// Every recipe of `input` declares what its guard and launch read; the loops at the lines of
/// `expected` compute on the host what each says (`""`: nothing).
fn check(input: &str, expected: &[(u32, &str)]) {
    let recipes = recipes(input);
    assert!(!recipes.is_empty(), "{input}: no recipe");
    for r in &recipes {
        let missing = undeclared(r);
        assert!(
            missing.is_empty(),
            "reads {missing:?} it does not declare:\n{r}"
        );
        let signature = r.lines().find(|l| l.contains("__global__")).unwrap();
        // Every parameter declares a name, as C does (`int (*cells)[2]`, not `int (*)[2] cells`).
        assert!(!signature.contains("(*)"), "{signature}");
        // A name the body writes for an array is its device pointer, not a parameter too.
        let params = parameters(signature);
        for (device, body) in body_names(r) {
            assert!(
                params.contains(&device),
                "{device} is not a parameter:\n{r}"
            );
            assert!(
                !params.contains(&body),
                "`{body}` is both the body's name for `{device}` and a parameter:\n{r}"
            );
        }
    }
    for (line, hosted) in expected {
        let title = format!(":{line}:");
        let r = recipes
            .iter()
            .find(|r| r.lines().next().unwrap().contains(&title))
            .unwrap_or_else(|| panic!("no recipe for line {line}"));
        let got = r
            .lines()
            .find_map(|l| l.split("and pass to the kernel: ").nth(1))
            .unwrap_or("");
        assert_eq!(got, *hosted, "line {line}:\n{r}");
    }
}

#[test]
fn bounds_the_kernel_cannot_read_are_computed_on_the_host() {
    check(
        "tests/fixtures/recipes/bounds.c",
        &[
            (13, "long y_trips = img->height; long x_trips = img->width;"),
            (14, "long x_trips = img->width;"),
            (20, "long i_trips = limit;"),
            (29, "long k_trips = n_29;"),
            (38, "long c_start = c; long c_trips = -c + n;"),
            (44, ""),
            (45, ""),
        ],
    );
}

#[test]
fn a_triangular_nest_sizes_its_grid_by_the_largest_inner_count() {
    let recipes = recipes("tests/fixtures/recipes/bounds.c");
    let r = recipes.iter().find(|r| r.contains(":44:3:")).unwrap();
    assert!(r.contains("return if kx >= i or ky >= n."), "{r}");
    assert!(
        r.contains("dim3 grid((j_trips_max + 31)/32, (n + 7)/8)"),
        "{r}"
    );
    assert!(r.contains("`j_trips_max` is the largest of `i`"), "{r}");
}

#[test]
fn a_bound_that_differs_between_threads_stays_in_the_kernel() {
    let recipes = recipes("tests/fixtures/recipes/rows.c");
    let r = recipes.iter().find(|r| r.contains(":11:3:")).unwrap();
    // The kernel reads the rows' bounds from its copy of `A->i`; the host sizes the grid.
    assert!(r.contains("j = d_A_i[i] + ky;"), "{r}");
    assert!(r.contains("ky >= d_A_i[i + 1] - d_A_i[i]."), "{r}");
    assert!(
        r.contains("`j_trips_max` is the largest of `A->i[i + 1] - A->i[i]`"),
        "{r}"
    );
    assert!(
        r.contains("and pass to the kernel: long i_trips = A->num_rows;\n"),
        "{r}"
    );
}

#[test]
fn every_sample_and_fixture_recipe_declares_what_it_reads() {
    check("samples", &[]);
    for dir in ["cuda", "names", "openmp", "recipes"] {
        check(&format!("tests/fixtures/{dir}"), &[]);
    }
}

/// The recipe of the loop at `line` of `input` says the body writes each of `expected`'s
/// arrays by the name given (device pointer, the body's name), in that order, and its
/// signature has none of `not_passed`.
fn check_body(input: &str, line: u32, expected: &[(&str, &str)], not_passed: &[&str]) {
    let recipes = recipes(input);
    let title = format!(":{line}:");
    let r = recipes
        .iter()
        .find(|r| r.lines().next().unwrap().contains(&title))
        .unwrap_or_else(|| panic!("no recipe for line {line}"));
    let got = body_names(r);
    let got: Vec<(&str, &str)> = got.iter().map(|(d, b)| (d.as_str(), b.as_str())).collect();
    assert_eq!(got, expected, "line {line}:\n{r}");
    let signature = r.lines().find(|l| l.contains("__global__")).unwrap();
    for name in not_passed {
        assert!(!signature.contains(name), "`{name}` is passed:\n{r}");
    }
}

#[test]
fn pointers_copied_from_fields_are_the_fields_device_pointers() {
    check_body(
        "tests/fixtures/recipes/copies.c",
        9,
        &[
            ("d_m_flag", "m->flag"),
            ("d_m", "m"),
            ("d_m_cells", "cells"),
            ("d_m_vol", "vol"),
            ("d_out", "out"),
        ],
        &[" vol", "*cells"],
    );
    // An array of structures: the body indexes the pointer, then takes members.
    check_body(
        "tests/fixtures/recipes/copies.c",
        19,
        &[("d_p", "p"), ("d_cx", "cx")],
        &[],
    );
    // A pointer whose only use is a field the body renames whole is no parameter either.
    check_body(
        "tests/fixtures/recipes/copies.c",
        27,
        &[("d_m_flag", "q->flag"), ("d_out", "out")],
        &["*q"],
    );
    // A copy the loop only hands to a callee: the report's `holds` names its array.
    check_body(
        "tests/fixtures/recipes/copies.c",
        37,
        &[("d_m", "m"), ("d_out", "out"), ("d_m_vol", "vol")],
        &["*vol"],
    );
    // The load of a pointer the body renames whole (`c->data` in `c->data[i]`) leaves no
    // use of the structure.
    check_body(
        "samples/matrix_add_struct.c",
        38,
        &[("d_c_data", "c->data"), ("d_a", "a"), ("d_b", "b")],
        &[],
    );
}
