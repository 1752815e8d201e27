//! Writes the seed corpus of every target (`seed-*` files under `tools/fuzz/corpus/<target>/`)
//! from the captured wire samples and the unit-test vectors; `scripts/fuzz.sh --seeds` runs it.
#![forbid(unsafe_code)]

use std::fs;
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let out = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    let seeds = namesrv_fuzz::seeds::all(&namesrv_fuzz::seeds::fixtures_dir())?;
    for seed in &seeds {
        let dir = out.join(seed.target);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join(format!("seed-{}", seed.name)), &seed.data)?;
    }
    println!("wrote {} seeds under {}", seeds.len(), out.display());
    Ok(())
}
