//! Window synchronization: fence, post/start/complete/wait, passive-target locks and flushes;
//! the dynamic window's attach/detach and `MPI_Win_shared_query`.

use super::*;

/// Window ranks of the world ranks `members` (`MPI_ERR_RANK` when one is not in the window).
pub fn window_ranks(rt: &Runtime, win: usize, members: &[u32]) -> MpiResult<Vec<i32>> {
    let (_, w) = rt.win(win)?;
    let (_, c) = rt.comm(w.comm)?;
    let world: Vec<u32> = c.members();
    members
        .iter()
        .map(|m| match world.iter().position(|x| x == m) {
            Some(r) => Ok(r as i32),
            None => fail(MPI_ERR_RANK, "a process of the group is not in the window"),
        })
        .collect()
}

/// Checks an assert argument: only the `MPI_MODE_*` bits in `allowed`.
pub fn check_assert(assert: i32, allowed: i32) -> MpiResult<()> {
    if assert & !allowed != 0 {
        return fail(
            MPI_ERR_ASSERT,
            format!("assert {assert:#x} has bits this call does not take"),
        );
    }
    Ok(())
}

/// `MPI_Win_fence`'s epoch bookkeeping (the caller then synchronizes the ranks).
pub fn fence(rt: &mut Runtime, win: usize, assert: i32) -> MpiResult<usize> {
    check_assert(
        assert,
        MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
    )?;
    let w = rt.win_mut(win)?;
    w.epochs.fence(assert)?;
    fence_memory();
    Ok(w.comm)
}

/// Orders this process's loads and stores around a synchronization.
pub fn fence_memory() {
    memory_fence(Ordering::SeqCst);
}

impl Win {
    /// Whether the next put or accumulate to another node should be answered: on dynamic
    /// windows always (the call reports range errors), else when nothing is pending, so a
    /// lone operation's flush waits for its answer instead of sending a flush of its own
    /// (one round trip, not a message more), while a stream of them goes unanswered.
    pub(super) fn answer_next(&self) -> bool {
        self.flavor == MPI_WIN_FLAVOR_DYNAMIC || self.pending.is_empty()
    }

    /// Whether it has deferred requests, or requests another thread is settling.
    pub(super) fn has_pending(&self) -> bool {
        !self.pending.is_empty() || !self.open_batches.is_empty()
    }

    /// Whether window rank `r` is on another node.
    pub(super) fn elsewhere(&self, r: i32) -> bool {
        self.targets[r as usize].place == Place::OtherNode
    }
}

/// `MPI_Win_post` to window ranks `group` (call outside `runtime::with`: origins on other
/// nodes are told by message).
pub fn post(win: usize, group: Vec<i32>, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)?;
    let calls = runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        w.epochs.post(group.clone())?;
        fence_memory();
        let mut calls = Vec::new();
        if assert & MPI_MODE_NOCHECK == 0 {
            for &o in &group {
                if w.elsewhere(o) {
                    calls.push(net::Call::sync(w.comm, o, net::Kind::Post, None));
                } else {
                    w.ctrl
                        .post_count(w.rank as usize, o as usize)
                        .fetch_add(1, Ordering::Release);
                }
            }
        }
        Ok(calls)
    })?;
    net::run(calls)
}

/// `MPI_Win_start` on window ranks `group`: waits for their posts (unless `MPI_MODE_NOCHECK`).
pub fn start(win: usize, group: Vec<i32>, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK)?;
    runtime::with(|rt| rt.win_mut(win)?.epochs.start(group.clone()))?;
    if assert & MPI_MODE_NOCHECK == 0 {
        runtime::wait_for_unrung(|rt| {
            let w = rt.win_mut(win)?;
            let me = w.rank as usize;
            let ready = group.iter().all(|&t| {
                w.ctrl.post_count(t as usize, me).load(Ordering::Acquire)
                    != w.posts_seen[t as usize]
            });
            if ready {
                for &t in &group {
                    w.posts_seen[t as usize] = w.posts_seen[t as usize].wrapping_add(1);
                }
            }
            Ok(ready.then_some(()))
        })?;
    }
    fence_memory();
    Ok(())
}

