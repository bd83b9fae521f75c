//! Which CPUs each rank is pinned to, computed from the hwloc topology before any rank starts.

use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

use crate::args::BindTo;

/// The OS indices of the CPUs (hardware threads) one rank may run on.
pub type CpuList = Vec<usize>;

/// The binding of every rank, plus a note for the user when a requested binding cannot be done.
#[derive(Debug, Default)]
pub struct Plan {
    /// `cpus[i]` is rank i's CPU list; `None` leaves the rank unbound.
    pub cpus: Vec<Option<CpuList>>,
    /// Why a requested binding was not applied.
    pub warning: Option<String>,
}

impl Plan {
    fn unbound(np: usize, warning: Option<String>) -> Plan {
        Plan {
            cpus: vec![None; np],
            warning,
        }
    }
}

/// The CPUs this process may run on (`taskset`, cgroups); `None` if unknown.
fn allowed_cpus() -> Option<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is the empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid cpu_set_t of the size passed.
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

/// The CPU lists of the objects of `ty` (cores or NUMA nodes), restricted to the CPUs this
/// process may use, skipping objects left without CPUs.
fn cpu_lists(topology: &Topology, ty: ObjectType) -> Vec<CpuList> {
    let allowed = allowed_cpus();
    topology
        .objects_with_type(ty)
        .filter_map(|obj| obj.cpuset())
        .map(|set| {
            set.iter_set()
                .map(usize::from)
                .filter(|c| allowed.as_ref().is_none_or(|a| a.contains(c)))
                .collect::<CpuList>()
        })
        .filter(|cpus| !cpus.is_empty())
        .collect()
}

/// Rank i gets `units[i % units.len()]`.
fn round_robin(units: &[CpuList], np: usize) -> Vec<Option<CpuList>> {
    (0..np)
        .map(|i| Some(units[i % units.len()].clone()))
        .collect()
}

/// Plans the binding of `np` ranks. `requested` is the `--bind-to` value; `None` means the
/// default: one core per rank when `np` fits on the cores, no binding when oversubscribed.
pub fn plan(requested: Option<BindTo>, np: usize) -> Plan {
    if requested == Some(BindTo::None) {
        return Plan::unbound(np, None);
    }
    let topology = match Topology::new() {
        Ok(t) => t,
        Err(e) => {
            let warning = requested
                .map(|_| format!("cannot read the hwloc topology ({e}); ranks are not bound"));
            return Plan::unbound(np, warning);
        }
    };
    let cores = cpu_lists(&topology, ObjectType::Core);
    match requested {
        None if !cores.is_empty() && np <= cores.len() => Plan {
            cpus: round_robin(&cores, np),
            warning: None,
        },
        None => Plan::unbound(np, None),
        Some(BindTo::Core) if !cores.is_empty() => Plan {
            cpus: round_robin(&cores, np),
            warning: None,
        },
        Some(BindTo::Numa) => {
            let nodes = cpu_lists(&topology, ObjectType::NUMANode);
            if nodes.is_empty() {
                Plan::unbound(
                    np,
                    Some("hwloc reports no NUMA node with CPUs; ranks are not bound".into()),
                )
            } else {
                Plan {
                    cpus: round_robin(&nodes, np),
                    warning: None,
                }
            }
        }
        Some(_) => Plan::unbound(
            np,
            Some("hwloc reports no core; ranks are not bound".into()),
        ),
    }
}

/// Formats a CPU list compactly, e.g. `0-3,8`.
pub fn format_cpus(cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_wraps() {
        let units = vec![vec![0, 1], vec![2, 3]];
        let got = round_robin(&units, 3);
        assert_eq!(
            got,
            vec![Some(vec![0, 1]), Some(vec![2, 3]), Some(vec![0, 1])]
        );
    }

    #[test]
    fn none_means_unbound() {
        let p = plan(Some(BindTo::None), 3);
        assert_eq!(p.cpus, vec![None, None, None]);
        assert!(p.warning.is_none());
    }

    #[test]
    fn default_binds_when_it_fits_and_not_when_oversubscribed() {
        let Ok(topology) = Topology::new() else {
            eprintln!("skipped: no hwloc topology");
            return;
        };
        let cores = cpu_lists(&topology, ObjectType::Core).len();
        assert!(cores >= 1);
        let p = plan(None, cores);
        assert!(p.cpus.iter().all(Option::is_some));
        // Distinct cores for distinct ranks.
        let mut seen: Vec<usize> = p.cpus.iter().flatten().flatten().copied().collect();
        let total = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), total);
        let p = plan(None, cores + 1);
        assert!(p.cpus.iter().all(Option::is_none));
        let p = plan(Some(BindTo::Core), cores + 1);
        assert_eq!(p.cpus[0], p.cpus[cores]);
    }

    #[test]
    fn formats_ranges() {
        assert_eq!(format_cpus(&[]), "");
        assert_eq!(format_cpus(&[3]), "3");
        assert_eq!(format_cpus(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    }
}
