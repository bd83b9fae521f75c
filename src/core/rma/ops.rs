//! The operations on a window: put, get, accumulate, get-accumulate, fetch-and-op and
//! compare-and-swap, direct or deferred to the epoch, with their argument checks.

use super::*;

/// A datatype as a one-sided operation needs it: predefined ones without allocating.
#[derive(Clone, Debug)]
pub(super) enum Ty {
    /// A predefined type.
    Basic {
        /// Its handle.
        handle: usize,
        /// Its layout.
        info: TypeInfo,
    },
    /// A committed derived type.
    Derived(Arc<Dtype>),
}

impl Ty {
    /// The type of handle `h`: committed, not `MPI_DATATYPE_NULL`.
    pub(super) fn of(rt: &Runtime, h: usize) -> MpiResult<Ty> {
        if let Some(info) = datatype::predefined(h) {
            return Ok(Ty::Basic { handle: h, info });
        }
        if h == MPI_DATATYPE_NULL {
            return fail(MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL");
        }
        let e = rt.type_entry(h)?;
        if !e.committed {
            return fail(MPI_ERR_TYPE, "the datatype is not committed");
        }
        Ok(Ty::Derived(e.dt.clone()))
    }

    /// The shape of `count` elements at `addr`.
    pub(super) fn shape(&self, addr: usize, count: usize) -> Shape {
        match self {
            Ty::Basic { info, .. } if info.extent == info.size => Shape::Contig {
                addr,
                len: info.size * count,
            },
            Ty::Basic { handle, .. } => Shape::new(
                addr,
                count,
                &Arc::new(Dtype::predefined(*handle).expect("predefined")),
            ),
            Ty::Derived(d) => Shape::new(addr, count, d),
        }
    }

    /// The one predefined type the type is made of, if so.
    pub(super) fn basic(&self) -> Option<usize> {
        match self {
            Ty::Basic { handle, .. } => Some(*handle),
            Ty::Derived(d) => d.basic_type(),
        }
    }

    /// Data bytes of one element.
    pub(super) fn size(&self) -> usize {
        match self {
            Ty::Basic { info, .. } => info.size,
            Ty::Derived(d) => d.size,
        }
    }
}

/// A local buffer argument: (address, count, datatype handle).
#[derive(Clone, Copy, Debug)]
pub struct Buf {
    /// Address.
    pub addr: usize,
    /// Elements.
    pub count: usize,
    /// Datatype handle.
    pub dt: usize,
}

/// A target argument: (rank, displacement, count, datatype handle).
#[derive(Clone, Copy, Debug)]
pub struct TargetArg {
    /// Rank in the window (`MPI_PROC_NULL`: the operation does nothing).
    pub rank: i32,
    /// Displacement in the target's units.
    pub disp: isize,
    /// Elements.
    pub count: usize,
    /// Datatype handle.
    pub dt: usize,
}

/// A checked operation's target: where, and the data's shape there.
pub(super) struct Resolved {
    rank: usize,
    place: Place,
    shape: Shape,
    ty: Ty,
}

impl Win {
    /// Checks the target of an operation (rank, epoch, displacement, range) and resolves it.
    pub(super) fn resolve(&self, rt: &Runtime, t: &TargetArg) -> MpiResult<Option<Resolved>> {
        if t.rank == MPI_PROC_NULL {
            return Ok(None);
        }
        if t.rank < 0 || t.rank >= self.size {
            return fail(
                MPI_ERR_RANK,
                format!(
                    "target rank {} is not in the window (size {})",
                    t.rank, self.size
                ),
            );
        }
        self.epochs.check_access(t.rank)?;
        if t.disp < 0 {
            return fail(
                MPI_ERR_DISP,
                format!("target displacement {} is negative", t.disp),
            );
        }
        let tgt = self.targets[t.rank as usize];
        let ty = Ty::of(rt, t.dt)?;
        let Some(off) = t.disp.checked_mul(tgt.disp_unit) else {
            return fail(MPI_ERR_DISP, "the target displacement overflows");
        };
        let at = match tgt.place {
            Place::Mapped(b) => b,
            Place::Remote { base, .. } => base,
            Place::OtherNode => 0,
        };
        let shape = ty.shape(at.wrapping_add(off as usize), t.count);
        if let Some((lo, hi)) = shape.span() {
            let inside = if self.flavor == MPI_WIN_FLAVOR_DYNAMIC && tgt.place == Place::OtherNode {
                // Another node's attached regions: its server checks.
                true
            } else if self.flavor == MPI_WIN_FLAVOR_DYNAMIC {
                let _g = self.ctrl.acc_lock(t.rank as usize);
                // Dynamic displacements are addresses in the target: the regions it attached.
                let (lo, hi) = (lo.wrapping_sub(at) as u64, hi.wrapping_sub(at) as u64);
                self.ctrl
                    .regions(t.rank as usize)
                    .iter()
                    .any(|&(b, l)| lo >= b && hi <= b + l)
            } else {
                lo >= at && hi <= at + tgt.size && lo <= hi
            };
            if !inside {
                return fail(
                    MPI_ERR_RMA_RANGE,
                    format!(
                        "the access (displacement {}, {} bytes) is outside target rank {}'s {}",
                        t.disp,
                        shape.bytes(),
                        t.rank,
                        if self.flavor == MPI_WIN_FLAVOR_DYNAMIC {
                            "attached memory"
                        } else {
                            "window"
                        }
                    ),
                );
            }
        }
        Ok(Some(Resolved {
            rank: t.rank as usize,
            place: tgt.place,
            shape,
            ty,
        }))
    }
}

pub(super) fn local_shape(rt: &Runtime, b: &Buf) -> MpiResult<(Shape, Ty)> {
    let ty = Ty::of(rt, b.dt)?;
    Ok((ty.shape(b.addr, b.count), ty))
}

pub(super) fn same_bytes(what: &str, a: usize, b: usize) -> MpiResult<()> {
    if a != b {
        return fail(
            MPI_ERR_TYPE,
            format!("the {what} buffer holds {a} bytes but the target buffer {b}"),
        );
    }
    Ok(())
}

/// The element type and reduction of an accumulate with `op` on target type `tdt` (and
/// origin type `odt`, unless the op is `MPI_NO_OP`); `None` for `MPI_NO_OP`.
pub(super) fn element(
    rt: &Runtime,
    op: usize,
    tty: &Ty,
    oty: Option<&Ty>,
) -> MpiResult<Option<Element>> {
    let b = match rt.op(op)? {
        OpRef::User(_) => {
            return fail(
                MPI_ERR_OP,
                "user-defined operations are not allowed in one-sided accumulates",
            )
        }
        OpRef::Builtin(b) => b,
    };
    let Some(basic) = tty.basic() else {
        return fail(
            MPI_ERR_TYPE,
            "an accumulate's target datatype must be made of one predefined type",
        );
    };
    if b == Builtin::NoOp {
        return Ok(None);
    }
    if let Some(o) = oty {
        if o.size() > 0 && o.basic() != Some(basic) {
            return fail(
                MPI_ERR_TYPE,
                "an accumulate's origin and target datatypes must be made of the same \
                 predefined type",
            );
        }
    }
    basic_element(rt, op, basic).map(Some)
}

/// The element of predefined type `basic` and the reduction of builtin `op` on it (also for
/// the window server, whose request names both).
pub(super) fn basic_element(rt: &Runtime, op: usize, basic: usize) -> MpiResult<Element> {
    let reducer = rt.accumulate_reducer(op, basic)?;
    let Some(info) = datatype::predefined(basic) else {
        return fail(MPI_ERR_TYPE, "not a predefined element type");
    };
    let spread = (info.extent != info.size)
        .then(|| Arc::new(Dtype::predefined(basic).expect("a basic type is predefined")));
    Ok(Element {
        reducer,
        handle: basic,
        size: info.size,
        extent: info.extent,
        spread,
        replace: Builtin::from_handle(op) == Some(Builtin::Replace),
    })
}

/// The common case in one step: origin and target of the same predefined hole-free type and
/// count, to memory mapped here, inside the window and an access epoch. Returns the target
/// rank, the target data's address here and its length; `None` sends the operation down the
/// general path (which also reports every error).
#[inline]
pub(super) fn direct(w: &Win, o: &Buf, t: &TargetArg) -> Option<(usize, usize, usize)> {
    if o.dt != t.dt || o.count != t.count || t.rank < 0 || t.rank >= w.size || t.disp < 0 {
        return None;
    }
    // A predefined type without holes (a byte-table lookup).
    let size = datatype::contiguous_size(t.dt)?;
    if w.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        return None;
    }
    let tgt = w.targets.get(t.rank as usize)?;
    let Place::Mapped(base) = tgt.place else {
        return None;
    };
    let len = size.checked_mul(t.count)?;
    let off = (t.disp as usize).checked_mul(tgt.disp_unit as usize)?;
    if off.checked_add(len)? > tgt.size || !w.epochs.may_access(t.rank) {
        return None;
    }
    Some((t.rank as usize, base + off, len))
}

