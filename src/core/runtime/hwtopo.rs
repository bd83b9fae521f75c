//! Where this process runs in the node's hardware (hwloc), for
//! `MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED / HW_UNGUIDED)`.

use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::object::types::ObjectType;
use hwlocality::Topology;

/// Hardware levels from the largest to the smallest, with their `mpi_hw_resource_type` names.
pub const LEVELS: [(ObjectType, &str); 8] = [
    (ObjectType::Machine, "Machine"),
    (ObjectType::Package, "Package"),
    (ObjectType::NUMANode, "NUMANode"),
    (ObjectType::L3Cache, "L3Cache"),
    (ObjectType::L2Cache, "L2Cache"),
    (ObjectType::L1Cache, "L1Cache"),
    (ObjectType::Core, "Core"),
    (ObjectType::PU, "PU"),
];

/// Index in [`LEVELS`] of a resource type name (`"hwloc://NUMANode"`, `"NUMANode"`,
/// case-insensitive; `"Socket"` for Package, `"NUMA"`, `"L3"` ... accepted).
pub fn level_of(name: &str) -> Option<usize> {
    let n = name
        .strip_prefix("hwloc://")
        .unwrap_or(name)
        .to_ascii_lowercase();
    let n = match n.as_str() {
        "socket" => "package",
        "numa" => "numanode",
        "l3" => "l3cache",
        "l2" => "l2cache",
        "l1" => "l1cache",
        "hwthread" => "pu",
        other => other,
    };
    LEVELS.iter().position(|(_, s)| s.to_ascii_lowercase() == n)
}

/// For each level of [`LEVELS`], the logical index of the object that contains all the CPUs
/// this process is bound to, or -1 when the binding spans several objects of that level (or
/// the topology cannot be read).
pub fn containing_objects() -> [i32; LEVELS.len()] {
    let mut out = [-1; LEVELS.len()];
    let Ok(topo) = Topology::new() else {
        return out;
    };
    let Ok(bound) = topo.cpu_binding(CpuBindingFlags::PROCESS) else {
        return out;
    };
    for (i, (ty, _)) in LEVELS.iter().enumerate() {
        if let Some(obj) = topo
            .objects_with_type(*ty)
            .find(|o| o.cpuset().is_some_and(|s| s.includes(&bound)))
        {
            out[i] = obj.logical_index() as i32;
        }
    }
    out
}

/// For each level of [`LEVELS`], how many objects of it the node has (0 when the topology
/// cannot be read).
pub fn object_counts() -> [usize; LEVELS.len()] {
    let mut out = [0; LEVELS.len()];
    if let Ok(topo) = Topology::new() {
        for (i, (ty, _)) in LEVELS.iter().enumerate() {
            out[i] = topo.objects_with_type(*ty).count();
        }
    }
    out
}
