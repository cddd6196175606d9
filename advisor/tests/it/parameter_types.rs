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
