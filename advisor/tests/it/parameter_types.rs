//! Every kernel parameter carries the C type the source declares, also for a pointer the loop
//! itself steps (`*Fout = *f; ++Fout`, kissfft's `kf_work`), which was reported as `?`.

use crate::common;

/// The parameters `(name, type)` of the loop marked `/* LOOP */` include `expected`.
fn check(source: &str, expected: &[(&str, &str)]) {
    let report = common::marked_report(source);
    for (name, ty) in expected {
        let found = report.parameters.iter().find(|p| p.name == *name);
        assert_eq!(
            found.and_then(|p| p.c_type.as_deref()),
            Some(*ty),
            "{name}: {report:#?}"
        );
    }
}

#[test]
fn a_pointer_the_loop_steps_has_its_declared_type() {
    check(
        "typedef struct { float r, i; } cpx;\n\
         void copy(cpx *Fout, const cpx *f, cpx *Fout_end, int stride) {\n\
           do { /* LOOP */\n\
             *Fout = *f;\n\
             f += stride;\n\
           } while (++Fout != Fout_end);\n\
         }\n",
        &[
            ("Fout", "cpx *"),
            ("f", "const cpx *"),
            ("Fout_end", "cpx *"),
        ],
    );
    check(
        "void fill(int *facbuf, int n) {\n\
           int p = 2;\n\
           while (n > 1) { /* LOOP */\n\
             *facbuf++ = p;\n\
             n /= p;\n\
           }\n\
         }\n",
        &[("facbuf", "int *")],
    );
}

#[test]
fn memory_a_callee_reaches_through_a_pointer_it_stores_has_the_callee_s_type() {
    // velvet's `initAllocArrayArray`: the callee stores `blocks` into the element of the
    // caller's array and writes through it; the caller names neither the member nor the
    // memory, and the type comes from the callee's access.
    check(
        "typedef struct { void **blocks; int current; } Arr;\n\
         void *make(void);\n\
         static void init(Arr *a, void *blocks, int t) {\n\
           a->blocks = blocks;\n\
           a->blocks[t] = make();\n\
           a->current = t;\n\
         }\n\
         void setup(Arr *arr, void **blocks, int n) {\n\
           for (int i = 0; i < n; i++) /* LOOP */\n\
             init(arr + i, blocks, i);\n\
         }\n",
        &[("a->blocks", "void **")],
    );
}

/// Memory a callee reaches through pointers it loads (the nodes of a tree `sum` descends)
/// has no C type to write: the report leaves `c_type` out, marks it `reached` and says
/// why, the verifier finds nothing to object to, and the recipe's kernel takes no argument
/// for it but says to copy the structure deep.
#[test]
fn memory_reached_through_loaded_pointers_has_no_type_rather_than_a_placeholder() {
    let source = "struct node { double v; struct node *left, *right; };\n\
        static double sum(const struct node *n, int d)\n\
        {\n    if (!n || d == 0)\n        return 0;\n    return n->v + sum(n->left, d - 1) + sum(n->right, d - 1);\n}\n\
        void k(double *z, const struct node *root, int n)\n\
        {\n    for (int i = 0; i < n; i++) /* LOOP */\n        z[i] = sum(root, i % 5);\n}\n";
    let unit = common::load(source);
    let reports = advisor::analyze::analyze_unit(&unit, &advisor::analyze::Filter::default());
    let report = reports
        .iter()
        .find(|r| r.function == "k")
        .expect("the loop");
    let reached = report
        .parameters
        .iter()
        .find(|p| p.name.contains("reaches through pointers"))
        .unwrap_or_else(|| panic!("no reached memory in {:#?}", report.parameters));
    assert_eq!(reached.c_type, None, "{reached:#?}");
    assert_eq!(
        reached.kind,
        advisor::model::ParamKind::Reached,
        "{reached:#?}"
    );
    assert!(
        report
            .parameters
            .iter()
            .all(|p| p.c_type.as_deref() != Some("?")),
        "{:#?}",
        report.parameters
    );
    let whole = advisor::model::Report {
        schema: advisor::model::SCHEMA.to_string(),
        loops: reports.clone(),
        skipped: Vec::new(),
    };
    let problems: Vec<String> = advisor::verify::verify(&whole)
        .into_iter()
        .map(|p| p.what)
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let yaml = serde_yaml::to_string(&whole).expect("yaml");
    assert!(!yaml.contains("c_type: '?'"), "{yaml}");
    let recipe = advisor::recipe::render(&whole, std::slice::from_ref(&unit), true);
    assert!(!recipe.contains("reaches_through_pointers"), "{recipe}");
    assert!(recipe.contains("copy the structure deep"), "{recipe}");
}

/// A struct with neither tag nor typedef has no name a declaration could use: a parameter of
/// it has no `c_type` (it used to read `struct <anonymous> *`), and says why; with a tag it
/// has its type.
#[test]
fn an_anonymous_struct_gives_no_type_rather_than_a_made_up_name() {
    let source = |decl: &str| {
        format!(
            "static {decl} tab;\n\
             void f(double *y, int n)\n\
             {{\n    for (int i = 0; i < n; i++) /* LOOP */\n        y[i] = tab.v[i % 8];\n}}\n"
        )
    };
    let report = common::marked_report(&source("struct { double v[8]; int n; }"));
    let tab = report.parameters.iter().find(|p| p.name == "tab");
    let tab = tab.unwrap_or_else(|| panic!("{:#?}", report.parameters));
    assert_eq!(tab.c_type, None, "{tab:#?}");
    assert!(
        tab.notes
            .iter()
            .any(|n| n.contains("no C type can be written")),
        "{tab:#?}"
    );
    check(
        &source("struct table { double v[8]; int n; }"),
        &[("tab", "struct table *")],
    );
}

#[test]
fn a_pointer_copied_from_a_member_array_has_its_declared_type() {
    // kissfft's `tw = st->twiddles` with `kiss_fft_cpx twiddles[1]` in the state: the
    // value is the member array's address, `cpx (*)[1]`; `tw` is declared a `cpx *`.
    check(
        "typedef struct { float r, i; } cpx;\n\
         struct state { int n; cpx twiddles[1]; };\n\
         void f(cpx *out, const struct state *st, int m, int stride) {\n\
           cpx *tw;\n\
           tw = st->twiddles;\n\
           for (int u = 0; u < m; u++) /* LOOP */\n\
             out[u] = tw[u * stride];\n\
         }\n",
        &[("tw", "cpx *")],
    );
}
