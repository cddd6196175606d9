//! A small table of GPU architectures: the limits that decide how many blocks fit on an SM
//! (CUDA C Programming Guide, "Technical Specifications per Compute Capability").

/// Per-architecture limits used by the occupancy estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpu {
    pub name: &'static str,
    pub example: &'static str,
    /// Shared memory a block may use with the dynamic opt-in (`cudaFuncSetAttribute`).
    pub shared_per_block: u64,
    /// Without the opt-in (static `__shared__` arrays): 48 KiB on every architecture here.
    pub shared_per_block_default: u64,
    pub shared_per_sm: u64,
    /// Shared memory the driver reserves for each resident block (sm_80 and later).
    pub reserved_per_block: u64,
    pub max_threads_per_sm: u64,
    pub max_blocks_per_sm: u64,
    pub max_threads_per_block: u64,
    /// Peak device-memory bandwidth of the example card, bytes per second (vendor data
    /// sheets: V100 SXM2 900 GB/s, A100 40 GB 1555 GB/s, H100 SXM 3350 GB/s, H200 4800 GB/s).
    pub dram_bytes_per_s: u64,
    /// Streaming multiprocessors of the example card.
    pub sms: u64,
}

/// The time of one step of a thread's sequential loop whose memory accesses wait on each
/// other: one round trip to device memory. Measured on an H200 (the i-loop kernel of a
/// gemm, 1000 threads each running 1,320,000 dependent steps: 593 ms, 449 ns a step);
/// device-memory latency is of this order on every card here.
pub const STEP_LATENCY_NS: f64 = 450.0;

/// Steps whose loads do not wait on the previous step's stores overlap: compilers unroll
/// such loops (nvcc by 4), so a warp keeps about this many steps' loads in flight.
pub const OVERLAPPED_STEPS: f64 = 4.0;

pub const GPUS: &[Gpu] = &[
    Gpu {
        name: "sm_70",
        example: "V100",
        shared_per_block: 96 * 1024,
        shared_per_block_default: 48 * 1024,
        shared_per_sm: 96 * 1024,
        reserved_per_block: 0,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        dram_bytes_per_s: 900_000_000_000,
        sms: 80,
    },
    Gpu {
        name: "sm_80",
        example: "A100",
        shared_per_block: 163 * 1024,
        shared_per_block_default: 48 * 1024,
        shared_per_sm: 164 * 1024,
        reserved_per_block: 1024,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        dram_bytes_per_s: 1_555_000_000_000,
        sms: 108,
    },
    Gpu {
        name: "sm_90",
        example: "H100",
        shared_per_block: 227 * 1024,
        shared_per_block_default: 48 * 1024,
        shared_per_sm: 228 * 1024,
        reserved_per_block: 1024,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        dram_bytes_per_s: 3_350_000_000_000,
        sms: 132,
    },
    // The same architecture with HBM3e: only the bandwidth differs. `sm_90` finds the H100
    // above; `--gpu h200` this one.
    Gpu {
        name: "sm_90",
        example: "H200",
        shared_per_block: 227 * 1024,
        shared_per_block_default: 48 * 1024,
        shared_per_sm: 228 * 1024,
        reserved_per_block: 1024,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        dram_bytes_per_s: 4_800_000_000_000,
        sms: 132,
    },
];

/// The default target when `--gpu` is not given.
pub const DEFAULT_GPU: &str = "sm_80";

/// Looks an architecture up by `sm_XX`, `XX`, `X.Y` or its example card's name.
pub fn gpu(name: &str) -> Option<&'static Gpu> {
    let wanted = name.trim().to_ascii_lowercase().replace('.', "");
    GPUS.iter().find(|g| {
        g.name == wanted
            || g.name.trim_start_matches("sm_") == wanted
            || g.example.to_ascii_lowercase() == wanted
    })
}

/// The names `--gpu` takes, for messages: `sm_70 (V100), ..., h200 (sm_90)`.
pub fn known() -> String {
    let mut seen = Vec::new();
    GPUS.iter()
        .map(|g| {
            let text = if seen.contains(&g.name) {
                format!("{} ({})", g.example.to_ascii_lowercase(), g.name)
            } else {
                format!("{} ({})", g.name, g.example)
            };
            seen.push(g.name);
            text
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Resident blocks per SM for a block of `threads` threads using `shared` bytes, and the
/// resource that limits it; `None` when the block cannot launch at all.
pub fn blocks_per_sm(g: &Gpu, threads: u64, shared: u64) -> Option<(u64, &'static str)> {
    if threads == 0 || threads > g.max_threads_per_block || shared > g.shared_per_block {
        return None;
    }
    let by_threads = g.max_threads_per_sm / threads;
    let by_shared = if shared == 0 {
        u64::MAX
    } else {
        g.shared_per_sm / (shared + g.reserved_per_block)
    };
    let candidates = [
        (by_threads, "threads per SM"),
        (g.max_blocks_per_sm, "blocks per SM"),
        (by_shared, "shared memory per SM"),
    ];
    candidates.into_iter().min_by_key(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_and_limits() {
        assert_eq!(gpu("sm_80").map(|g| g.example), Some("A100"));
        assert_eq!(gpu("8.0").map(|g| g.name), Some("sm_80"));
        assert_eq!(gpu("h100").map(|g| g.name), Some("sm_90"));
        assert_eq!(
            known(),
            "sm_70 (V100), sm_80 (A100), sm_90 (H100), h200 (sm_90)"
        );
        assert_eq!(gpu("sm_90").map(|g| g.example), Some("H100"));
        assert_eq!(
            gpu("H200").map(|g| (g.name, g.dram_bytes_per_s)),
            Some(("sm_90", 4_800_000_000_000))
        );
        let v100 = gpu("70").expect("sm_70");
        // 256 threads, 32 KiB: shared memory allows 3 blocks, threads 8.
        assert_eq!(
            blocks_per_sm(v100, 256, 32 * 1024),
            Some((3, "shared memory per SM"))
        );
        assert_eq!(blocks_per_sm(v100, 256, 0), Some((8, "threads per SM")));
        assert_eq!(blocks_per_sm(v100, 2048, 0), None);
    }
}
