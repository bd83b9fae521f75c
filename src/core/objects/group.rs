//! Process groups: ordered sets of processes, named by their `MPI_COMM_WORLD` ranks.
//!
//! A group is a plain list of world ranks. User groups live in `Runtime::groups` (a slab, so
//! stale handles are caught); `MPI_GROUP_EMPTY` is predefined and not stored: every operation
//! whose result is empty returns it (as MPICH does), and freeing it is allowed (it stays valid).
//! Set operations and translations look world ranks up through a dense index (world ranks are
//! small integers), so they are linear in the group sizes.

use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm::Comm;
use crate::core::runtime::Runtime;
use crate::mpi_abi::consts::*;

/// A group: `members[r]` is the world rank of group rank `r`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// World ranks in group-rank order (no duplicates).
    pub members: Vec<u32>,
    /// The session the group derives from (its id; `None`: the world model). Communicators
    /// made from the group belong to that session (its buffered-send buffer serves them).
    pub session: Option<u32>,
}

/// The empty group (`MPI_GROUP_EMPTY`).
pub static EMPTY: Group = Group {
    members: Vec::new(),
    session: None,
};

/// Position of each world rank in a list: `pos[w]` is the index of world rank `w`, or -1.
struct Index {
    pos: Vec<i32>,
}

impl Index {
    fn of(members: &[u32]) -> Index {
        let len = members.iter().map(|&m| m as usize + 1).max().unwrap_or(0);
        let mut pos = vec![-1; len];
        for (i, &m) in members.iter().enumerate() {
            pos[m as usize] = i as i32;
        }
        Index { pos }
    }

    #[inline]
    fn get(&self, w: u32) -> Option<i32> {
        match self.pos.get(w as usize) {
            Some(&p) if p >= 0 => Some(p),
            _ => None,
        }
    }
}

impl Group {
    /// A group of the given world ranks, in group-rank order.
    pub fn new(members: Vec<u32>) -> Group {
        Group {
            members,
            session: None,
        }
    }

    /// A group of `members` derived from this one (it keeps the session).
    fn derived(&self, members: Vec<u32>) -> Group {
        Group {
            members,
            session: self.session,
        }
    }

    /// The local group of an intracommunicator (its ranks in order).
    pub fn of_comm(c: &Comm) -> Group {
        Group {
            members: c.members(),
            session: c.session,
        }
    }

    /// Number of processes.
    pub fn size(&self) -> i32 {
        self.members.len() as i32
    }

    /// Group rank of world rank `w`, if a member.
    pub fn rank_of(&self, w: u32) -> Option<i32> {
        self.members.iter().position(|&m| m == w).map(|r| r as i32)
    }

    /// `MPI_Group_compare`: `MPI_IDENT` (same members, same order), `MPI_SIMILAR` (same
    /// members, other order) or `MPI_UNEQUAL`.
    pub fn compare(&self, other: &Group) -> i32 {
        if self.members == other.members {
            return MPI_IDENT;
        }
        if self.members.len() != other.members.len() {
            return MPI_UNEQUAL;
        }
        let idx = Index::of(&other.members);
        if self.members.iter().all(|&m| idx.get(m).is_some()) {
            MPI_SIMILAR
        } else {
            MPI_UNEQUAL
        }
    }

    /// `MPI_Group_union`: the members of `self` in order, then those of `other` that are not
    /// in `self`, in `other`'s order.
    pub fn union(&self, other: &Group) -> Group {
        let idx = Index::of(&self.members);
        let mut members = self.members.clone();
        members.extend(other.members.iter().filter(|&&m| idx.get(m).is_none()));
        self.derived(members)
    }

    /// `MPI_Group_intersection`: the members of `self` that are also in `other`, in `self`'s
    /// order.
    pub fn intersection(&self, other: &Group) -> Group {
        let idx = Index::of(&other.members);
        self.derived(
            self.members
                .iter()
                .copied()
                .filter(|&m| idx.get(m).is_some())
                .collect(),
        )
    }

    /// `MPI_Group_difference`: the members of `self` that are not in `other`, in `self`'s
    /// order.
    pub fn difference(&self, other: &Group) -> Group {
        let idx = Index::of(&other.members);
        self.derived(
            self.members
                .iter()
                .copied()
                .filter(|&m| idx.get(m).is_none())
                .collect(),
        )
    }

