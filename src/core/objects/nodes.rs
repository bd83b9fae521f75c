//! The node layout of a communicator: which of its ranks share a node, computed once per
//! communicator from the launcher's node map (`Runtime::node_of_world`) and cached on it.
//!
//! The node-aware collectives (`coll::algos::hier`) run their phases over sub-groups of a
//! communicator: the ranks of one node, the node leaders, and the P *object* groups (the k-th
//! local rank of every node, PiP-MColl's objects). These groups are rank lists over the
//! parent's collective context, not communicators of their own: a schedule addresses them by
//! translating group positions to parent ranks (`Schedule::group`), so they need no context
//! agreement and are usable from nonblocking and persistent calls at once.

use crate::core::runtime::Runtime;
use std::sync::Arc;

/// How the ranks of a communicator sit on nodes. Nodes are numbered in order of their first
/// rank; within a node, ranks keep communicator order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLayout {
    /// Node index of each rank.
    pub node_of: Vec<u32>,
    /// Position of each rank among the ranks of its node (its local rank).
    pub local_of: Vec<u32>,
    /// The ranks of each node, ascending.
    pub members: Vec<Arc<[i32]>>,
    /// The first rank of each node (its leader), ascending.
    pub leaders: Arc<[i32]>,
}

impl NodeLayout {
    /// The layout of ranks whose nodes are `node_key[r]` (any labels; equal labels share a
    /// node).
    pub fn from_keys(node_key: &[u64]) -> NodeLayout {
        let mut keys: Vec<u64> = Vec::new();
        let mut lists: Vec<Vec<i32>> = Vec::new();
        let mut node_of = Vec::with_capacity(node_key.len());
        let mut local_of = Vec::with_capacity(node_key.len());
        for (r, k) in node_key.iter().enumerate() {
            let n = match keys.iter().position(|x| x == k) {
                Some(n) => n,
                None => {
                    keys.push(*k);
                    lists.push(Vec::new());
                    keys.len() - 1
                }
            };
            node_of.push(n as u32);
            local_of.push(lists[n].len() as u32);
            lists[n].push(r as i32);
        }
        let leaders: Arc<[i32]> = lists.iter().map(|l| l[0]).collect();
        NodeLayout {
            node_of,
            local_of,
            members: lists.into_iter().map(Arc::from).collect(),
            leaders,
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.members.len()
    }

    /// Most ranks on one node.
    pub fn max_per_node(&self) -> usize {
        self.members.iter().map(|m| m.len()).max().unwrap_or(0)
    }

    /// Average ranks per node, rounded down (MPICH's `comm_avg_ppn`).
    pub fn avg_per_node(&self) -> usize {
        self.node_of.len() / self.nodes().max(1)
    }

    /// Whether a node-aware algorithm has anything to gain: more than one node, and some
    /// node with more than one rank.
    pub fn is_hierarchical(&self) -> bool {
        self.nodes() > 1 && self.max_per_node() > 1
    }

    /// Whether every node holds the same number of ranks.
    pub fn is_uniform(&self) -> bool {
        self.members
            .iter()
            .all(|m| m.len() == self.members[0].len())
    }

    /// The ranks of `rank`'s node.
    pub fn node_members(&self, rank: i32) -> &Arc<[i32]> {
        &self.members[self.node_of[rank as usize] as usize]
    }

    /// Object group `k`: the `k`-th local rank of every node that has one, in node order.
    pub fn object_group(&self, k: usize) -> Arc<[i32]> {
        self.members
            .iter()
            .filter_map(|m| m.get(k).copied())
            .collect()
    }
}

/// Node labels of the processes of a group whose members are processes `procs` (world ranks,
/// or indices after the world's for processes of other jobs): the launcher's node of each
/// world rank; a process of another job, whose node is unknown here, counts as a node of its
/// own.
pub fn node_keys(node_of_world: &[u32], procs: impl Iterator<Item = u32>) -> Vec<u64> {
    procs
        .map(|p| match node_of_world.get(p as usize) {
            Some(&n) if n != u32::MAX => n as u64,
            _ => (1u64 << 32) | p as u64,
        })
        .collect()
}

/// The node layout of communicator `idx` (table index; of its local group for an
/// intercommunicator), computed on the first call and cached on the communicator.
pub fn layout(rt: &Runtime, idx: u32) -> Arc<NodeLayout> {
    let c = rt.comms.get(idx).expect("a live communicator");
    c.nodes
        .get_or_init(|| {
            let keys = node_keys(&rt.node_of_world, (0..c.size).map(|r| c.map.world(r)));
            Arc::new(NodeLayout::from_keys(&keys))
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uneven_interleaved_layout() {
        // Ranks 0..5 on nodes a b a b b.
        let l = NodeLayout::from_keys(&[7, 3, 7, 3, 3]);
        assert_eq!(l.nodes(), 2);
        assert_eq!(l.node_of, vec![0, 1, 0, 1, 1]);
        assert_eq!(l.local_of, vec![0, 0, 1, 1, 2]);
        assert_eq!(&*l.members[0], &[0, 2]);
        assert_eq!(&*l.members[1], &[1, 3, 4]);
        assert_eq!(&*l.leaders, &[0, 1]);
        assert_eq!(l.max_per_node(), 3);
        assert_eq!(l.avg_per_node(), 2);
        assert!(l.is_hierarchical());
        assert!(!l.is_uniform());
        assert!(NodeLayout::from_keys(&[4, 5, 5, 4]).is_uniform());
        assert_eq!(&*l.object_group(0), &[0, 1]);
        assert_eq!(&*l.object_group(2), &[4]);
        assert_eq!(&**l.node_members(3), &[1, 3, 4]);
    }

    #[test]
    fn flat_layouts_are_not_hierarchical() {
        assert!(!NodeLayout::from_keys(&[1, 1, 1]).is_hierarchical());
        assert!(!NodeLayout::from_keys(&[1, 2, 3]).is_hierarchical());
        assert!(!NodeLayout::from_keys(&[]).is_hierarchical());
    }

    #[test]
    fn other_jobs_processes_are_nodes_of_their_own() {
        let keys = node_keys(&[0, 0, 1, u32::MAX], [0, 1, 2, 3, 9].into_iter());
        let l = NodeLayout::from_keys(&keys);
        assert_eq!(l.nodes(), 4);
        assert_eq!(&*l.members[0], &[0, 1]);
    }
}
