//! The first pass of `instantiate` over a JSON report: what each loop says that the others
//! need, with the loops' texts found by a scan of the bytes and parsed on every core.

use instantiate::LoopSketch;
use rayon::prelude::*;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::io::BufReader;

/// What the first pass gives: the loops' sketches in report order, the first loop's
/// block, whether any loop was profiled, and the report's schema.
pub struct Heads {
    pub sketches: Vec<LoopSketch>,
    pub block: Option<String>,
    pub observed: bool,
    pub schema: String,
}

/// What a loop of a JSON report says, read on a first pass over the file, for the loops
/// that the others need (a [`LoopSketch`]), the block and whether a profile applies.
#[derive(Deserialize)]
struct LoopHead {
    id: frontend::loop_ref::LoopRef,
    function: String,
    line: u32,
    #[serde(default)]
    nest: Vec<frontend::loop_ref::LoopRef>,
    induction: Option<advisor::model::Induction>,
    #[serde(default)]
    occupancy: Option<OccupancyHead>,
    #[serde(default)]
    observed: Option<IgnoredAny>,
    #[serde(default)]
    names: Vec<advisor::model::NamedValue>,
}

#[derive(Deserialize)]
struct OccupancyHead {
    block: String,
}

/// Loops parsed together on the cores.
const BATCH: usize = 1024;

/// Reads the heads of `file`'s loops, checking the text as reading the report whole
/// would (size, UTF-8, nesting, JSON, the fields the heads need); `None` at a problem (the
/// caller reads the report whole for its message). Each loop's text is parsed apart from
/// the others and the rest of the report, its outline (the loops as `{}`), after them:
/// a JSON text is valid where its outline and every text put in place of a `{}` are, so
/// this refuses what one parse of the whole text refuses. Parsing the whole text through
/// a reader, a byte at a time, on one thread, was most of this pass.
pub fn read(file: std::fs::File) -> Option<Heads> {
    let mut checked = crate::report_stream::Checked::new(
        BufReader::with_capacity(1 << 20, file),
        frontend::files::MAX_INPUT_BYTES,
        profile::yaml_guard::MAX_NESTING,
    );
    let mut heads = Heads {
        sketches: Vec::new(),
        block: None,
        observed: false,
        schema: String::new(),
    };
    let (found, batches) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(2);
    let outline = std::thread::scope(|scope| {
        let scan = scope.spawn(move || {
            let mut batches = TextBatches::new(found, BATCH);
            let reader = BufReader::with_capacity(1 << 20, &mut checked);
            let outline = instantiate::loop_texts::each_loop_text_and_outline(reader, |text| {
                batches.push(text)
            })?;
            batches.finish()?;
            match checked.problem {
                true => Err("the report needs reading whole".to_string()),
                false => Ok(outline),
            }
        });
        let mut parsed = Some(());
        for batch in &batches {
            let loops: Option<Vec<LoopHead>> = batch
                .par_iter()
                .map(|text| serde_json::from_slice(text).ok())
                .collect();
            let Some(loops) = loops else {
                parsed = None;
                break;
            };
            loops.into_iter().for_each(|l| heads.add(l));
        }
        // Stops the scan where the parsing stopped first.
        drop(batches);
        let outline = scan.join().ok()?.ok();
        parsed.and(outline)
    })?;
    let mut de = serde_json::Deserializer::from_slice(&outline);
    heads.schema = crate::report_stream::each_loop(&mut de, |_: IgnoredAny| Ok(()))
        .and_then(|schema| de.end().map(|()| schema))
        .ok()?;
    Some(heads)
}

impl Heads {
    fn add(&mut self, l: LoopHead) {
        if self.block.is_none() {
            self.block = l.occupancy.map(|o| o.block);
        }
        self.observed |= l.observed.is_some();
        self.sketches.push(LoopSketch {
            id: l.id,
            function: l.function,
            line: l.line,
            nest: l.nest,
            induction: l
                .induction
                .map(|mut i| {
                    advisor::legend::restore_induction(&mut i, &l.names);
                    i
                })
                .map(|i| instantiate::InductionSketch {
                    var: i.var,
                    trip_count: i.trip_count,
                }),
        });
    }
}

/// Loop texts sent over a channel in batches of a fixed size (the last one shorter), so
/// the scan runs on its own thread beside the work on the batches it found.
pub struct TextBatches {
    batch: Vec<Vec<u8>>,
    size: usize,
    found: std::sync::mpsc::SyncSender<Vec<Vec<u8>>>,
}

impl TextBatches {
    pub fn new(found: std::sync::mpsc::SyncSender<Vec<Vec<u8>>>, size: usize) -> TextBatches {
        TextBatches {
            batch: Vec::with_capacity(size),
            size,
            found,
        }
    }

    /// Adds one loop's text; sends the batch once it is full.
    pub fn push(&mut self, text: Vec<u8>) -> Result<(), String> {
        self.batch.push(text);
        if self.batch.len() < self.size {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(self.size));
        self.found.send(full).map_err(|e| e.to_string())
    }

    /// Sends what is left.
    pub fn finish(self) -> Result<(), String> {
        self.found.send(self.batch).map_err(|e| e.to_string())
    }
}
