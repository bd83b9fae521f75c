//! Where each rank runs: a domain of cores per rank, computed from the hwloc topology before
//! any rank starts.
//!
//! The rule (hybrid MPI+threads codes need a rank's threads on cores of their own): the
//! machine's cores, in hwloc's logical order, are divided among the machine's ranks in
//! contiguous blocks, `cores / ranks` each (the first `cores % ranks` ranks take one more), or
//! `--cpus-per-rank M` each. Contiguous blocks in logical order share caches and sockets
//! (compact placement). `--bind-to l3cache|numa|socket` widens each domain to the objects of
//! that type it touches; `--bind-to core` keeps it (the default); `none` binds nothing. When
//! the ranks do not fit (more ranks than cores, or `M * ranks > cores`), the default leaves
//! them unbound, and an explicit `--bind-to core` puts one core per rank, round-robin.
//!
//! A topology read from `HWLOC_XMLFILE` (another machine's) is planned and reported but not
//! applied: its CPUs are not this machine's.

use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

use crate::args::BindTo;

/// The OS indices of the CPUs (hardware threads) one rank may run on.
pub type CpuList = Vec<usize>;

/// One rank's domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain {
    /// The CPUs it is bound to.
    pub cpus: CpuList,
    /// The cores of the domain, each as its CPUs: the rank's OpenMP places.
    pub cores: Vec<CpuList>,
}