/// `MPI_Win_complete` (call outside `runtime::with`: targets on other nodes are told by
/// message).
pub fn complete(win: usize) -> MpiResult<()> {
    // The epoch ends even when an operation failed (reported after).
    let settled = settle(win);
    let calls = runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        let group = w.epochs.complete()?;
        fence_memory();
        let mut calls = Vec::new();
        for t in group {
            if w.elsewhere(t) {
                calls.push(net::Call::sync(w.comm, t, net::Kind::Complete, None));
            } else {
                w.ctrl
                    .complete_count(t as usize, w.rank as usize)
                    .fetch_add(1, Ordering::Release);
            }
        }
        Ok(calls)
    })?;
    net::run(calls)?;
    settled
}

/// `MPI_Win_test` (and one step of `MPI_Win_wait`): whether every origin of the exposure
/// epoch has completed; ends the epoch when so.
pub fn test(rt: &mut Runtime, win: usize) -> MpiResult<bool> {
    let w = rt.win_mut(win)?;
    let me = w.rank as usize;
    let group = w.epochs.posted()?.to_vec();
    let done = group.iter().all(|&o| {
        w.ctrl
            .complete_count(me, o as usize)
            .load(Ordering::Acquire)
            != w.completes_seen[o as usize]
    });
    if done {
        for &o in &group {
            w.completes_seen[o as usize] = w.completes_seen[o as usize].wrapping_add(1);
        }
        w.epochs.end_post();
        fence_memory();
    }
    Ok(done)
}

/// `MPI_Win_wait`.
pub fn wait(win: usize) -> MpiResult<()> {
    runtime::with(|rt| rt.win(win)?.1.epochs.posted().map(|_| ()))?;
    runtime::wait_for_unrung(|rt| Ok(test(rt, win)?.then_some(())))
}

/// `MPI_Win_lock`.
pub fn lock(win: usize, kind: i32, target: i32, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK)?;
    let kind = LockKind::from_arg(kind)?;
    let taken = assert & MPI_MODE_NOCHECK == 0;
    let found = runtime::with(|rt| {
        let (_, w) = rt.win(win)?;
        if target == MPI_PROC_NULL {
            return Ok(None);
        }
        if target < 0 || target >= w.size {
            return fail(
                MPI_ERR_RANK,
                format!("target rank {target} is not in the window"),
            );
        }
        w.epochs.check_lock(target)?;
        let (comm, elsewhere) = (w.comm, w.elsewhere(target));
        // A lock on the node that is free (or not taken: MPI_MODE_NOCHECK) is held at once.
        if !elsewhere && (!taken || w.ctrl.try_lock(target as usize, kind)) {
            rt.win_mut(win)?.epochs.locked(Held {
                rank: target,
                kind,
                taken,
            });
            fence_memory();
            return Ok(None);
        }
        Ok(Some((comm, elsewhere)))
    })?;
    let Some((comm, elsewhere)) = found else {
        return Ok(());
    };
    if taken && elsewhere {
        net::run(vec![net::Call::sync(
            comm,
            target,
            net::Kind::Lock,
            Some(kind),
        )])?;
    } else if taken {
        runtime::wait_for_unrung(|rt| {
            let (_, w) = rt.win(win)?;
            Ok(w.ctrl.try_lock(target as usize, kind).then_some(()))
        })?;
    }
    runtime::with(|rt| {
        rt.win_mut(win)?.epochs.locked(Held {
            rank: target,
            kind,
            taken,
        });
        Ok(())
    })?;
    fence_memory();
    Ok(())
}

