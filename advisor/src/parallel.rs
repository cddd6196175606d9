//! When work is handed to threads. Rayon's pool costs its start (a thread per core, each
//! spinning for a while after every job before it sleeps) whether or not there is work to
//! share: on a one-function file that is a few percent of the whole run, so a single item
//! runs here and the pool is never started.

/// The threads the analysis may use, read without starting rayon's pool: a positive
/// `RAYON_NUM_THREADS` (which rayon's pool honours too), else the machine's parallelism.
pub fn threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
}

/// `f` of each item, in the items' order: on rayon's pool when there are several, on this
/// thread when there is one or none.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    if items.len() < 2 {
        return items.iter().map(f).collect();
    }
    use rayon::prelude::*;
    items.par_iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_either_way() {
        for n in [0usize, 1, 2, 57] {
            let items: Vec<usize> = (0..n).collect();
            let squares = map(&items, |&k| k * k);
            assert_eq!(squares, items.iter().map(|k| k * k).collect::<Vec<_>>());
        }
        assert!(threads() >= 1);
    }
}