    /// Checks a list of distinct ranks of this group (`MPI_Group_incl`/`excl`): `MPI_ERR_ARG`
    /// when there are more ranks than members, `MPI_ERR_RANK` for a rank out of range or
    /// repeated. Returns a membership mask.
    fn rank_mask(&self, ranks: &[i32]) -> MpiResult<Vec<bool>> {
        let size = self.members.len();
        if ranks.len() > size {
            return fail(
                MPI_ERR_ARG,
                format!(
                    "{} ranks given but the group has only {size} members",
                    ranks.len()
                ),
            );
        }
        let mut seen = vec![false; size];
        for (i, &r) in ranks.iter().enumerate() {
            if r < 0 || r as usize >= size {
                return fail(
                    MPI_ERR_RANK,
                    format!("ranks[{i}] = {r} is not a rank of the group (size {size})"),
                );
            }
            if std::mem::replace(&mut seen[r as usize], true) {
                return fail(
                    MPI_ERR_RANK,
                    format!("ranks[{i}] = {r} appears more than once"),
                );
            }
        }
        Ok(seen)
    }

    /// `MPI_Group_incl`: the members at `ranks`, in that order.
    pub fn incl(&self, ranks: &[i32]) -> MpiResult<Group> {
        self.rank_mask(ranks)?;
        Ok(self.derived(ranks.iter().map(|&r| self.members[r as usize]).collect()))
    }

    /// `MPI_Group_excl`: the members not at `ranks`, in group order.
    pub fn excl(&self, ranks: &[i32]) -> MpiResult<Group> {
        let mask = self.rank_mask(ranks)?;
        Ok(self.derived(
            self.members
                .iter()
                .zip(mask)
                .filter(|(_, gone)| !gone)
                .map(|(&m, _)| m)
                .collect(),
        ))
    }

    /// Expands `(first, last, stride)` triplets over this group's ranks, in order. Errors
    /// (all `MPI_ERR_ARG`, as MPICH reports them): a zero stride, a stride that walks away
    /// from `last`, a rank out of range (the first one or the last one actually reached), a
    /// rank reached twice.
    pub fn expand_ranges(&self, ranges: &[[i32; 3]]) -> MpiResult<Vec<i32>> {
        let size = self.members.len() as i64;
        let mut seen = vec![false; size as usize];
        let mut out = Vec::new();
        for (i, &[first, last, stride]) in ranges.iter().enumerate() {
            let (first, last, stride) = (first as i64, last as i64, stride as i64);
            let what = format!("range {i} ({first}, {last}, {stride})");
            if stride == 0 {
                return fail(MPI_ERR_ARG, format!("{what}: the stride is zero"));
            }
            if (stride > 0 && first > last) || (stride < 0 && first < last) {
                return fail(
                    MPI_ERR_ARG,
                    format!("{what}: the stride does not lead from first to last"),
                );
            }
            let reached = first + (last - first) / stride * stride;
            for r in [first, reached] {
                if r < 0 || r >= size {
                    return fail(
                        MPI_ERR_ARG,
                        format!("{what}: rank {r} is not in the group (size {size})"),
                    );
                }
            }
            let mut r = first;
            loop {
                if std::mem::replace(&mut seen[r as usize], true) {
                    return fail(
                        MPI_ERR_ARG,
                        format!("{what}: rank {r} is named more than once"),
                    );
                }
                out.push(r as i32);
                if r == reached {
                    break;
                }
                r += stride;
            }
        }
        Ok(out)
    }

    /// `MPI_Group_range_incl`.
    pub fn range_incl(&self, ranges: &[[i32; 3]]) -> MpiResult<Group> {
        let ranks = self.expand_ranges(ranges)?;
        Ok(self.derived(ranks.iter().map(|&r| self.members[r as usize]).collect()))
    }

    /// `MPI_Group_range_excl`.
    pub fn range_excl(&self, ranges: &[[i32; 3]]) -> MpiResult<Group> {
        let ranks = self.expand_ranges(ranges)?;
        self.excl(&ranks)
    }