/// What an operation left to do: nothing, or a request to a rank on another node, to
/// [`defer`] or to run outside the runtime ([`net::run`]).
pub type Issued = MpiResult<Option<net::Call>>;

/// Sends `call` (an operation of window `win`) and keeps it for the next synchronization;
/// on a dynamic window (whose ranges only the target can check, an error the call itself
/// should report) it hands the call back to be run at once.
pub fn defer_op(rt: &mut Runtime, win: usize, call: net::Call) -> Issued {
    if rt.win(win)?.1.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        return Ok(Some(call));
    }
    defer(rt, win, call).map(|_| None)
}

/// Sends `call` (of window `win`) and keeps it for the next synchronization.
pub(super) fn defer(rt: &mut Runtime, win: usize, call: net::Call) -> MpiResult<()> {
    let comm = rt.win(win)?.1.comm;
    let (ci, _) = rt.comm(comm)?;
    let (target, released) = (call.unflushed_target(), call.released_target());
    let started = net::start(rt, ci, call)?;
    let w = rt.win_mut(win)?;
    w.pending.push(started);
    if let Some(t) = target.filter(|t| !w.unflushed.contains(t)) {
        w.unflushed.push(t);
    }
    if let Some(t) = released.filter(|t| !w.released.contains(t)) {
        w.released.push(t);
    }
    Ok(())
}

