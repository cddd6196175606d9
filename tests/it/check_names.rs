//! `warpwise check` writes the source's names: a kernel whose variables take several values
//! (a loop counter, a pointer moved along a row) reads, in every text of its report, as the
//! source names them, never by the analyses' numbered values (`i#2`).

use crate::check_sarif::check_in;
use serde_json::Value;

/// Lud's diagonal kernel, shortened: a loop over `i` inside a loop over `i`'s uses, a
/// shared tile read by column, a branch on the loop counter, an offset moved in a loop.
const KERNEL: &str = r#"
#define BLOCK_SIZE 16
__global__ void diagonal(float *m, int matrix_dim, int offset)
{
    int i, j;
    __shared__ float shadow[BLOCK_SIZE][BLOCK_SIZE];
    int array_offset = offset * matrix_dim + offset;
    for (i = 0; i < BLOCK_SIZE; i++) {
        shadow[i][threadIdx.x] = m[array_offset + threadIdx.x];
        array_offset += matrix_dim;
    }
    __syncthreads();
    for (i = 0; i < BLOCK_SIZE - 1; i++) {
        if (threadIdx.x > i) {
            for (j = 0; j < i; j++)
                shadow[threadIdx.x][i] -= shadow[threadIdx.x][j] * shadow[j][i];
            shadow[threadIdx.x][i] /= shadow[i][i];
        }
    }
    array_offset = (offset + 1) * matrix_dim + offset;
    for (i = 1; i < BLOCK_SIZE; i++) {
        m[array_offset + threadIdx.x] = shadow[i][threadIdx.x];
        array_offset += matrix_dim;
    }
}
"#;

/// Every string of `v`.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[test]
fn every_text_of_a_check_report_names_variables_as_the_source_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lud.cu"), KERNEL).unwrap();
    let report = check_in(dir.path(), "lud.cu", "json");
    let mut texts = Vec::new();
    strings(&report, &mut texts);
    let numbered: Vec<&String> = texts
        .iter()
        .filter(|t| {
            let b = t.as_bytes();
            (1..b.len()).any(|k| b[k - 1] == b'#' && b[k].is_ascii_digit())
        })
        .collect();
    assert!(numbered.is_empty(), "numbered names: {numbered:#?}");
    // The texts that used to carry them read with the source's names.
    let offsets: Vec<&str> = report["kernels"][0]["shared_accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["offset"].as_str())
        .collect();
    assert!(offsets.contains(&"4*i + 64*threadIdx.x"), "{offsets:#?}");
    let stores: Vec<&str> = report["kernels"][0]["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["offset"].as_str())
        .collect();
    assert!(
        stores.iter().any(|o| o.contains("array_offset")),
        "{stores:#?}"
    );
}
