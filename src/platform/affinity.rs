//! A rank's domain of cores when its launcher gave it no binding (MPICH's Hydra by default,
//! Slurm without `--cpu-bind`): the same rule as `hympiexec`'s (the cores split among the
//! node's ranks in contiguous blocks), applied by the rank itself at `MPI_Init` to every thread
//! it has. It never widens: the cores are those of the process's affinity mask, and a mask
//! narrower than the machine's online CPUs means the launcher bound the rank already, so it is
//! left alone. Cores are read from sysfs (`topology/physical_package_id` and `core_id`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// CPUs of this process's domain as bound by [`bind_domain`] (0: it bound nothing).
static BOUND: AtomicUsize = AtomicUsize::new(0);

/// The number of CPUs of this rank's domain, when a launcher or [`bind_domain`] gave it one:
/// `hympiexec` says so in `HYMPI_DOMAIN_CPUS`. The calling thread's own mask may be narrower:
/// an OpenMP runtime with `OMP_PROC_BIND` pins the main thread to its first place before
/// `main` runs, but the process has the whole domain for its threads.
pub fn domain_cpus() -> Option<usize> {
    match BOUND.load(Ordering::Relaxed) {
        0 => std::env::var("HYMPI_DOMAIN_CPUS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|&n: &usize| n > 0),
        n => Some(n),
    }
}

/// The CPUs the calling thread may run on (`taskset`, cgroups, a launcher's binding); `None`
/// if unknown.
pub fn own_cpus() -> Option<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is the empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    Some(
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: cpu < CPU_SETSIZE, inside the set.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect(),
    )
}

/// The machine's online CPUs (`/sys/devices/system/cpu/online`, e.g. `0-3,8`).
fn online_cpus() -> Option<Vec<usize>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    parse_list(text.trim())
}

/// Parses a kernel CPU list (`0-3,8`).
fn parse_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().ok()?..=b.parse::<usize>().ok()?),
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// `cpus` grouped into cores, ordered by (package, core id): the logical order of cores.
fn cores_of(cpus: &[usize]) -> Vec<Vec<usize>> {
    let read = |cpu: usize, what: &str| -> usize {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            // Unknown: a core of its own.
            .unwrap_or(usize::MAX - cpu)
    };
    let mut cores: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for &cpu in cpus {
        cores
            .entry((read(cpu, "physical_package_id"), read(cpu, "core_id")))
            .or_default()
            .push(cpu);
    }
    cores.into_values().collect()
}

/// The cores (indices into `ncores` cores) of local rank `rank` of `size`: contiguous blocks,
/// the first `ncores % size` ranks one core more; `None` when oversubscribed.
pub fn block(ncores: usize, rank: usize, size: usize) -> Option<std::ops::Range<usize>> {
    if size == 0 || rank >= size || size > ncores {
        return None;
    }
    let (base, extra) = (ncores / size, ncores % size);
    let start = rank * base + rank.min(extra);
    Some(start..start + base + usize::from(rank < extra))
}

/// Binds every thread of this process to local rank `rank`'s domain among `size` ranks on the
/// node, when the process's affinity is the whole machine. Returns the CPUs bound to.
pub fn bind_domain(rank: usize, size: usize) -> Option<Vec<usize>> {
    let own = own_cpus()?;
    if online_cpus().is_some_and(|all| all != own) {
        // The launcher (or the user, with taskset) chose a binding: keep it.
        return None;
    }
    let cores = cores_of(&own);
    let range = block(cores.len(), rank, size)?;
    let mut cpus: Vec<usize> = cores[range].iter().flatten().copied().collect();
    cpus.sort_unstable();
    if cpus.len() == own.len() {
        return Some(cpus);
    }
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: c < CPU_SETSIZE, inside the set.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // Every thread: the OpenMP runtime may have started its pool before MPI_Init.
    let tids: Vec<i32> = std::fs::read_dir("/proc/self/task")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    for tid in tids {
        // SAFETY: `set` is a valid cpu_set_t of the size passed; a thread that exited in
        // the meantime makes the call fail harmlessly.
        unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    }
    BOUND.store(cpus.len(), Ordering::Relaxed);
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_share_the_cores_out() {
        assert_eq!(block(2, 0, 1), Some(0..2));
        assert_eq!(block(2, 1, 2), Some(1..2));
        assert_eq!(block(2, 0, 3), None);
        assert_eq!(block(16, 1, 3), Some(6..11));
        assert_eq!(block(16, 4, 5), Some(13..16));
    }

    #[test]
    fn kernel_lists_parse() {
        assert_eq!(parse_list("0-3,8"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_list("5"), Some(vec![5]));
        assert_eq!(parse_list("x"), None);
    }

    #[test]
    fn this_machines_cpus_form_cores() {
        let own = own_cpus().unwrap();
        let cores = cores_of(&own);
        let n: usize = cores.iter().map(Vec::len).sum();
        assert_eq!(n, own.len());
        assert!(!cores.is_empty());
    }
}