/// `MPI_Win_unlock` (call outside `runtime::with`: a target on another node is told by
/// message).
pub fn unlock(win: usize, target: i32) -> MpiResult<()> {
    let far = runtime::with(|rt| {
        let (_, w) = rt.win(win)?;
        let far = target >= 0 && target < w.size && w.elsewhere(target);
        if !far && !w.has_pending() && w.unflushed.is_empty() {
            // On the node with nothing to settle: released at once.
            return release(rt, win, target, false).map(|_| None);
        }
        Ok(Some(far))
    })?;
    let Some(far) = far else {
        return Ok(());
    };
    // Operations to ranks on the node are complete; those to other nodes complete here: a
    // release to another node goes right after them and its answer (when one is pending)
    // stands for their flush, else they settle first. Either way the lock is released even
    // when an operation failed (reported after).
    let settled = if far { Ok(()) } else { settle(win) };
    runtime::with(|rt| release(rt, win, target, far))?;
    if far {
        settle(win)
    } else {
        settled
    }
}

/// Ends the lock epoch of window `win` on `target` and releases its lock: at once on the
/// node, by a deferred message to a target on another node (`far`).
pub(super) fn release(rt: &mut Runtime, win: usize, target: i32, far: bool) -> MpiResult<()> {
    let w = rt.win_mut(win)?;
    if target == MPI_PROC_NULL {
        return Ok(());
    }
    if target < 0 || target >= w.size {
        return fail(
            MPI_ERR_RANK,
            format!("target rank {target} is not in the window"),
        );
    }
    let held = w.epochs.unlock(target)?;
    fence_memory();
    if held.taken && far {
        let answered = !w.pending.is_empty() || w.unflushed.contains(&target);
        w.unflushed.retain(|&t| t != target || !answered);
        let call = net::Call::unlock(w.comm, target, held.kind, answered);
        defer(rt, win, call)?;
    } else if held.taken {
        w.ctrl.unlock(target as usize, held.kind);
    }
    Ok(())
}

/// `MPI_Win_lock_all`: a shared lock on every rank.
pub fn lock_all(win: usize, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK)?;
    let (comm, elsewhere) = runtime::with(|rt| {
        let (_, w) = rt.win(win)?;
        w.epochs.check_lock_all()?;
        Ok((
            w.comm,
            (0..w.size).map(|t| w.elsewhere(t)).collect::<Vec<_>>(),
        ))
    })?;
    let taken = assert & MPI_MODE_NOCHECK == 0;
    if taken {
        let mut calls = Vec::new();
        for (t, &far) in elsewhere.iter().enumerate() {
            if far {
                let shared = Some(LockKind::Shared);
                calls.push(net::Call::sync(comm, t as i32, net::Kind::Lock, shared));
                continue;
            }
            runtime::wait_for_unrung(|rt| {
                let (_, w) = rt.win(win)?;
                Ok(w.ctrl.try_lock(t, LockKind::Shared).then_some(()))
            })?;
        }
        net::run(calls)?;
    }
    runtime::with(|rt| {
        rt.win_mut(win)?.epochs.locked_all(taken);
        Ok(())
    })?;
    fence_memory();
    Ok(())
}

/// `MPI_Win_unlock_all` (call outside `runtime::with`).
pub fn unlock_all(win: usize) -> MpiResult<()> {
    // As in `unlock`.
    let settled = settle(win);
    runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        let taken = w.epochs.unlock_all()?;
        fence_memory();
        if !taken {
            return Ok(());
        }
        let comm = w.comm;
        let mut far = Vec::new();
        for t in 0..w.size {
            if w.elsewhere(t) {
                far.push(t);
            } else {
                w.ctrl.unlock(t as usize, LockKind::Shared);
            }
        }
        for t in far {
            let shared = Some(LockKind::Shared);
            defer(rt, win, net::Call::sync(comm, t, net::Kind::Unlock, shared))?;
        }
        Ok(())
    })?;
    settled
}

/// The flushes: operations on the node complete when issued, so a flush checks its epoch and
/// orders memory (the caller then [`settle`]s requests to other nodes). `target` `None`:
/// every target.
#[inline(always)]
pub fn flush(rt: &Runtime, win: usize, target: Option<i32>) -> MpiResult<Flushed> {
    let (_, w) = rt.win(win)?;
    match target {
        Some(MPI_PROC_NULL) => {}
        Some(t) if t < 0 || t >= w.size => return rank_outside(t),
        Some(t) => w.epochs.check_passive(t)?,
        None => w.epochs.check_any_passive()?,
    }
    fence_memory();
    Ok(Flushed {
        spans: w.net.is_some(),
        pending: w.has_pending(),
    })
}

