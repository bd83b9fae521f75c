//! Real measurements: each point a job launched with `hympiexec` on this machine (virtual
//! nodes through `-ppn`), the algorithm forced with `HYMPI_<COLL>_ALGORITHM`, timed by the
//! OSU-style programs of `benches/c` (`coll_move`, `allreduce`). `hympi-tune --real` and
//! `hympi-sim calibrate` measure through it.

use super::bench::Bench;
use super::space::Layout;
use crate::coll::tuning::Coll;
use crate::sim::Algorithm;
use std::path::PathBuf;
use std::process::Command;

/// The rows of a benchmark program's output: each line not starting with `#` read as
/// numbers (lines with a field that is not a number are skipped).
pub fn rows(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            l.split_whitespace()
                .map(|f| f.parse::<f64>().ok())
                .collect::<Option<Vec<f64>>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// Runs `cmd` and returns its standard output, or an error naming `what` with its stderr.
pub fn output(mut cmd: Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

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
            let mut cmd = self.command(coll, layout, bytes)?;
            cmd.env(coll.env_var(), algo.to_string());
            let what = format!("{} {algo} {bytes} B on {layout}", coll.name());
            let text = output(cmd, &what)?;
            let t = rows(&text)
                .iter()
                .find(|r| r.len() >= 2 && r[0] == bytes as f64)
                .map(|r| r[1])
                .ok_or_else(|| format!("no time for {bytes} B in the output:\n{text}"))?;
            times.push(t);
        }
        Ok(Some(median(times)))
    }
}

/// The median of `v` (the upper one of an even count; 0 when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_skip_comments_and_text() {
        let r = rows("# Size  Latency\n8   1.25\nwarning: x\n\n16  2\n");
        assert_eq!(r, vec![vec![8.0, 1.25], vec![16.0, 2.0]]);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(Vec::new()), 0.0);
    }
}
