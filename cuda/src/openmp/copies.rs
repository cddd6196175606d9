//! Ports that would copy a whole allocation in every iteration of a host loop around them.
//!
//! A gather's section is the whole object as allocated (`SD.nuclide_grid`, 37 MB in
//! XSBench's small problem). A kernel inside a sequential host loop that no data region
//! covers maps its sections on every launch: XSBench's grid initialisation would copy the
//! whole grid both ways 768,000 times, far slower than the loop it replaces, on a GPU as
//! under host offloading. Such a port is refused with that reason; the loop stays
//! sequential, as before the whole object was known.

use super::clauses::LoopPort;
use super::region::DataRegion;
use advisor::model::LoopReport;
use frontend::loop_ref::LoopRef;
use frontend::unit::Unit;

/// The ports among `ports` to refuse: inside a loop of the host code that no data region
/// in `regions` covers, with a whole-object section; each with why.
pub(super) fn copied_every_iteration(
    unit: &Unit,
    reports: &[LoopReport],
    ports: &[LoopPort],
    regions: &[DataRegion],
) -> Vec<(LoopRef, String)> {
    let Ok(sites) = frontend::access_sites::access_sites(&unit.preprocessed) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in ports {
        if regions.iter().any(|r| r.ports.contains(&p.loop_id)) {
            continue;
        }
        let Some(around) = sites
            .loops
            .iter()
            .find(|l| l.span == p.span)
            .and_then(|l| l.parent)
        else {
            continue;
        };
        let Some(report) = reports.iter().find(|r| r.id == p.loop_id) else {
            continue;
        };
        let Some((name, whole)) = report
            .parameters
            .iter()
            .find_map(|q| q.whole_object.as_ref().map(|w| (&q.name, w)))
        else {
            continue;
        };
        // The size reads its names where the object is allocated (`SD@684.max_num_nucs`
        // is `SD` as line 684 has it): said by the place, written as the source names them.
        let size = whole.size.map_names(advisor::value_name::without_places);
        let at = if whole.allocated_at.is_empty() {
            String::new()
        } else {
            format!(" at {}", whole.allocated_at.join(", "))
        };
        out.push((
            p.loop_id.clone(),
            format!(
                "it maps the whole of `{name}` (`{size}` bytes as allocated{at}) on every launch, inside the loop at {} that no data region keeps it on the device across; the copies would cost more than the loop",
                unit.loop_id_at(sites.loops[around].keyword)
            ),
        ));
    }
    out
}