    /// `MPI_Group_translate_ranks`: the rank in `other` of each of `ranks` of this group
    /// (`MPI_PROC_NULL` stays `MPI_PROC_NULL`, non-members give `MPI_UNDEFINED`).
    /// `MPI_ERR_RANK` for a rank out of range; `out` must be as long as `ranks`.
    pub fn translate(&self, ranks: &[i32], other: &Group, out: &mut [i32]) -> MpiResult<()> {
        let size = self.members.len();
        for (i, &r) in ranks.iter().enumerate() {
            if r != MPI_PROC_NULL && (r < 0 || r as usize >= size) {
                return fail(
                    MPI_ERR_RANK,
                    format!("ranks1[{i}] = {r} is not a rank of group1 (size {size})"),
                );
            }
        }
        // A short list against a small group: search; otherwise index the second group.
        if ranks.len() * other.members.len() <= 256 {
            for (o, &r) in out.iter_mut().zip(ranks) {
                *o = if r == MPI_PROC_NULL {
                    MPI_PROC_NULL
                } else {
                    other
                        .rank_of(self.members[r as usize])
                        .unwrap_or(MPI_UNDEFINED)
                };
            }
        } else {
            let idx = Index::of(&other.members);
            for (o, &r) in out.iter_mut().zip(ranks) {
                *o = if r == MPI_PROC_NULL {
                    MPI_PROC_NULL
                } else {
                    idx.get(self.members[r as usize]).unwrap_or(MPI_UNDEFINED)
                };
            }
        }
        Ok(())
    }
}

impl Runtime {
    /// Resolves a group handle (`MPI_GROUP_EMPTY` included); `MPI_ERR_GROUP` when invalid.
    pub fn group(&self, h: usize) -> MpiResult<&Group> {
        if h == MPI_GROUP_EMPTY {
            return Ok(&EMPTY);
        }
        match self.groups.decode(h).and_then(|i| self.groups.get(i)) {
            Some(g) => Ok(g),
            None if h == MPI_GROUP_NULL => fail(MPI_ERR_GROUP, "the group is MPI_GROUP_NULL"),
            None => fail(MPI_ERR_GROUP, format!("invalid group handle {h:#x}")),
        }
    }

