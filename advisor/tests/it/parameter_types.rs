//! Every kernel parameter carries the C type the source declares, also for a pointer the loop
//! itself steps (`*Fout = *f; ++Fout`, kissfft's `kf_work`), which was reported as `?`.

use crate::common;

/// The parameters `(name, type)` of the loop marked `/* LOOP */` include `expected`.
fn check(source: &str, expected: &[(&str, &str)]) {
    let report = common::marked_report(source);
    for (name, ty) in expected {
        let found = report.parameters.iter().find(|p| p.name == *name);
        assert_eq!(
            found.map(|p| p.c_type.as_str()),
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
