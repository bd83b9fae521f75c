//! Process groups: ordered sets of processes, named by their `MPI_COMM_WORLD` ranks.

/// A group: `members[r]` is the world rank of group rank `r`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// World ranks in group-rank order (no duplicates).
    pub members: Vec<u32>,
}

impl Group {
    /// Number of processes.
    pub fn size(&self) -> i32 {
        self.members.len() as i32
    }

    /// Group rank of world rank `w`, if a member.
    pub fn rank_of(&self, w: u32) -> Option<i32> {
        self.members.iter().position(|&m| m == w).map(|r| r as i32)
    }
}
