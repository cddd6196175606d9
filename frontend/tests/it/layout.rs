//! Struct and union layout against the C compiler: `sizeof`, `_Alignof` and `offsetof` of
//! records with mixed members, nesting, arrays, bit-fields, anonymous members, `long double`,
//! enums, flexible array members and `__attribute__((packed))`, as `cc` computes them versus
//! `TypeTable`.

use frontend::preprocess::TranslationUnitInput;
use frontend::types::{Type, TypeId};
use frontend::unit::load_unit;
use std::collections::BTreeMap;
use std::process::Command;
use tempfile::TempDir;

const DECLS: &str = r#"
#include <stddef.h>
enum E { E0, E1 = 1000 };
typedef struct { char c; double d; short s; } Mixed;
typedef struct { char a; struct { int x; char y; } inner; char b[3]; long l; } Nested;
typedef union { char c[13]; int i; double d; } U;
typedef struct { char c; long double ld; int i; } WithLongDouble;
typedef struct { void *p; char c; int (*fp)(int); enum E e; } Pointers;
typedef struct { int n; double tail[]; } Flexible;
typedef struct { char tag; int tail[]; } FlexibleInt;
typedef struct { unsigned a : 3; unsigned b : 30; char c; } Bits1;
typedef struct { char c; int x : 4; int y : 28; short s : 3; long l : 40; } Bits2;
typedef struct { char c; unsigned : 0; char d; int : 5; int e : 3; } ZeroWidth;
typedef struct { short s; char c : 2; } SmallBits;
typedef struct { int kind; union { int i; double d; }; struct { char a, b; }; int after; } Anonymous;
typedef struct { char c; Mixed m[3]; U u; int last; } ArrayOfRecords;
typedef struct { _Bool b; long long ll; float f[3]; unsigned char uc; } Scalars;
typedef struct { char c; int i; double d; short s; } __attribute__((packed)) Packed;
struct PackedTag { char c; long l; struct { char a; int b; } inner; } __attribute__((__packed__));
typedef struct PackedTag PackedTagged;
typedef struct { char c; Packed p; int i; } HoldsPacked;
struct __attribute__((packed)) BeforeTag { char c; double d; int i; };
typedef struct BeforeTag PackedBeforeTag;
typedef union __attribute__((__packed__)) { char c[5]; int i; } PackedUnionBeforeBody;
typedef struct { char c; PackedUnionBeforeBody u; long l; } HoldsPackedUnion;
"#;

/// (typedef name, fields whose offsets are compared; bit-fields are compared by layout only).
const RECORDS: &[(&str, &[&str])] = &[
    ("Mixed", &["c", "d", "s"]),
    ("Nested", &["a", "inner", "b", "l"]),
    ("U", &["c", "i", "d"]),
    ("WithLongDouble", &["c", "ld", "i"]),
    ("Pointers", &["p", "c", "fp", "e"]),
    ("Flexible", &["n", "tail"]),
    ("FlexibleInt", &["tag", "tail"]),
    ("Bits1", &["c"]),
    ("Bits2", &["c"]),
    ("ZeroWidth", &["c", "d"]),
    ("SmallBits", &["s"]),
    ("Anonymous", &["kind", "i", "d", "a", "b", "after"]),
    ("ArrayOfRecords", &["c", "m", "u", "last"]),
    ("Scalars", &["b", "ll", "f", "uc"]),
    ("Packed", &["c", "i", "d", "s"]),
    // Only the record the attribute is on is packed, not the one nested in it.
    ("PackedTagged", &["c", "l", "inner"]),
    ("HoldsPacked", &["c", "p", "i"]),
    // The attribute between `struct`/`union` and the tag or body (GCC's other spelling).
    ("PackedBeforeTag", &["c", "d", "i"]),
    ("PackedUnionBeforeBody", &["c", "i"]),
    ("HoldsPackedUnion", &["c", "u", "l"]),
];

/// A fresh, private directory for one program's files, removed when the guard is dropped
/// (never a name shared by every run in the shared temp dir).
fn scratch() -> TempDir {
    tempfile::Builder::new()
        .prefix("warpwise-layout-")
        .tempdir()
        .unwrap()
}

/// What cc says: "Name size align" and "Name.field offset" lines.
fn compiler_layout() -> BTreeMap<String, u64> {
    let mut main = String::from(DECLS);
    main.push_str("#include <stdio.h>\nint main(void) {\n");
    for (name, fields) in RECORDS {
        main.push_str(&format!(
            "    printf(\"{name}.sizeof %zu\\n{name}.alignof %zu\\n\", sizeof({name}), _Alignof({name}));\n"
        ));
        for f in *fields {
            main.push_str(&format!(
                "    printf(\"{name}.{f} %zu\\n\", offsetof({name}, {f}));\n"
            ));
        }
    }
    main.push_str("    return 0;\n}\n");
    let dir = scratch();
    let c = dir.path().join("layout.c");
    let exe = dir.path().join("layout");
    std::fs::write(&c, main).unwrap();
    let out = Command::new("cc")
        .args(["-std=c11", "-w", "-o"])
        .arg(&exe)
        .arg(&c)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("layout program runs");
    String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn our_layout() -> BTreeMap<String, u64> {
    // Declarations only: one use per type keeps every typedef alive in the program.
    let mut source = String::from(DECLS);
    for (i, (name, _)) in RECORDS.iter().enumerate() {
        source.push_str(&format!("{name} *use{i};\n"));
    }
    let dir = scratch();
    let c = dir.path().join("ours.c");
    std::fs::write(&c, source).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(&c)).expect("loads");
    assert!(unit.lowered.errors.is_empty(), "{:?}", unit.lowered.errors);
    let program = &unit.lowered.program;
    let types = &program.types;
    let mut out = BTreeMap::new();
    for (i, (name, fields)) in RECORDS.iter().enumerate() {
        let global = program
            .globals
            .iter()
            .find(|g| g.name == format!("use{i}"))
            .expect("global declared");
        let record_ty: TypeId = types.pointee(global.ty).expect("a pointer");
        let Type::Record(record) = types.get(record_ty) else {
            panic!("{name} is not a record");
        };
        out.insert(
            format!("{name}.sizeof"),
            types.size_of(record_ty).unwrap_or(0),
        );
        out.insert(format!("{name}.alignof"), types.align_of(record_ty));
        for f in *fields {
            let offset = types.find_field(*record, f).map_or(u64::MAX, |l| l.offset);
            out.insert(format!("{name}.{f}"), offset);
        }
    }
    out
}

#[test]
fn record_layout_matches_the_c_compiler() {
    let theirs = compiler_layout();
    let ours = our_layout();
    let mismatches: Vec<String> = theirs
        .iter()
        .filter(|(k, v)| ours.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: cc {v}, ours {:?}", ours.get(k)))
        .collect();
    assert!(
        mismatches.is_empty(),
        "layout mismatches:\n{}",
        mismatches.join("\n")
    );
}
