//! A window's synchronization state at one process: which access and exposure epochs are
//! open, and which calls they allow (`MPI_ERR_RMA_SYNC` for the others). Pure state, no
//! communication: the callers do the synchronizing.

use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::*;

/// A passive-target lock type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// `MPI_LOCK_SHARED`.
    Shared,
    /// `MPI_LOCK_EXCLUSIVE`.
    Exclusive,
}

impl LockKind {
    /// The lock type of an `MPI_Win_lock` argument; `MPI_ERR_LOCKTYPE` for others.
    pub fn from_arg(t: i32) -> MpiResult<LockKind> {
        match t {
            MPI_LOCK_SHARED => Ok(LockKind::Shared),
            MPI_LOCK_EXCLUSIVE => Ok(LockKind::Exclusive),
            _ => fail(
                MPI_ERR_LOCKTYPE,
                format!("lock type {t} is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE"),
            ),
        }
    }
}

/// One locked target: its rank, the lock type and whether the lock was really taken
/// (`MPI_MODE_NOCHECK` skips taking it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// Target rank.
    pub rank: i32,
    /// Lock type.
    pub kind: LockKind,
    /// The target's lock word was acquired (and must be released).
    pub taken: bool,
}

/// The epochs open on a window at this process.
#[derive(Clone, Debug, Default)]
pub struct Epochs {
    /// The last fence did not say `MPI_MODE_NOSUCCEED`: operations may follow it.
    fence: bool,
    /// Access epoch of `MPI_Win_start`: its target ranks.
    start: Option<Vec<i32>>,
    /// Passive-target locks of `MPI_Win_lock`.
    locks: Vec<Held>,
    /// `MPI_Win_lock_all`: whether the locks were taken.
    lock_all: Option<bool>,
    /// Exposure epoch of `MPI_Win_post`: its origin ranks.
    post: Option<Vec<i32>>,
}

fn sync<T>(msg: impl Into<String>) -> MpiResult<T> {
    fail(MPI_ERR_RMA_SYNC, msg)
}

impl Epochs {
    /// Whether an access epoch to `target` is open ([`Epochs::check_access`] without the
    /// error).
    #[inline]
    pub fn may_access(&self, target: i32) -> bool {
        self.fence
            || self.lock_all.is_some()
            || self.locks.iter().any(|h| h.rank == target)
            || self.start.as_ref().is_some_and(|g| g.contains(&target))
    }

    /// May this process issue an operation to `target` now?
    pub fn check_access(&self, target: i32) -> MpiResult<()> {
        if self.may_access(target) {
            return Ok(());
        }
        sync(format!(
            "no access epoch to target rank {target} is open (call MPI_Win_fence, MPI_Win_start, \
             MPI_Win_lock or MPI_Win_lock_all first)"
        ))
    }

    /// Is `target` in a passive-target epoch (for the flushes and the request-based
    /// operations)?
    #[inline]
    pub fn check_passive(&self, target: i32) -> MpiResult<()> {
        if self.lock_all.is_some() || self.locks.iter().any(|h| h.rank == target) {
            return Ok(());
        }
        Self::not_passive(target)
    }

    /// The error of [`Epochs::check_passive`] (out of line: the check stays short).
    #[cold]
    #[inline(never)]
    fn not_passive(target: i32) -> MpiResult<()> {
        sync(format!(
            "target rank {target} is not locked (this call needs a passive-target epoch: \
             MPI_Win_lock or MPI_Win_lock_all)"
        ))
    }

    /// Is any passive-target epoch open (for `MPI_Win_flush_all` and friends)?
    pub fn check_any_passive(&self) -> MpiResult<()> {
        if self.lock_all.is_some() || !self.locks.is_empty() {
            return Ok(());
        }
        sync("no passive-target epoch is open (MPI_Win_lock or MPI_Win_lock_all)")
    }

    /// `MPI_Win_fence` with `assert`.
    pub fn fence(&mut self, assert: i32) -> MpiResult<()> {
        if self.start.is_some() || self.post.is_some() {
            return sync("MPI_Win_fence inside an MPI_Win_start/post epoch");
        }
        if self.lock_all.is_some() || !self.locks.is_empty() {
            return sync("MPI_Win_fence inside a passive-target (lock) epoch");
        }
        self.fence = assert & MPI_MODE_NOSUCCEED == 0;
        Ok(())
    }

    /// `MPI_Win_start` on `group` (ranks of the window).
    pub fn start(&mut self, group: Vec<i32>) -> MpiResult<()> {
        if self.start.is_some() {
            return sync("MPI_Win_start while an access epoch of MPI_Win_start is open");
        }
        if self.lock_all.is_some() || !self.locks.is_empty() {
            return sync("MPI_Win_start inside a passive-target (lock) epoch");
        }
        self.fence = false;
        self.start = Some(group);
        Ok(())
    }

    /// `MPI_Win_complete`: ends the start epoch, returns its targets.
    pub fn complete(&mut self) -> MpiResult<Vec<i32>> {
        match self.start.take() {
            Some(g) => Ok(g),
            None => sync("MPI_Win_complete without MPI_Win_start"),
        }
    }

    /// `MPI_Win_post` on `group`.
    pub fn post(&mut self, group: Vec<i32>) -> MpiResult<()> {
        if self.post.is_some() {
            return sync("MPI_Win_post while an exposure epoch of MPI_Win_post is open");
        }
        self.fence = false;
        self.post = Some(group);
        Ok(())
    }

    /// The origins of the open exposure epoch (`MPI_Win_wait`/`MPI_Win_test`).
    pub fn posted(&self) -> MpiResult<&[i32]> {
        match &self.post {
            Some(g) => Ok(g),
            None => sync("MPI_Win_wait or MPI_Win_test without MPI_Win_post"),
        }
    }