/// The error of a flush to a rank outside the window (out of line).
#[cold]
#[inline(never)]
pub(super) fn rank_outside<T>(t: i32) -> MpiResult<T> {
    fail(
        MPI_ERR_RANK,
        format!("target rank {t} is not in the window"),
    )
}

/// What [`flush`] found of its window (one lookup for the caller's next steps).
#[derive(Clone, Copy, Debug)]
pub struct Flushed {
    /// The window spans nodes ([`spans`]): the caller progresses, then asks [`has_pending`].
    pub spans: bool,
    /// The window has requests to settle ([`has_pending`], before any progress).
    pub pending: bool,
}

/// `MPI_Win_attach` of `[base, base + len)`.
pub fn attach(rt: &Runtime, win: usize, base: usize, len: usize) -> MpiResult<()> {
    let (_, w) = rt.win(win)?;
    if w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
        return fail(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a dynamic window");
    }
    if len == 0 {
        return Ok(());
    }
    if base == 0 {
        return fail(MPI_ERR_BASE, "the attached memory's base is NULL");
    }
    let me = w.rank as usize;
    let _g = w.ctrl.acc_lock(me);
    let (lo, hi) = (base as u64, (base + len) as u64);
    if w.ctrl
        .regions(me)
        .iter()
        .any(|&(b, l)| lo < b + l && b < hi)
    {
        return fail(
            MPI_ERR_RMA_ATTACH,
            "the memory overlaps memory already attached to the window",
        );
    }
    if !w.ctrl.add_region(me, lo, len as u64) {
        return fail(
            MPI_ERR_RMA_ATTACH,
            format!(
                "at most {} regions may be attached at once",
                ctrl::MAX_REGIONS
            ),
        );
    }
    Ok(())
}

/// `MPI_Win_detach` of the region starting at `base`.
pub fn detach(rt: &Runtime, win: usize, base: usize) -> MpiResult<()> {
    let (_, w) = rt.win(win)?;
    if w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
        return fail(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a dynamic window");
    }
    let me = w.rank as usize;
    let _g = w.ctrl.acc_lock(me);
    if !w.ctrl.remove_region(me, base as u64) {
        return fail(
            MPI_ERR_RMA_ATTACH,
            "no attached memory starts at this address",
        );
    }
    Ok(())
}

/// `MPI_Win_shared_query`: (size, displacement unit, base address here) of `rank`'s memory;
/// `MPI_PROC_NULL`: the lowest rank with memory.
pub fn shared_query(rt: &Runtime, win: usize, rank: i32) -> MpiResult<(usize, isize, usize)> {
    let (_, w) = rt.win(win)?;
    let rank = if rank == MPI_PROC_NULL {
        match w.targets.iter().position(|t| t.size > 0) {
            Some(r) => r as i32,
            None => 0,
        }
    } else {
        rank
    };
    if rank < 0 || rank >= w.size {
        return fail(MPI_ERR_RANK, format!("rank {rank} is not in the window"));
    }
    let t = w.targets[rank as usize];
    match (w.flavor, t.place) {
        (MPI_WIN_FLAVOR_DYNAMIC, _) => fail(
            MPI_ERR_RMA_FLAVOR,
            "MPI_Win_shared_query does not take a dynamic window",
        ),
        // Memory mapped here: every rank's of an allocated window (shared memory), our own of
        // an `MPI_Win_create`d one (MPI-4.1 allows the query on those flavours).
        (_, Place::Mapped(b)) => Ok((t.size, t.disp_unit, b)),
        // Another process's private memory: no load/store access (MPI-4.1: size 0, NULL).
        (_, Place::Remote { .. } | Place::OtherNode) => Ok((0, t.disp_unit, 0)),
    }
}