impl Domain {
    /// `OMP_PLACES` for the domain: one place per core, e.g. `{0,4},{1,5}`.
    pub fn omp_places(&self) -> String {
        self.cores
            .iter()
            .map(|c| {
                let cpus: Vec<String> = c.iter().map(|x| x.to_string()).collect();
                format!("{{{}}}", cpus.join(","))
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The placement of every rank, plus a note for the user when a requested binding cannot be
/// done.
#[derive(Debug, Default)]
pub struct Plan {
    /// `domains[i]` is rank i's domain; `None` leaves the rank unbound.
    pub domains: Vec<Option<Domain>>,
    /// Why a requested binding was not applied.
    pub warning: Option<String>,
    /// The plan describes another machine (`HWLOC_XMLFILE`): report it, do not apply it.
    pub foreign: bool,
}

impl Plan {
    fn unbound(np: usize, warning: Option<String>) -> Plan {
        Plan {
            domains: vec![None; np],
            warning,
            foreign: false,
        }
    }

    /// Rank `r`'s domain, when it is to be bound here.
    pub fn domain(&self, r: usize) -> Option<&Domain> {
        if self.foreign {
            return None;
        }
        self.domains[r].as_ref()
    }
}

/// What the user asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Request {
    /// `--bind-to`; `None`: the default (domains when they fit, else unbound).
    pub bind_to: Option<BindTo>,
    /// `--cpus-per-rank` (or `--map-by ...:pe=M`): cores per domain.
    pub cpus_per_rank: Option<usize>,
}

/// The CPU lists of the objects of `ty`, in logical order, restricted to `allowed` (when
/// known), skipping objects left without CPUs.
fn cpu_lists(topology: &Topology, ty: ObjectType, allowed: Option<&[usize]>) -> Vec<CpuList> {
    topology
        .objects_with_type(ty)
        .filter_map(|obj| obj.cpuset())
        .map(|set| {
            set.iter_set()
                .map(usize::from)
                .filter(|c| allowed.is_none_or(|a| a.contains(c)))
                .collect::<CpuList>()
        })
        .filter(|cpus| !cpus.is_empty())
        .collect()
}

/// The core indices of each rank's domain: contiguous blocks of `per` cores (`None`: the cores
/// shared out, the first ranks taking the remainder); `None` when the ranks do not fit.
pub fn blocks(ncores: usize, np: usize, per: Option<usize>) -> Option<Vec<std::ops::Range<usize>>> {
    if np == 0 || ncores == 0 {
        return None;
    }
    let (base, extra) = match per {
        Some(m) if m >= 1 && m.checked_mul(np)? <= ncores => (m, 0),
        Some(_) => return None,
        None if np <= ncores => (ncores / np, ncores % np),
        None => return None,
    };
    Some(
        (0..np)
            .map(|i| {
                let start = i * base + i.min(extra);
                start..start + base + usize::from(i < extra)
            })
            .collect(),
    )
}

/// `cpus` widened to every group (L3 cache, NUMA node, socket) it touches.
fn widen(cpus: &[usize], groups: &[CpuList]) -> CpuList {
    let mut out: CpuList = groups
        .iter()
        .filter(|g| g.iter().any(|c| cpus.contains(c)))
        .flatten()
        .copied()
        .collect();
    out.extend(cpus);
    out.sort_unstable();
    out.dedup();
    out
}

/// Plans the placement of `np` ranks on `cores` (each core as its CPUs, in logical order)
/// whose enclosing objects of the `--bind-to` type are `groups`.
pub fn plan_on(cores: &[CpuList], groups: &[CpuList], req: Request, np: usize) -> Plan {
    if req.bind_to == Some(BindTo::None) {
        return Plan::unbound(np, None);
    }
    if cores.is_empty() {
        let warning = req
            .bind_to
            .map(|_| "hwloc reports no core; ranks are not bound".to_string());
        return Plan::unbound(np, warning);
    }
    let Some(blocks) = blocks(cores.len(), np, req.cpus_per_rank) else {
        return match (req.bind_to, req.cpus_per_rank) {
            (_, Some(m)) => Plan::unbound(
                np,
                Some(format!(
                    "{np} ranks of {m} cores each do not fit on {} cores; ranks are not bound",
                    cores.len()
                )),
            ),
            // An explicit core binding when oversubscribed: one core each, round-robin.
            (Some(BindTo::Core), None) => Plan {
                domains: (0..np)
                    .map(|i| {
                        let core = &cores[i % cores.len()];
                        Some(Domain {
                            cpus: core.clone(),
                            cores: vec![core.clone()],
                        })
                    })
                    .collect(),
                warning: None,
                foreign: false,
            },
            _ => Plan::unbound(np, None),
        };
    };
    let domains = blocks
        .into_iter()
        .map(|b| {
            let own: Vec<CpuList> = cores[b].to_vec();
            let mut cpus: CpuList = own.iter().flatten().copied().collect();
            cpus.sort_unstable();
            if matches!(
                req.bind_to,
                Some(BindTo::L3Cache | BindTo::Numa | BindTo::Socket)
            ) {
                cpus = widen(&cpus, groups);
            }
            Some(Domain { cpus, cores: own })
        })
        .collect();
    Plan {
        domains,
        warning: None,
        foreign: false,
    }
}

/// The machine's topology as hwloc's built-in components see it (cores, caches, NUMA nodes,
/// or the file named by `HWLOC_XMLFILE`, which the built-in XML reader parses). hwloc would
/// otherwise load every plugin of its plugin directory first (PCI, OpenCL, OpenGL, libxml2 and
/// the libraries they pull in): about half of a small job's launch time, for devices placement
/// never looks at. A `HWLOC_PLUGINS_PATH` the user set is honoured; ours is removed again
/// before any rank is started, so ranks inherit the user's environment.
fn topology_without_plugins() -> Result<Topology, hwlocality::errors::RawHwlocError> {
    const VAR: &str = "HWLOC_PLUGINS_PATH";
    let ours = std::env::var_os(VAR).is_none();
    if ours {
        // No such directory: hwloc finds no plugin to load.
        std::env::set_var(VAR, "/nonexistent/hympiexec-no-hwloc-plugins");
    }
    let topology = Topology::new();
    if ours {
        std::env::remove_var(VAR);
    }
    topology
}

/// Plans the placement of the `np` ranks of this machine (see the module docs).
pub fn plan(req: Request, np: usize) -> Plan {
    if req.bind_to == Some(BindTo::None) {
        return Plan::unbound(np, None);
    }
    let foreign = std::env::var_os("HWLOC_XMLFILE").is_some_and(|v| !v.is_empty());
    let topology = match topology_without_plugins() {
        Ok(t) => t,
        Err(e) => {
            let warning = req
                .bind_to
                .map(|_| format!("cannot read the hwloc topology ({e}); ranks are not bound"));
            return Plan::unbound(np, warning);
        }
    };
    let allowed = if foreign {
        None
    } else {
        hympi::platform::affinity::own_cpus()
    };
    let cores = cpu_lists(&topology, ObjectType::Core, allowed.as_deref());
    let group_type = match req.bind_to {
        Some(BindTo::L3Cache) => Some(ObjectType::L3Cache),
        Some(BindTo::Numa) => Some(ObjectType::NUMANode),
        Some(BindTo::Socket) => Some(ObjectType::Package),
        _ => None,
    };
    let groups = group_type
        .map(|t| cpu_lists(&topology, t, allowed.as_deref()))
        .unwrap_or_default();
    let mut plan = plan_on(&cores, &groups, req, np);
    if group_type.is_some() && groups.is_empty() && plan.warning.is_none() {
        plan.warning = Some(format!(
            "hwloc reports no {} with CPUs; ranks are bound to their cores",
            match req.bind_to {
                Some(BindTo::L3Cache) => "L3 cache",
                Some(BindTo::Numa) => "NUMA node",
                _ => "socket",
            }
        ));
    }
    if foreign {
        plan.foreign = true;
        let note = "the topology comes from HWLOC_XMLFILE (another machine): bindings are reported, not applied";
        plan.warning = Some(match plan.warning.take() {
            Some(w) => format!("{w}; {note}"),
            None => note.to_string(),
        });
    }
    plan
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

/// The `--report-bindings` line of rank `r`.
pub fn report_line(r: usize, domain: Option<&Domain>) -> String {
    match domain {
        Some(d) => format!(
            "rank {r} bound to CPUs {} ({} core{})",
            format_cpus(&d.cpus),
            d.cores.len(),
            if d.cores.len() == 1 { "" } else { "s" }
        ),
        None => format!("rank {r} not bound"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` cores of `t` hardware threads each, numbered like Linux does on x86 (core i has
    /// CPUs i, i + n, ...).
    fn cores(n: usize, t: usize) -> Vec<CpuList> {
        (0..n)
            .map(|i| (0..t).map(|k| i + k * n).collect())
            .collect()
    }

    fn req(bind_to: Option<BindTo>, per: Option<usize>) -> Request {
        Request {
            bind_to,
            cpus_per_rank: per,
        }
    }

    fn cpus(p: &Plan) -> Vec<Option<CpuList>> {
        p.domains
            .iter()
            .map(|d| d.as_ref().map(|d| d.cpus.clone()))
            .collect()
    }

    #[test]
    fn cores_are_shared_out_in_contiguous_blocks() {
        let one = blocks(2, 1, None).unwrap();
        assert_eq!((one.len(), one[0].clone()), (1, 0..2));
        assert_eq!(blocks(2, 2, None), Some(vec![0..1, 1..2]));
        assert_eq!(blocks(2, 3, None), None);
        assert_eq!(blocks(16, 3, None), Some(vec![0..6, 6..11, 11..16]));
        assert_eq!(
            blocks(16, 5, None),
            Some(vec![0..4, 4..7, 7..10, 10..13, 13..16])
        );
        assert_eq!(blocks(16, 3, Some(4)), Some(vec![0..4, 4..8, 8..12]));
        assert_eq!(blocks(16, 5, Some(4)), None);
        assert_eq!(blocks(16, 5, Some(0)), None);
    }

    #[test]
    fn one_rank_gets_the_machine_and_two_split_it() {
        let c = cores(2, 1);
        let p = plan_on(&c, &[], req(None, None), 1);
        assert_eq!(cpus(&p), vec![Some(vec![0, 1])]);
        assert_eq!(p.domains[0].as_ref().unwrap().omp_places(), "{0},{1}");
        let p = plan_on(&c, &[], req(None, None), 2);
        assert_eq!(cpus(&p), vec![Some(vec![0]), Some(vec![1])]);
    }

    #[test]
    fn oversubscribed_is_unbound_by_default_and_round_robin_on_request() {
        let c = cores(2, 1);
        let p = plan_on(&c, &[], req(None, None), 3);
        assert_eq!(cpus(&p), vec![None, None, None]);
        let p = plan_on(&c, &[], req(Some(BindTo::Core), None), 3);
        assert_eq!(cpus(&p), vec![Some(vec![0]), Some(vec![1]), Some(vec![0])]);
        let p = plan_on(&c, &[], req(None, Some(2)), 2);
        assert_eq!(cpus(&p), vec![None, None]);
        assert!(p.warning.unwrap().contains("do not fit"));
    }

    #[test]
    fn two_sockets_of_eight_cores_with_hyperthreads() {
        // 2 sockets x 8 cores x 2 threads: core i has CPUs i and i + 16.
        let c = cores(16, 2);
        let sockets: Vec<CpuList> = vec![
            (0..8).chain(16..24).collect(),
            (8..16).chain(24..32).collect(),
        ];
        let p = plan_on(&c, &sockets, req(None, None), 2);
        let d0 = p.domains[0].as_ref().unwrap();
        assert_eq!(d0.cores.len(), 8);
        assert_eq!(format_cpus(&d0.cpus), "0-7,16-23");
        assert!(d0.omp_places().starts_with("{0,16},{1,17}"));
        // Three ranks: 6 + 5 + 5 cores; the second spans both sockets.
        let p = plan_on(&c, &sockets, req(None, None), 3);
        let sizes: Vec<usize> = p
            .domains
            .iter()
            .map(|d| d.as_ref().unwrap().cores.len())
            .collect();
        assert_eq!(sizes, vec![6, 5, 5]);
        assert_eq!(
            format_cpus(&p.domains[1].as_ref().unwrap().cpus),
            "6-10,22-26"
        );
        // --bind-to socket widens the second rank to both sockets, the others to theirs.
        let p = plan_on(&c, &sockets, req(Some(BindTo::Socket), None), 3);
        assert_eq!(
            format_cpus(&p.domains[0].as_ref().unwrap().cpus),
            "0-7,16-23"
        );
        assert_eq!(format_cpus(&p.domains[1].as_ref().unwrap().cpus), "0-31");
        assert_eq!(
            format_cpus(&p.domains[2].as_ref().unwrap().cpus),
            "8-15,24-31"
        );
        // --cpus-per-rank 2: compact pairs of cores from the start.
        let p = plan_on(&c, &sockets, req(None, Some(2)), 5);
        assert_eq!(
            format_cpus(&p.domains[4].as_ref().unwrap().cpus),
            "8-9,24-25"
        );
    }

    #[test]
    fn none_means_unbound() {
        let p = plan(req(Some(BindTo::None), None), 3);
        assert_eq!(cpus(&p), vec![None, None, None]);
        assert!(p.warning.is_none());
    }

    #[test]
    fn this_machine_default_gives_disjoint_domains_covering_the_cores() {
        let Ok(topology) = Topology::new() else {
            eprintln!("skipped: no hwloc topology");
            return;
        };
        if std::env::var_os("HWLOC_XMLFILE").is_some() {
            return;
        }
        let allowed = hympi::platform::affinity::own_cpus();
        let ncores = cpu_lists(&topology, ObjectType::Core, allowed.as_deref()).len();
        assert!(ncores >= 1);
        for np in 1..=ncores {
            let p = plan(Request::default(), np);
            let mut seen: Vec<usize> = p
                .domains
                .iter()
                .flatten()
                .flat_map(|d| d.cpus.clone())
                .collect();
            let total = seen.len();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), total, "domains overlap at {np} ranks");
            let cores: usize = p.domains.iter().flatten().map(|d| d.cores.len()).sum();
            assert_eq!(cores, ncores, "{np} ranks do not cover the cores");
        }
        let p = plan(Request::default(), ncores + 1);
        assert!(p.domains.iter().all(Option::is_none));
    }

    #[test]
    fn formats_ranges() {
        assert_eq!(format_cpus(&[]), "");
        assert_eq!(format_cpus(&[3]), "3");
        assert_eq!(format_cpus(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    }
}
