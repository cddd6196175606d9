//! Helpers the command-line test modules share: the `warpwise` binary run from the
//! repository root, its output as one text, a fresh scratch directory per call, and the
//! check of a report against its JSON Schema.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_warpwise")
}

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory under the tests' target directory, `PREFIX-PID-N-NAME`: tests run in
/// parallel, and a rerun must not see a previous run's files.
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{prefix}-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `warpwise ARGS...` run from the repository root.
pub fn warpwise(args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

/// What a run printed, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The documents warpwise writes for programs to read, each with its JSON Schema under
/// `docs/schemas/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaKind {
    /// `warpwise/kernel-report/v1`: `analyze --format json|yaml`.
    KernelReport,
    /// `warpwise/profile/v1`: one document of a profile file.
    Profile,
    /// `warpwise/instance-report/v1`: `instantiate`, `analyze --profile P --instantiate`.
    InstanceReport,
}

impl SchemaKind {
    pub fn path(self) -> PathBuf {
        root().join("docs/schemas").join(match self {
            SchemaKind::KernelReport => "kernel-report-v1.schema.json",
            SchemaKind::Profile => "profile-v1.schema.json",
            SchemaKind::InstanceReport => "instance-report-v1.schema.json",
        })
    }
}

/// Validates named documents against one schema and prints every error as
/// `NAME: /json/pointer: message`, as a JSON list; an error of `oneOf`/`anyOf` lists, indented
/// under it, why each alternative failed (else it would only say that none matched). Exit
/// 3: no `jsonschema` module. No format checker: `format` is an annotation in draft
/// 2020-12, and the schemas use none.
const VALIDATE_PY: &str = r#"
import json, sys
try:
    from jsonschema import Draft202012Validator
except ImportError:
    sys.exit(3)

def where(e):
    return "/" + "/".join(str(p) for p in e.absolute_path)

def described(e, indent):
    message = e.message if len(e.message) <= 400 else e.message[:400] + "..."
    text = "%s%s: %s" % (indent, where(e), message)
    for sub in sorted(e.context, key=lambda s: (str(list(s.relative_schema_path)[:1]), where(s))):
        text += "\n" + described(sub, indent + "    ")
    return text

job = json.load(sys.stdin)
with open(job["schema"]) as f:
    schema = json.load(f)
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
errors = []
for name, document in job["documents"]:
    for e in sorted(validator.iter_errors(document), key=where):
        errors.append("%s: %s" % (name, described(e, "")))
json.dump(errors, sys.stdout)
"#;

/// Every error of the named documents against `kind`'s schema (empty when all are valid),
/// from Python's `jsonschema` in one process. `None` when python3 or its `jsonschema`
/// module is missing: the check is skipped, saying so, unless WARPWISE_REQUIRE_JSONSCHEMA
/// is set (CI sets it), where it fails instead.
pub fn schema_errors(
    kind: SchemaKind,
    documents: &[(&str, &serde_json::Value)],
) -> Option<Vec<String>> {
    use std::io::Write;
    let job = serde_json::json!({
        "schema": kind.path(),
        "documents": documents,
    });
    let child = Command::new("python3")
        .args(["-c", VALIDATE_PY])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let missing = |why: &str| {
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_JSONSCHEMA").is_none(),
            "Python's jsonschema is required (WARPWISE_REQUIRE_JSONSCHEMA) but {why}"
        );
        eprintln!("skipped: {why} (pip install jsonschema)");
    };
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            missing(&format!("python3 cannot be run: {e}"));
            return None;
        }
    };
    // A python3 without the module exits before it reads its input: the write then fails
    // with a broken pipe, and the exit status says why.
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(&job).unwrap());
    let out = child.wait_with_output().unwrap();
    if out.status.code() == Some(3) {
        missing("python3 cannot import jsonschema");
        return None;
    }
    assert!(
        out.status.success(),
        "the schema check of {} did not run: {}",
        kind.path().display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// Fails, listing every error (path and message), unless each document is valid against
/// `kind`'s schema.
pub fn assert_all_valid(kind: SchemaKind, documents: &[(&str, &serde_json::Value)]) {
    if let Some(errors) = schema_errors(kind, documents) {
        assert!(
            errors.is_empty(),
            "{} error(s) against {}:\n{}",
            errors.len(),
            kind.path().display(),
            errors.join("\n")
        );
    }
}

/// [`assert_all_valid`] for one document.
pub fn assert_valid(kind: SchemaKind, json: &serde_json::Value) {
    assert_all_valid(kind, &[("document", json)]);
}

/// The documents of a YAML stream (a profile file holds one per run), as JSON.
pub fn yaml_documents(text: &str) -> Vec<serde_json::Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|document| serde_json::Value::deserialize(document).expect("a YAML document"))
        .filter(|document| !document.is_null())
        .collect()
}