    /// Stores a new group and returns its handle (`MPI_GROUP_EMPTY` when it is empty).
    pub fn new_group(&mut self, g: Group) -> MpiResult<usize> {
        if g.members.is_empty() {
            return Ok(MPI_GROUP_EMPTY);
        }
        match self.groups.insert(g) {
            Some(i) => Ok(self.groups.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many groups"),
        }
    }

    /// `MPI_Group_free`: releases a user group. `MPI_GROUP_EMPTY` may be freed (it is
    /// predefined and stays valid); `MPI_GROUP_NULL` and invalid handles give `MPI_ERR_GROUP`.
    pub fn free_group(&mut self, h: usize) -> MpiResult<()> {
        if h == MPI_GROUP_EMPTY {
            return Ok(());
        }
        match self.groups.decode(h) {
            Some(i) => {
                self.groups.free(i);
                Ok(())
            }
            None if h == MPI_GROUP_NULL => fail(MPI_ERR_GROUP, "the group is MPI_GROUP_NULL"),
            None => fail(MPI_ERR_GROUP, format!("invalid group handle {h:#x}")),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn g(m: &[u32]) -> Group {
        Group::new(m.to_vec())
    }

    #[test]
    fn set_operations_keep_the_standard_order() {
        let a = g(&[5, 1, 3, 7]);
        let b = g(&[3, 2, 5, 0]);
        assert_eq!(a.union(&b).members, vec![5, 1, 3, 7, 2, 0]);
        assert_eq!(b.union(&a).members, vec![3, 2, 5, 0, 1, 7]);
        assert_eq!(a.intersection(&b).members, vec![5, 3]);
        assert_eq!(b.intersection(&a).members, vec![3, 5]);
        assert_eq!(a.difference(&b).members, vec![1, 7]);
        assert_eq!(b.difference(&a).members, vec![2, 0]);
        assert!(a.difference(&a).members.is_empty());
        assert_eq!(a.union(&EMPTY), a);
        assert!(a.intersection(&EMPTY).members.is_empty());
    }

    #[test]
    fn compare() {
        let a = g(&[0, 1, 2]);
        assert_eq!(a.compare(&g(&[0, 1, 2])), MPI_IDENT);
        assert_eq!(a.compare(&g(&[2, 0, 1])), MPI_SIMILAR);
        assert_eq!(a.compare(&g(&[0, 1, 3])), MPI_UNEQUAL);
        assert_eq!(a.compare(&g(&[0, 1])), MPI_UNEQUAL);
        assert_eq!(EMPTY.compare(&EMPTY), MPI_IDENT);
    }

    #[test]
    fn incl_excl() {
        let a = g(&[10, 11, 12, 13, 14]);
        assert_eq!(a.incl(&[3, 0]).unwrap().members, vec![13, 10]);
        assert_eq!(a.excl(&[3, 0]).unwrap().members, vec![11, 12, 14]);
        assert!(a.incl(&[]).unwrap().members.is_empty());
        assert_eq!(a.excl(&[]).unwrap(), a);
        assert_eq!(a.incl(&[5]).unwrap_err().class(), MPI_ERR_RANK);
        assert_eq!(a.incl(&[-1]).unwrap_err().class(), MPI_ERR_RANK);
        assert_eq!(a.incl(&[1, 1]).unwrap_err().class(), MPI_ERR_RANK);
        assert_eq!(a.excl(&[2, 2]).unwrap_err().class(), MPI_ERR_RANK);
        assert_eq!(
            a.incl(&[0, 1, 2, 3, 4, 0]).unwrap_err().class(),
            MPI_ERR_ARG
        );
    }

    #[test]
    fn range_expansion() {
        let a = Group::new((0..10).collect());
        assert_eq!(a.expand_ranges(&[[0, 9, 3]]).unwrap(), vec![0, 3, 6, 9]);
        assert_eq!(a.expand_ranges(&[[1, 8, 3]]).unwrap(), vec![1, 4, 7]);
        assert_eq!(a.expand_ranges(&[[9, 0, -4]]).unwrap(), vec![9, 5, 1]);
        assert_eq!(a.expand_ranges(&[[4, 4, -1]]).unwrap(), vec![4]);
        assert_eq!(
            a.expand_ranges(&[[0, 2, 1], [9, 7, -1]]).unwrap(),
            vec![0, 1, 2, 9, 8, 7]
        );
        // `last` itself may lie outside the group when the stride never reaches it.
        assert_eq!(a.expand_ranges(&[[1, 12, 20]]).unwrap(), vec![1]);
        assert_eq!(a.expand_ranges(&[[8, -5, -7]]).unwrap(), vec![8, 1]);
        for bad in [
            [0, 3, 0],   // zero stride
            [3, 0, 1],   // wrong direction
            [0, 3, -1],  // wrong direction
            [10, 10, 1], // first out of range
            [0, 10, 1],  // reached rank out of range
            [-1, 2, 1],
        ] {
            assert_eq!(
                a.expand_ranges(&[bad]).unwrap_err().class(),
                MPI_ERR_ARG,
                "{bad:?}"
            );
        }
        assert_eq!(
            a.expand_ranges(&[[0, 4, 2], [4, 5, 1]])
                .unwrap_err()
                .class(),
            MPI_ERR_ARG,
            "rank 4 twice"
        );
        assert_eq!(
            a.range_incl(&[[9, 0, -3]]).unwrap().members,
            vec![9, 6, 3, 0]
        );
        assert_eq!(
            a.range_excl(&[[0, 9, 2]]).unwrap().members,
            vec![1, 3, 5, 7, 9]
        );
    }

    #[test]
    fn translate() {
        let a = g(&[4, 2, 0, 6]);
        let b = g(&[0, 1, 2, 3]);
        let mut out = [0; 5];
        a.translate(&[0, 1, 2, 3, MPI_PROC_NULL], &b, &mut out)
            .unwrap();
        assert_eq!(out, [MPI_UNDEFINED, 2, 0, MPI_UNDEFINED, MPI_PROC_NULL]);
        assert_eq!(
            a.translate(&[4], &b, &mut out[..1]).unwrap_err().class(),
            MPI_ERR_RANK
        );
        // The indexed path gives the same answers.
        let big = Group::new((0..100).rev().collect());
        let ranks: Vec<i32> = (0..100).collect();
        let mut out = vec![0; 100];
        big.translate(&ranks, &Group::new((0..100).collect()), &mut out)
            .unwrap();
        assert!(out.iter().enumerate().all(|(i, &o)| o == 99 - i as i32));
    }
}
