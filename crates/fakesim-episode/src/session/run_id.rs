//! Run ids: eight hex digits, drawn from the clock and the process, that name no directory in
//! the runs directory yet.

use std::path::Path;

/// A fresh run id for `runs_dir`. Looks at the file system: call it off the async runtime.
pub(super) fn new_run_id(runs_dir: &Path) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut seed = (nanos as u64) ^ u64::from(std::process::id()).rotate_left(32);
    loop {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let id = format!("{:08x}", seed >> 32);
        if !runs_dir.join(&id).exists() {
            return id;
        }
    }
}