/// Whether window `win` spans nodes (its synchronization calls then also progress, so a
/// process spinning on them serves the other nodes' requests to it).
pub fn spans(rt: &Runtime, win: usize) -> bool {
    rt.win(win).is_ok_and(|(_, w)| w.net.is_some())
}

/// Whether window `win` has deferred requests, or requests another thread is settling
/// (then [`settle`]).
pub fn has_pending(rt: &Runtime, win: usize) -> bool {
    rt.win(win).is_ok_and(|(_, w)| w.has_pending())
}

/// Completes the deferred requests of window `win`: waits for their answers, lands fetched
/// data, reports the first error (call outside `runtime::with`). The requests another
/// thread took to settle before this call are complete too when it returns (a flush
/// completes every operation the process issued).
pub fn settle(win: usize) -> MpiResult<()> {
    let Some((pending, batch, earlier)) = runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        if !w.has_pending() && w.unflushed.is_empty() {
            // Nothing deferred, unanswered or being settled by another thread.
            return Ok(None);
        }
        let (mut pending, targets) = (
            std::mem::take(&mut w.pending),
            std::mem::take(&mut w.unflushed),
        );
        let comm = w.comm;
        let (ci, _) = rt.comm(comm)?;
        // Each target of unanswered operations answers a flush once it has done them.
        for t in targets {
            pending.push(net::start(rt, ci, net::Call::flush(comm, t))?);
        }
        let w = rt.win_mut(win)?;
        let batch = w.next_batch;
        w.next_batch += 1;
        let earlier = w.open_batches.clone();
        w.open_batches.push(batch);
        Ok(Some((pending, batch, earlier)))
    })?
    else {
        return Ok(());
    };
    let done = net::finish(pending);
    runtime::with(|rt| {
        rt.win_mut(win)?.open_batches.retain(|&b| b != batch);
        Ok(())
    })?;
    if !earlier.is_empty() {
        runtime::wait_for_unrung(|rt| {
            let (_, w) = rt.win(win)?;
            let open = w.open_batches.iter().any(|b| earlier.contains(b));
            Ok((!open).then_some(()))
        })?;
    }
    done
}

