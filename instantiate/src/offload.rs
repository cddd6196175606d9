//! The offload estimate (formulas in `docs/instantiation.md`): transfers over the
//! host-device link, a memory-bound kernel time from the requests one launch issues and the
//! GPU's bandwidth, against the loop's profiled CPU time per entry.

use super::model::{InstanceParameter, MemoryTraffic, Offload};
use profile::model::LoopProfile;

/// The host-device link and fixed costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub bytes_per_s: u64,
    /// Fixed cost of one `cudaMemcpy`.
    pub latency_ns: u64,
    /// Fixed cost of one kernel launch.
    pub launch_ns: u64,
}

impl Default for Link {
    /// PCIe 4.0 x16 as measured by `bandwidthTest` on typical hosts (about 25 GB/s pinned),
    /// 10 µs per copy and 5 µs per launch.
    fn default() -> Link {
        Link {
            bytes_per_s: 25_000_000_000,
            latency_ns: 10_000,
            launch_ns: 5_000,
        }
    }
}

/// A port pays off when the GPU is at least this much faster.
pub const WORTH_IT: f64 = 1.2;

#[derive(Debug)]
pub struct OffloadInputs<'a> {
    pub parameters: &'a [InstanceParameter],
    pub memory: Option<&'a MemoryTraffic>,
    pub profile: &'a LoopProfile,
    pub link: Link,
    pub dram_bytes_per_s: u64,
    /// Warps resident on the whole GPU at once (SMs times warps per SM).
    pub resident_warps: u64,
    pub gpu: &'a str,
}

/// `1.25 ms`, `310 µs`, `800 ns`.
fn duration(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// One step of a thread's inner loops: a memory round trip, or a share of one when the
/// steps' loads overlap (no store in the steps for them to wait on).
fn step_ns(m: &MemoryTraffic) -> f64 {
    if m.stores_in_steps {
        advisor::gpus::STEP_LATENCY_NS
    } else {
        advisor::gpus::STEP_LATENCY_NS / advisor::gpus::OVERLAPPED_STEPS
    }
}

/// Waves of resident warps times a thread's sequential steps times one memory round trip:
/// the least time a kernel takes when its steps wait on memory. `None` when the steps or
/// the warps are not known.
pub fn latency_bound_ns(memory: Option<&MemoryTraffic>, resident_warps: u64) -> Option<f64> {
    let m = memory?;
    // One step a thread is what the launch overhead and the bandwidth already cover.
    let steps = m.steps_per_thread.filter(|s| *s > 1.0)?;
    let warps = u64::try_from(m.warps?).ok()?;
    let waves = warps.div_ceil(resident_warps.max(1)).max(1);
    Some(waves as f64 * steps * step_ns(m))
}

/// Why a loop gets no offload estimate; the instance report prints it after "no offload
/// estimate: ".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EstimateError {
    /// The profile has the loop, but no run entered it: there is no CPU time to compare.
    #[error("the loop was never entered in the profiled runs")]
    NeverEntered,
    /// A parameter's section has no size expression: the transfers cannot be counted.
    #[error("the section of `{parameter}` is not known")]
    UnknownSection { parameter: String },
    /// A parameter's section size did not evaluate to a number with the values at hand.
    #[error("the section of `{parameter}` has no value: {}", .why.as_deref().unwrap_or("?"))]
    NoSectionValue {
        parameter: String,
        /// Why the evaluation gave no number, when the evaluator said.
        why: Option<String>,
    },
}