    /// Ends the exposure epoch (after a successful wait or test).
    pub fn end_post(&mut self) {
        self.post = None;
    }

    /// `MPI_Win_lock` of `target` (checked before the lock word is taken).
    pub fn check_lock(&self, target: i32) -> MpiResult<()> {
        if self.lock_all.is_some() {
            return sync("MPI_Win_lock inside MPI_Win_lock_all");
        }
        if self.start.is_some() {
            return sync("MPI_Win_lock inside an MPI_Win_start epoch");
        }
        if self.locks.iter().any(|h| h.rank == target) {
            return sync(format!("target rank {target} is locked already"));
        }
        Ok(())
    }

    /// Records the lock of `MPI_Win_lock` (after [`Epochs::check_lock`]).
    pub fn locked(&mut self, held: Held) {
        self.fence = false;
        self.locks.push(held);
    }

    /// `MPI_Win_unlock` of `target`: what was held.
    pub fn unlock(&mut self, target: i32) -> MpiResult<Held> {
        match self.locks.iter().position(|h| h.rank == target) {
            Some(i) => Ok(self.locks.swap_remove(i)),
            None => sync(format!(
                "MPI_Win_unlock of target rank {target}, which is not locked"
            )),
        }
    }

    /// `MPI_Win_lock_all` (checked before the lock words are taken).
    pub fn check_lock_all(&self) -> MpiResult<()> {
        if self.lock_all.is_some() {
            return sync("MPI_Win_lock_all inside MPI_Win_lock_all");
        }
        if !self.locks.is_empty() {
            return sync("MPI_Win_lock_all while targets are locked by MPI_Win_lock");
        }
        if self.start.is_some() {
            return sync("MPI_Win_lock_all inside an MPI_Win_start epoch");
        }
        Ok(())
    }

    /// Records `MPI_Win_lock_all` (`taken`: the shared locks were acquired).
    pub fn locked_all(&mut self, taken: bool) {
        self.fence = false;
        self.lock_all = Some(taken);
    }

    /// `MPI_Win_unlock_all`: whether the locks were taken.
    pub fn unlock_all(&mut self) -> MpiResult<bool> {
        match self.lock_all.take() {
            Some(t) => Ok(t),
            None => sync("MPI_Win_unlock_all without MPI_Win_lock_all"),
        }
    }

    /// `MPI_Win_free` may not be called inside a start, post or lock epoch.
    pub fn check_free(&self) -> MpiResult<()> {
        if self.start.is_some() || self.post.is_some() {
            return sync("MPI_Win_free inside an MPI_Win_start or MPI_Win_post epoch");
        }
        if self.lock_all.is_some() || !self.locks.is_empty() {
            return sync("MPI_Win_free inside a passive-target (lock) epoch");
        }
        Ok(())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn class<T: std::fmt::Debug>(r: MpiResult<T>) -> i32 {
        r.unwrap_err().class()
    }

    #[test]
    fn operations_need_an_epoch() {
        let mut e = Epochs::default();
        assert_eq!(class(e.check_access(0)), MPI_ERR_RMA_SYNC);
        e.fence(0).unwrap();
        e.check_access(3).unwrap();
        e.fence(MPI_MODE_NOSUCCEED).unwrap();
        assert_eq!(class(e.check_access(0)), MPI_ERR_RMA_SYNC);
        e.start(vec![1, 2]).unwrap();
        e.check_access(2).unwrap();
        assert_eq!(class(e.check_access(0)), MPI_ERR_RMA_SYNC);
        assert_eq!(class(e.check_passive(1)), MPI_ERR_RMA_SYNC);
        assert_eq!(e.complete().unwrap(), vec![1, 2]);
        assert_eq!(class(e.complete()), MPI_ERR_RMA_SYNC);
    }

    #[test]
    fn locks_nest_only_on_distinct_targets() {
        let mut e = Epochs::default();
        e.check_lock(1).unwrap();
        e.locked(Held {
            rank: 1,
            kind: LockKind::Shared,
            taken: true,
        });
        assert_eq!(class(e.check_lock(1)), MPI_ERR_RMA_SYNC);
        e.check_lock(2).unwrap();
        assert_eq!(class(e.check_lock_all()), MPI_ERR_RMA_SYNC);
        assert_eq!(class(e.fence(0)), MPI_ERR_RMA_SYNC);
        assert_eq!(class(e.check_free()), MPI_ERR_RMA_SYNC);
        e.check_passive(1).unwrap();
        assert_eq!(class(e.check_passive(2)), MPI_ERR_RMA_SYNC);
        assert!(e.unlock(1).unwrap().taken);
        assert_eq!(class(e.unlock(1)), MPI_ERR_RMA_SYNC);
        e.check_free().unwrap();
    }

    #[test]
    fn lock_all_and_post() {
        let mut e = Epochs::default();
        assert_eq!(class(e.unlock_all()), MPI_ERR_RMA_SYNC);
        e.check_lock_all().unwrap();
        e.locked_all(false);
        e.check_access(7).unwrap();
        e.check_any_passive().unwrap();
        assert_eq!(class(e.check_lock(0)), MPI_ERR_RMA_SYNC);
        assert!(!e.unlock_all().unwrap());
        assert_eq!(class(e.posted()), MPI_ERR_RMA_SYNC);
        e.post(vec![0]).unwrap();
        assert_eq!(class(e.post(vec![0])), MPI_ERR_RMA_SYNC);
        assert_eq!(e.posted().unwrap(), &[0]);
        e.end_post();
        assert_eq!(LockKind::from_arg(5).unwrap_err().class(), MPI_ERR_LOCKTYPE);
    }
}
