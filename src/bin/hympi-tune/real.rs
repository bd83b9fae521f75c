//! Real measurements: each point a job launched with `hympiexec` on this machine (virtual
//! nodes through `-ppn`), the algorithm forced with `HYMPI_<COLL>_ALGORITHM`, timed by the
//! OSU-style programs of `benches/c` (`coll_move`, `allreduce`).

use hympi::coll::tuning::Coll;
use hympi::sim::Algorithm;
use hympi::tune::{Bench, Layout};
use std::path::PathBuf;
use std::process::Command;

/// Launches the benchmark programs in `programs` with `exec`.
pub struct Real {
    /// `hympiexec`.
    pub exec: PathBuf,
    /// The folder holding the compiled `coll_move` and `allreduce`.
    pub programs: PathBuf,
    /// Runs per point; the median counts.
    pub reps: usize,
}

impl Real {
    fn command(&self, coll: Coll, layout: Layout, bytes: usize) -> Result<Command, String> {
        let mut c = Command::new(&self.exec);
        c.arg("-n").arg(layout.ranks().to_string());
        if layout.nodes > 1 {
            c.arg("-ppn").arg(layout.ppn.to_string());
        }
        match coll {
            Coll::Allreduce => {
                c.arg(self.programs.join("allreduce"));
            }
            Coll::Bcast | Coll::Allgather | Coll::Alltoall | Coll::Gather | Coll::Scatter => {
                c.arg(self.programs.join("coll_move"))
                    .arg("-o")
                    .arg(coll.name());
            }
            _ => return Err(format!("no benchmark program times {}", coll.name())),
        }
        c.arg("-s").arg(bytes.to_string());
        Ok(c)
    }
}

impl Bench for Real {
    fn measure(
        &mut self,
        coll: Coll,
        layout: Layout,
        bytes: usize,
        algo: &Algorithm,
    ) -> Result<Option<f64>, String> {
        // The allreduce program sums doubles.
        let bytes = if coll == Coll::Allreduce {
            bytes.div_ceil(8).max(1) * 8
        } else {
            bytes
        };
        let mut times = Vec::new();
        for _ in 0..self.reps.max(1) {
            let out = self
                .command(coll, layout, bytes)?
                .env(coll.env_var(), algo.to_string())
                .output()
                .map_err(|e| format!("{}: {e}", self.exec.display()))?;
            if !out.status.success() {
                return Err(format!(
                    "{} {algo} {bytes} B on {layout} failed: {}",
                    coll.name(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            let text = String::from_utf8_lossy(&out.stdout);
            let t = text
                .lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| {
                    let mut f = l.split_whitespace();
                    let size: usize = f.next()?.parse().ok()?;
                    let us: f64 = f.next()?.parse().ok()?;
                    (size == bytes).then_some(us)
                })
                .next()
                .ok_or_else(|| format!("no time for {bytes} B in the output:\n{text}"))?;
            times.push(t);
        }
        times.sort_by(f64::total_cmp);
        Ok(Some(times[times.len() / 2]))
    }
}