/// `MPI_Put` (and `MPI_Rput`).
pub fn put(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> Issued {
    let (_, w) = rt.win(win)?;
    if let Some((_, at, len)) = direct(w, o, t) {
        // SAFETY: the origin holds `len` bytes (C contract); the target range lies in the
        // target's mapped window memory (checked); they may overlap (our own window).
        unsafe { move_bytes(o.addr as *const u8, at as *mut u8, len) };
        return Ok(None);
    }
    let Some(r) = w.resolve(rt, t)? else {
        return Ok(None);
    };
    let (os, _) = local_shape(rt, o)?;
    same_bytes("origin", os.bytes(), r.shape.bytes())?;
    if r.place == Place::OtherNode {
        let answered = w.answer_next();
        // SAFETY: the origin buffer is the caller's (C contract).
        let call = unsafe { net::Call::put(w.comm, t.rank, &os, &r.shape, answered) };
        return Ok(Some(call));
    }
    // SAFETY: the origin buffer is the caller's (C contract); the target range was checked
    // against the target's window (mapped here, or written through the kernel).
    unsafe { access::put(r.place, &os, &r.shape) }.map(|_| None)
}

/// Copies `len` bytes between ranges that may overlap: the common 4-, 8- and 16-byte elements
/// by register moves (every load before the store), the rest by `memmove`.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes.
#[inline(always)]
pub(super) unsafe fn move_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: each arm reads and writes exactly `len` bytes of the caller's ranges.
    unsafe {
        match len {
            8 => (dst as *mut u64).write_unaligned((src as *const u64).read_unaligned()),
            4 => (dst as *mut u32).write_unaligned((src as *const u32).read_unaligned()),
            16 => (dst as *mut u128).write_unaligned((src as *const u128).read_unaligned()),
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

/// The target address here and the length of an operation of window `win` that takes the
/// [`direct`] path; `None` for anything else (an invalid window included).
#[inline(always)]
pub(super) fn direct_at(
    rt: &Runtime,
    win: usize,
    o: &Buf,
    t: &TargetArg,
) -> Option<(usize, usize)> {
    let (_, w) = rt.win(win).ok()?;
    direct(w, o, t).map(|(_, at, len)| (at, len))
}

/// [`put`] when it takes the direct path (on-node mapped target, one predefined type, in
/// an access epoch): whether it did the put. Without a request to hand out nor a call to
/// return, the C entry's short way in; anything else (errors included) is [`put`]'s.
#[inline(always)]
pub fn put_direct(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> bool {
    let Some((at, len)) = direct_at(rt, win, o, t) else {
        return false;
    };
    // SAFETY: as in `put`.
    unsafe { move_bytes(o.addr as *const u8, at as *mut u8, len) };
    true
}

/// [`get`] when it takes the direct path: whether it did the get (see [`put_direct`]).
#[inline(always)]
pub fn get_direct(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> bool {
    let Some((at, len)) = direct_at(rt, win, o, t) else {
        return false;
    };
    // SAFETY: as in `get`.
    unsafe { move_bytes(at as *const u8, o.addr as *mut u8, len) };
    true
}

/// `MPI_Get` (and `MPI_Rget`).
pub fn get(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> Issued {
    let (_, w) = rt.win(win)?;
    if let Some((_, at, len)) = direct(w, o, t) {
        // SAFETY: as in `put`, the other way.
        unsafe { move_bytes(at as *const u8, o.addr as *mut u8, len) };
        return Ok(None);
    }
    let Some(r) = w.resolve(rt, t)? else {
        return Ok(None);
    };
    let (os, _) = local_shape(rt, o)?;
    same_bytes("origin", os.bytes(), r.shape.bytes())?;
    if r.place == Place::OtherNode {
        return Ok(Some(net::Call::get(w.comm, t.rank, os, &r.shape)));
    }
    // SAFETY: as in `put`.
    unsafe { access::get(r.place, &os, &r.shape) }.map(|_| None)
}

/// [`accumulate`] when it takes the direct path ([`accumulate_direct`]): whether it did the
/// operation (see [`put_direct`]); errors are left to [`accumulate`].
#[inline(always)]
pub fn accumulate_direct_way(
    rt: &Runtime,
    win: usize,
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> bool {
    let Ok((_, w)) = rt.win(win) else {
        return false;
    };
    let Some(at) = direct(w, o, t) else {
        return false;
    };
    accumulate_scalar(w, at, o, result, t, op)
        || accumulate_direct(rt, w, at, o, result, t, op).unwrap_or(false)
}

/// The commonest direct accumulate inline: one element of a common sum ([`atomic::Scalar`]),
/// atomically on a target that uses atomics when aligned, else under its accumulate lock.
/// Whether it did the operation (else [`accumulate_direct`] decides).
#[inline(always)]
pub(super) fn accumulate_scalar(
    w: &Win,
    (rank, at, len): (usize, usize, usize),
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> bool {
    let Some(s) = Builtin::from_handle(op)
        .and_then(|b| atomic::Scalar::of(b, t.dt))
        .filter(|s| s.size() == len)
    else {
        return false;
    };
    if result.is_some_and(|r| r.dt != t.dt || r.count != t.count) {
        return false;
    }
    let atomics = w.targets[rank].atomics && atomic::capable(len, true, at);
    let _g = (!atomics).then(|| w.ctrl.acc_lock(rank));
    // SAFETY: `at` is one element of window memory mapped here (`direct`), aligned when
    // `atomics`; the origin and result buffers hold one element each (C contract).
    unsafe {
        s.add(
            atomics,
            o.addr as *const u8,
            at as *mut u8,
            result.map(|r| r.addr as *mut u8),
        )
    };
    true
}

/// `MPI_Accumulate` and `MPI_Get_accumulate` (`result` given), and their request forms.
pub fn accumulate(
    rt: &Runtime,
    win: usize,
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> Issued {
    let (_, w) = rt.win(win)?;
    if let Some(at) = direct(w, o, t) {
        if accumulate_scalar(w, at, o, result, t, op)
            || accumulate_direct(rt, w, at, o, result, t, op)?
        {
            return Ok(None);
        }
    }
    let Some(r) = w.resolve(rt, t)? else {
        // Still check the op (an error even to MPI_PROC_NULL).
        rt.op(op)?;
        return Ok(None);
    };
    if r.shape.bytes() == 0 {
        // Nothing to combine: any valid op goes, whatever the type (as in MPICH; mpi4py
        // probes support with a zero-count MPI_SUM on MPI_BYTE).
        rt.op(op)?;
        return Ok(None);
    }
    let no_op = op == MPI_NO_OP;
    let origin = if no_op && result.is_some() {
        None
    } else {
        Some(local_shape(rt, o)?)
    };
    let el = element(rt, op, &r.ty, origin.as_ref().map(|(_, t)| t))?;
    if let Some((os, _)) = &origin {
        same_bytes("origin", os.bytes(), r.shape.bytes())?;
    }
    let res = match result {
        Some(b) => {
            let (rs, _) = local_shape(rt, b)?;
            same_bytes("result", rs.bytes(), r.shape.bytes())?;
            Some(rs)
        }
        None => None,
    };
    if el.is_none() && res.is_none() {
        return Ok(None);
    }
    let empty = Shape::Contig { addr: 0, len: 0 };
    let os = origin.as_ref().map(|(s, _)| s).unwrap_or(&empty);
    if r.place == Place::OtherNode {
        let basic = r.ty.basic().expect("checked by `element`");
        let op = if el.is_none() { MPI_NO_OP } else { op };
        let answered = w.answer_next();
        let (comm, shape) = (w.comm, &r.shape);
        // SAFETY: the origin buffer is the caller's (C contract).
        let call =
            unsafe { net::Call::accumulate(comm, t.rank, os, shape, res, op, basic, answered) };
        return Ok(Some(call));
    }
    let tgt = &w.targets[r.rank];
    let width = r.ty.basic().and_then(atomic::width);
    if let (true, Place::Mapped(_), Some(size)) = (tgt.atomics, r.place, width) {
        let mut origin = vec![0u8; if el.is_some() { os.bytes() } else { 0 }];
        // SAFETY: the origin is the caller's (C contract); the target was checked as in
        // `put`, in window memory mapped here; elements of `size` bytes, whole per segment.
        unsafe {
            if el.is_some() {
                os.pack(&mut origin);
            }
            let segs = r.shape.segments();
            let fetch = res.is_some();
            let old = atomic::accumulate_packed(
                &w.ctrl,
                r.rank,
                size,
                &segs,
                &origin,
                fetch,
                el.as_ref(),
            );
            if let Some(rs) = &res {
                rs.unpack(&old);
            }
        }
        return Ok(None);
    }
    let _g = w.ctrl.acc_lock(r.rank);
    let timed = match stealable(w, &r, os, res.as_ref(), el.as_ref(), op) {
        Sharing::Ineligible => None,
        Sharing::Alone(kind) => Some((kind, std::time::Instant::now())),
        Sharing::Shared(task, _packed) => {
            let (kind, len, t0) = (task.kind(), task.len, std::time::Instant::now());
            if !acc_steal::run(&w.ctrl, r.rank, task) {
                return fail(
                    MPI_ERR_OTHER,
                    "a chunk of the accumulate could not be reduced",
                );
            }
            steal_choice::record(kind, len, true, t0.elapsed().as_nanos() as u64);
            return Ok(None);
        }
    };
    // SAFETY: as in `put`; the accumulate lock makes the read-modify-write atomic with
    // respect to every other accumulate to this target.
    unsafe { access::accumulate(r.place, os, &r.shape, res.as_ref(), el.as_ref()) }?;
    if let Some((kind, t0)) = timed {
        let ns = t0.elapsed().as_nanos() as u64;
        steal_choice::record(kind, r.shape.bytes(), false, ns);
    }
    Ok(None)
}

/// Whether an accumulate is shared out (`stealable`).
pub(super) enum Sharing {
    /// It cannot be.
    Ineligible,
    /// It could be, and the measured choice (`steal_choice`) says the origin alone is faster
    /// (or is measuring that way): its target data is of this kind.
    Alone(steal_choice::TargetKind),
    /// Shared: the task, and the packed origin data it may point into.
    Shared(acc_steal::Task, Vec<u8>),
}

/// The accumulate family on the [`direct`] path, after [`accumulate_scalar`] declined: builtin
/// op, same predefined type and count everywhere (result included). By hardware atomics on a target that uses them, else under
/// its accumulate lock; false leaves the operation to the general path (errors, a user op,
/// a different result type, an accumulate large enough to share).
#[inline(never)]
pub(super) fn accumulate_direct(
    rt: &Runtime,
    w: &Win,
    (rank, at, len): (usize, usize, usize),
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> MpiResult<bool> {
    let Some(b) = Builtin::from_handle(op) else {
        return Ok(false);
    };
    if len == 0 || result.is_some_and(|r| r.dt != t.dt || r.count != t.count) {
        return Ok(false);
    }
    let no_op = b == Builtin::NoOp;
    if no_op && result.is_none() {
        return Ok(false);
    }
    let old = result.map(|r| r.addr as *mut u8);
    let reducer = rt.accumulate_reducer(op, t.dt)?;
    let size = reducer.extent.max(1);
    let n = len / size;
    if w.targets[rank].atomics && atomic::capable(size, true, at) {
        let update = match b {
            Builtin::NoOp => atomic::Update::Read,
            Builtin::Replace => atomic::Update::Replace,
            _ => atomic::Update::Reduce(&reducer),
        };
        // SAFETY: `at` is `n` aligned elements of window memory mapped here (`direct`,
        // `capable`); the origin and result buffers hold `n` elements each (C contract).
        unsafe { atomic::update(update, size, n, o.addr as *const u8, at as *mut u8, old) };
        return Ok(true);
    }
    if result.is_none() && len >= acc_steal::min_bytes().unwrap_or(usize::MAX) {
        // Large enough to share (`stealable`; fetches into mapped memory are not shared).
        return Ok(false);
    }
    let _g = w.ctrl.acc_lock(rank);
    // SAFETY: the target run and the origin and result buffers hold `n` whole elements
    // (`direct`, C contract); the accumulate lock makes the update atomic; `apply_raw` copes
    // with overlap.
    unsafe {
        if let Some(p) = old {
            std::ptr::copy(at as *const u8, p, len);
        }
        if !no_op {
            reducer.apply_raw(n, o.addr as *const u8, at as *mut u8);
        }
    }
    Ok(true)
}

/// The accumulate as a task waiting processes may share (`acc_steal`): large, a hole-free
/// element, contiguous target data in shared window memory or in a process of the node
/// (`MPI_Win_create`d or attached memory, reached by CMA); with a result buffer only into
/// another process's memory, and contiguous.
/// Whether to share it is `steal_choice`'s measured choice. A non-contiguous origin is packed
/// first: the returned buffer holds it and must outlive the task.
pub(super) fn stealable(
    w: &Win,
    r: &Resolved,
    o: &Shape,
    result: Option<&Shape>,
    el: Option<&Element>,
    op: usize,
) -> Sharing {
    match eligible(w, r, o, result, el, op) {
        None => Sharing::Ineligible,
        Some(task) if !steal_choice::choose(task.kind(), task.len) => Sharing::Alone(task.kind()),
        Some(mut task) => {
            let mut packed = Vec::new();
            if o.contig().is_none() {
                packed = vec![0u8; task.len];
                // SAFETY: the origin buffer is the caller's (C contract); `packed` holds its
                // bytes.
                unsafe { o.pack(&mut packed) };
                task.origin = packed.as_ptr() as usize;
            }
            Sharing::Shared(task, packed)
        }
    }
}

/// The accumulate as a task to share, if it may be (see [`stealable`]); a non-contiguous
/// origin's address is left 0 to be packed.
pub(super) fn eligible(
    w: &Win,
    r: &Resolved,
    o: &Shape,
    result: Option<&Shape>,
    el: Option<&Element>,
    op: usize,
) -> Option<acc_steal::Task> {
    let min = acc_steal::min_bytes()?;
    let el = el?;
    let Shape::Contig { addr: ta, len } = r.shape else {
        return None;
    };
    let owns_memory = matches!(w.flavor, MPI_WIN_FLAVOR_ALLOCATE | MPI_WIN_FLAVOR_SHARED);
    let me = std::process::id() as i32;
    let target = match r.place {
        Place::Mapped(_) if owns_memory => acc_steal::TaskTarget::Shared {
            off: ta - w.ctrl.memory(),
        },
        Place::Mapped(_) => acc_steal::TaskTarget::Process { pid: me, addr: ta },
        Place::Remote { pid, .. } => acc_steal::TaskTarget::Process { pid, addr: ta },
        Place::OtherNode => return None,
    };
    // Fetched values are shared out only when the origin reaches the target by CMA: where it
    // copies them with loads and stores, helpers writing them back by CMA made
    // `MPI_Get_accumulate` slower (benches/README.md, "Accumulate stealing").
    let result = match result {
        None => 0,
        Some(Shape::Contig { addr, .. }) if matches!(target, acc_steal::TaskTarget::Process { pid, .. } if pid != me) => {
            *addr
        }
        Some(_) => return None,
    };
    if w.targets[r.rank].atomics
        || len < min
        || el.size == 0
        || !el.dense()
        || len / acc_steal::CHUNK >= ctrl::MAX_CHUNKS
        || o.bytes() != len
    {
        return None;
    }
    Some(acc_steal::Task {
        pid: me,
        origin: o.contig().map_or(0, |(a, _)| a),
        result,
        target,
        len,
        op,
        dt: el.handle,
    })
}

/// The local buffers of `MPI_Compare_and_swap`: one element each.
#[derive(Clone, Copy, Debug)]
pub struct Swap {
    /// The value to write.
    pub origin: usize,
    /// The value to compare with.
    pub compare: usize,
    /// Where the old value goes.
    pub result: usize,
}

/// [`compare_and_swap`] when it takes the direct path (see [`put_direct`]): one element of
/// 1, 2, 4 or 8 bytes in memory mapped here, by one atomic instruction on a target that uses
/// atomics when aligned, else under the target's accumulate lock. Whether it did the swap.
#[inline(always)]
pub fn compare_and_swap_direct(rt: &Runtime, win: usize, s: Swap, t: &TargetArg) -> bool {
    let Ok((_, w)) = rt.win(win) else {
        return false;
    };
    let o = Buf {
        addr: s.origin,
        count: t.count,
        dt: t.dt,
    };
    let Some((rank, at, len)) = direct(w, &o, t) else {
        return false;
    };
    if atomic::width(t.dt) != Some(len) {
        return false;
    }
    let (origin, compare, result) = (
        s.origin as *const u8,
        s.compare as *const u8,
        s.result as *mut u8,
    );
    if w.targets[rank].atomics && atomic::capable(len, true, at) {
        // SAFETY: one aligned element of window memory mapped here (`direct`, `capable`);
        // the three local buffers hold one element each (C contract).
        unsafe { atomic::compare_and_swap(len, origin, compare, result, at as *mut u8) };
        return true;
    }
    let _g = w.ctrl.acc_lock(rank);
    let (mut cur, mut new) = ([0u8; 8], [0u8; 8]);
    // SAFETY: `at` is one element of `len <= 8` bytes of window memory mapped here
    // (`direct`); the local buffers hold one element each (C contract); the accumulate lock
    // makes the swap atomic. Both values are read before anything is written (the buffers
    // may overlap).
    unsafe {
        std::ptr::copy_nonoverlapping(at as *const u8, cur.as_mut_ptr(), len);
        std::ptr::copy_nonoverlapping(origin, new.as_mut_ptr(), len);
        let equal = cur[..len] == *std::slice::from_raw_parts(compare, len);
        std::ptr::copy_nonoverlapping(cur.as_ptr(), result, len);
        if equal {
            std::ptr::copy_nonoverlapping(new.as_ptr(), at as *mut u8, len);
        }
    }
    true
}

/// `MPI_Compare_and_swap` (`t.count` is 1).
pub fn compare_and_swap(rt: &Runtime, win: usize, s: Swap, t: &TargetArg) -> Issued {
    let (origin, compare, result) = (s.origin, s.compare, s.result);
    let (_, w) = rt.win(win)?;
    let Some(r) = w.resolve(rt, t)? else {
        return Ok(None);
    };
    let Ty::Basic { info, .. } = &r.ty else {
        return fail(
            MPI_ERR_TYPE,
            "MPI_Compare_and_swap takes a predefined datatype",
        );
    };
    if r.place == Place::OtherNode {
        let bufs = (origin, compare, result);
        // SAFETY: the three local buffers hold one element each (C contract).
        let call =
            unsafe { net::Call::compare_and_swap(w.comm, t.rank, bufs, &r.shape, info.size) };
        return Ok(Some(call));
    }
    if let (true, Place::Mapped(_), Shape::Contig { addr, .. }) =
        (w.targets[r.rank].atomics, r.place, &r.shape)
    {
        if atomic::capable(info.size, info.size == info.extent, *addr) {
            // SAFETY: one aligned element of window memory mapped here (checked as in
            // `put`); the three local buffers hold one element each (C contract).
            unsafe {
                atomic::compare_and_swap(
                    info.size,
                    origin as *const u8,
                    compare as *const u8,
                    result as *mut u8,
                    *addr as *mut u8,
                )
            };
            return Ok(None);
        }
    }
    let _g = w.ctrl.acc_lock(r.rank);
    // SAFETY: the three local buffers hold one element each (C contract); the target was
    // checked as in `put`; the accumulate lock makes the swap atomic.
    unsafe { access::compare_and_swap(r.place, origin, compare, result, &r.shape, info.size) }
        .map(|_| None)
}