/// The estimate, or why there is none.
pub fn estimate(inputs: &OffloadInputs<'_>) -> Result<Offload, EstimateError> {
    let p = inputs.profile;
    if p.entries == 0 {
        return Err(EstimateError::NeverEntered);
    }
    let mut to_device = 0i64;
    let mut to_host = 0i64;
    let mut copies = 0u64;
    let mut section_bytes = 0i64;
    for param in inputs.parameters {
        let Some(size) = param.size.as_ref() else {
            return Err(EstimateError::UnknownSection {
                parameter: param.name.clone(),
            });
        };
        let Some(bytes) = size.value else {
            return Err(EstimateError::NoSectionValue {
                parameter: param.name.clone(),
                why: size.why.clone(),
            });
        };
        let bytes = bytes.max(0);
        section_bytes += bytes;
        if matches!(param.role.as_str(), "in" | "inout") {
            to_device += bytes;
            copies += 1;
        }
        if matches!(param.role.as_str(), "out" | "inout") {
            to_host += bytes;
            copies += 1;
        }
    }
    let mut caveats = vec![
        "memory-bound model: arithmetic, caches and latency hiding are not modelled".to_string(),
    ];
    let kernel_bytes = match inputs.memory.and_then(|m| m.bytes_per_launch) {
        Some(b) => b,
        None => {
            caveats.push(
                "the requests per launch are not all known: the kernel moves at least its \
                 sections once, which the estimate uses instead"
                    .into(),
            );
            section_bytes
        }
    };
    let link_bps = inputs.link.bytes_per_s.max(1) as f64;
    let transfer_ns = (to_device + to_host) as f64 / link_bps * 1e9
        + copies as f64 * inputs.link.latency_ns as f64;
    let bandwidth_ns = kernel_bytes as f64 / inputs.dram_bytes_per_s.max(1) as f64 * 1e9;
    // Little's law: with few threads, each running many steps of its inner loops, the
    // GPU cannot keep enough requests in flight to reach its bandwidth, and every step
    // waits for memory. Bound the time below by the waves of resident warps times the
    // steps of a thread at one memory round trip each.
    let latency_ns = latency_bound_ns(inputs.memory, inputs.resident_warps);
    if let Some(l) = latency_ns.filter(|l| *l > bandwidth_ns) {
        caveats.push(format!(
            "latency-bound: too few threads to hide memory latency; each runs {} steps of its inner loops, at {:.0} ns a step{} the kernel takes {} (the bandwidth alone would allow {})",
            inputs
                .memory
                .and_then(|m| m.steps_per_thread)
                .map_or("?".into(), |s| format!("{s:.0}")),
            inputs.memory.map_or(0.0, step_ns),
            if inputs.memory.is_some_and(|m| m.stores_in_steps) {
                " (a step's loads wait for the stores before them)"
            } else {
                " (loads of about 4 steps in flight)"
            },
            duration(l),
            duration(bandwidth_ns)
        ));
    }
    let kernel_ns = bandwidth_ns.max(latency_ns.unwrap_or(0.0)) + inputs.link.launch_ns as f64;
    let gpu_ns = transfer_ns + kernel_ns;
    let cpu_ns = p.time_ns as f64 / p.entries as f64;
    if p.tracked {
        caveats.push(
            "the CPU time was measured with dependence tracking on, which slows the loop down \
             many times: profile with `--loops none` for timing"
                .into(),
        );
    } else {
        caveats.push(
            "the CPU time includes the loop-counting instrumentation (0.9-1.2x a plain run on the profiler's benchmark kernels)".into(),
        );
    }
    let speedup = if gpu_ns > 0.0 { cpu_ns / gpu_ns } else { 0.0 };
    let transfer_share = if gpu_ns > 0.0 {
        transfer_ns / gpu_ns
    } else {
        0.0
    };
    let verdict = if speedup >= WORTH_IT {
        format!(
            "worth porting: about {speedup:.1}x faster on {} ({:.0}% of the GPU time is transfers)",
            inputs.gpu,
            transfer_share * 100.0
        )
    } else if kernel_ns > 0.0 && cpu_ns / kernel_ns >= WORTH_IT {
        format!(
            "transfer-bound: the kernel alone would be {:.1}x faster, but copies take {:.0}% of \
             the time; keep the data on the device across the enclosing loop",
            cpu_ns / kernel_ns,
            transfer_share * 100.0
        )
    } else {
        format!(
            "not worth it: the GPU would take {:.1}x the CPU's time",
            gpu_ns / cpu_ns.max(1.0)
        )
    };
    let verdict = if p.tracked {
        format!("{verdict} (unreliable: the CPU time is inflated by dependence tracking)")
    } else {
        verdict
    };
    Ok(Offload {
        bytes_to_device: to_device,
        bytes_to_host: to_host,
        copies,
        transfer_ns,
        kernel_bytes,
        kernel_ns,
        gpu_ns,
        cpu_ns,
        entries: p.entries,
        speedup,
        transfer_share,
        saved_ns: (cpu_ns - gpu_ns) * p.entries as f64,
        verdict,
        caveats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Quantity;

    fn param(role: &str, bytes: i64) -> InstanceParameter {
        InstanceParameter {
            name: format!("p{bytes}"),
            role: role.into(),
            lo: None,
            hi: None,
            size: Some(Quantity {
                expr: bytes.to_string(),
                value: Some(bytes),
                why: None,
                candidates: vec![],
                source: None,
            }),
            section_from: Some("static".into()),
            notes: vec![],
        }
    }

    #[test]
    fn formula_adds_transfers_latencies_and_the_kernel() {
        let params = [param("in", 1_000_000), param("out", 500_000)];
        let profile = LoopProfile {
            entries: 2,
            time_ns: 4_000_000,
            ..Default::default()
        };
        let link = Link {
            bytes_per_s: 1_000_000_000,
            latency_ns: 1000,
            launch_ns: 500,
        };
        let o = estimate(&OffloadInputs {
            parameters: &params,
            memory: None,
            profile: &profile,
            link,
            dram_bytes_per_s: 1_500_000_000_000,
            resident_warps: 108 * 64,
            gpu: "sm_80",
        })
        .expect("estimate");
        // 1.5 MB at 1 GB/s = 1.5 ms, plus two copies of 1 µs.
        assert_eq!(o.transfer_ns, 1_502_000.0);
        // The sections stand in for the kernel's traffic: 1.5 MB at 1.5 TB/s = 1 µs + launch.
        assert_eq!(o.kernel_ns, 1_500.0);
        assert_eq!(o.cpu_ns, 2_000_000.0);
        assert!((o.speedup - 2_000_000.0 / 1_503_500.0).abs() < 1e-9);
        assert!(o.verdict.starts_with("worth porting"), "{}", o.verdict);
        assert_eq!(o.saved_ns, (2_000_000.0 - 1_503_500.0) * 2.0);
    }

    fn traffic(steps: f64, warps: i64, stores_in_steps: bool) -> MemoryTraffic {
        MemoryTraffic {
            mapping: "x=i".into(),
            accesses: vec![],
            requests_per_launch: Some(1000),
            bytes_per_launch: Some(128_000),
            steps_per_thread: Some(steps),
            warps: Some(warps),
            stores_in_steps,
        }
    }

    #[test]
    fn few_threads_with_long_inner_loops_are_latency_bound() {
        // gemm's i loop on an H200: 1000 threads (32 warps, one wave) each running
        // 1,320,000 steps whose loads wait on the stores before them: 594 ms (measured:
        // 593 ms); the 128 KB the requests move would take 27 ns.
        let resident = 132 * 64;
        let t = traffic(1_320_000.0, 32, true);
        assert_eq!(latency_bound_ns(Some(&t), resident), Some(594_000_000.0));
        // Loads that do not wait overlap about four steps deep.
        let t = traffic(1_320_000.0, 32, false);
        assert_eq!(latency_bound_ns(Some(&t), resident), Some(148_500_000.0));
        // More warps than fit at once: waves.
        let t = traffic(100.0, 3 * 132 * 64 + 1, true);
        assert_eq!(
            latency_bound_ns(Some(&t), resident),
            Some(4.0 * 100.0 * 450.0)
        );
        // One step a thread, or unknown steps: no bound.
        assert_eq!(
            latency_bound_ns(Some(&traffic(1.0, 32, true)), resident),
            None
        );
        let mut t = traffic(10.0, 32, true);
        t.steps_per_thread = None;
        assert_eq!(latency_bound_ns(Some(&t), resident), None);

        let profile = LoopProfile {
            entries: 1,
            time_ns: 574_000_000,
            ..Default::default()
        };
        let t = traffic(1_320_000.0, 32, true);
        let o = estimate(&OffloadInputs {
            parameters: &[param("inout", 8_000_000)],
            memory: Some(&t),
            profile: &profile,
            link: Link::default(),
            dram_bytes_per_s: 4_800_000_000_000,
            resident_warps: resident,
            gpu: "H200",
        })
        .expect("estimate");
        assert_eq!(o.kernel_ns, 594_000_000.0 + 5_000.0);
        assert!(o.verdict.starts_with("not worth it"), "{}", o.verdict);
        assert!(
            o.caveats
                .iter()
                .any(|c| c.starts_with("latency-bound") && c.contains("594.00 ms")),
            "{:?}",
            o.caveats
        );
    }
}
