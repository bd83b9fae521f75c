//! The target side of one-sided operations between nodes: the window server every rank runs
//! for its windows (`serve`, a background task), which receives requests, places or reads
//! the data, reduces accumulates and answers.

use super::*;

/// What a window shares with its server.
#[derive(Debug, Default)]
pub struct Shared {
    /// The window is freed: the server ends once its answers are sent.
    closed: AtomicBool,
    /// Requests being received and answers being sent.
    busy: AtomicUsize,
}

impl Shared {
    /// Waits until the server has nothing in flight, then ends it (`MPI_Win_free`, after the
    /// closing barrier: no request can come any more). Call outside `runtime::with`.
    pub fn close(&self) -> MpiResult<()> {
        runtime::wait_for_unrung(|_| Ok((self.busy.load(Ordering::Acquire) == 0).then_some(())))?;
        self.closed.store(true, Ordering::Release);
        Ok(())
    }
}

/// This rank's memory, as its server sees it.
#[derive(Debug)]
pub struct Memory {
    /// Window base here (0 for dynamic windows: offsets are addresses).
    pub base: usize,
    /// Bytes (static windows).
    pub size: usize,
    /// A dynamic window: requests must lie in attached regions.
    pub dynamic: bool,
    /// Accumulates to it use hardware atomics per element (`rma::atomic`).
    pub atomics: bool,
}

/// A request being received.
pub(super) struct Incoming {
    rid: u32,
    buf: Vec<u8>,
    src: i32,
    /// The receive of a [`SPLIT`] accumulate's data, and where it lands.
    data: Option<(u32, Vec<u8>)>,
}

impl Incoming {
    /// Posts the receive of the data of a [`SPLIT`] accumulate once its request arrived
    /// (nothing for other requests, or when posted already). Whether the request is ready
    /// to handle: it arrived, with its data if any.
    pub(super) fn arrive(
        &mut self,
        rt: &mut Runtime,
        comm: u32,
        spare: &mut Spare,
    ) -> MpiResult<bool> {
        if !rt.reqs.get(self.rid).is_none_or(|q| q.done()) {
            return Ok(false);
        }
        if self.data.is_none() && self.buf.len() >= 8 * WORDS {
            let head = word(&self.buf, 0);
            let split_acc = Kind::of(head as u8) == Some(Kind::Acc) && head & SPLIT != 0;
            // (A malformed request is refused when handled.)
            if let (true, Ok(Request { seq, segs, .. })) = (split_acc, Request::parse(&self.buf)) {
                let mut into = spare.take(segs.iter().map(|s| s.1).sum());
                let rid = team::post_recv(rt, comm, self.src, tag::rma_data(seq), &mut into)?;
                self.data = Some((rid, into));
            }
        }
        match &self.data {
            Some((rid, _)) => Ok(rt.reqs.get(*rid).is_none_or(|q| q.done())),
            None => Ok(true),
        }
    }
}

/// Buffers of accumulate data kept for the next ones: a fresh large buffer costs a page
/// fault per page on every request (4 MiB accumulates between two hosts: 0.94 -> 1.10
/// GB/s).
#[derive(Default)]
pub(super) struct Spare(Vec<Vec<u8>>);

impl Spare {
    /// Buffers kept at most.
    const KEEP: usize = 4;

    /// A buffer of `len` bytes (their values are whatever a previous use left).
    pub(super) fn take(&mut self, len: usize) -> Vec<u8> {
        let mut b = self.0.pop().unwrap_or_default();
        b.resize(len, 0);
        b
    }

    /// Keeps `b` for a later [`Spare::take`] (up to [`Spare::KEEP`] buffers).
    pub(super) fn give(&mut self, b: Vec<u8>) {
        if self.0.len() < Self::KEEP && b.capacity() > 0 {
            self.0.push(b);
        }
    }
}

/// An answer being sent.
pub(super) struct Answer {
    /// Its send request.
    rid: u32,
    /// The bytes it sends, kept until sent (empty when it sends window memory).
    _buf: Vec<u8>,
    /// It sends the window memory itself to this origin ([`SPLIT`] gets of one segment):
    /// that origin's lock release waits until it is sent, so that no later epoch changes
    /// the memory under it.
    reads_for: Option<i32>,
}

/// The data of a [`SPLIT`] put being received.
pub(super) struct Arrival {
    /// Its receive request.
    rid: u32,
    /// The origin: its lock release, flushes and completes wait until the data landed.
    from: i32,
    /// Where it is received when not straight into the window memory (several target
    /// segments, or a refused request whose data is drained).
    buf: Vec<u8>,
    /// The target segments to scatter `buf` to once received (empty: nothing to scatter).
    scatter: Vec<(usize, usize)>,
    /// The answer's sequence, when the origin asked for an answer: sent once the data landed.
    answer: Option<u64>,
}

/// The window server of one rank (a background operation while the window lives).
pub struct Server {
    comm: u32,
    me: usize,
    ctrl: Arc<Ctrl>,
    mem: Memory,
    shared: Arc<Shared>,
    incoming: Vec<Incoming>,
    answers: Vec<Answer>,
    arrivals: Vec<Arrival>,
    spare: Spare,
    /// Lock requests waiting for the lock: (origin, answer sequence, kind).
    locks: VecDeque<(i32, u64, LockKind)>,
    /// Per origin: the first error of its unanswered requests since its last flush.
    errors: HashMap<i32, Refusal>,
}

/// Starts the server of window rank `me` on the window's communicator (table index `comm`).
pub fn serve(rt: &mut Runtime, comm: u32, me: usize, ctrl: Arc<Ctrl>, mem: Memory) -> Arc<Shared> {
    let shared = Arc::new(Shared::default());
    rt.background.push(Box::new(Server {
        comm,
        me,
        ctrl,
        mem,
        shared: shared.clone(),
        incoming: Vec::new(),
        answers: Vec::new(),
        arrivals: Vec::new(),
        spare: Spare::default(),
        locks: VecDeque::new(),
        errors: HashMap::new(),
    }));
    shared
}

/// A failed request: the class and message for the answer.
type Refusal = (i32, String);

pub(super) fn word(b: &[u8], k: usize) -> u64 {
    u64::from_ne_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"))
}

impl Background for Server {
    fn poll(&mut self, rt: &mut Runtime) -> bool {
        if let Err(e) = self.step(rt) {
            eprintln!("hympi[{}]: window server: {}", rt.world_rank, e.message());
        }
        let busy = self.incoming.len() + self.answers.len() + self.arrivals.len();
        self.shared.busy.store(busy, Ordering::Release);
        busy == 0 && self.shared.closed.load(Ordering::Acquire)
    }
}

impl Server {
    pub(super) fn step(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        if self.shared.closed.load(Ordering::Acquire) {
            return self.reap(rt);
        }
        let Some(c) = rt.comms.get(self.comm) else {
            return Ok(());
        };
        let ctx = wire_ctx(c, tag::RMA);
        let pattern = Pattern {
            ctx,
            src: MPI_ANY_SOURCE,
            tag: tag::RMA,
        };
        let unit = datatype::lookup(MPI_BYTE).expect("MPI_BYTE is predefined");
        while let Some(u) = rt
            .matchers
            .of_msg(ctx, MPI_ANY_SOURCE, tag::RMA)
            .take_unexpected(&pattern)
        {
            let len = u.payload.len() as usize;
            let src = u.env.src;
            let mut buf = vec![0u8; len];
            let rid = rt.new_request(ReqKind::Recv, self.comm)?;
            rt.prepare_recv(rid, buf.as_mut_ptr(), len, unit, None);
            rt.consume(rid, u)?;
            let mut inc = Incoming {
                rid,
                buf,
                src,
                data: None,
            };
            // An accumulate's data is asked for as soon as its request is here, so that
            // it travels while the requests ahead are handled.
            inc.arrive(rt, self.comm, &mut self.spare)?;
            self.incoming.push(inc);
        }
        // In arrival order (a large request still arriving holds back later ones): an
        // origin's operations, accumulates above all, apply in the order it issued them.
        while let Some(rid) = self.incoming.first().map(|i| i.rid) {
            if !self.incoming[0].arrive(rt, self.comm, &mut self.spare)? {
                break;
            }
            let (head, src) = (self.incoming[0].buf.first().copied(), self.incoming[0].src);
            if self.holds(head, src) {
                // Held back, and everything after it: another epoch may change the memory
                // that an answer to this origin still reads, or read the memory its data
                // has not reached yet.
                self.reap(rt)?;
                if self.holds(head, src) {
                    break;
                }
            }
            let inc = self.incoming.remove(0);
            team::all_done(rt, &[rid])?;
            let data = match &inc.data {
                Some((data_rid, data)) => {
                    team::all_done(rt, &[*data_rid])?;
                    Some(&data[..])
                }
                None => None,
            };
            self.handle(rt, inc.src, &inc.buf, data)?;
            if let Some((_, data)) = inc.data {
                self.spare.give(data);
            }
        }
        self.grant_locks(rt)?;
        self.reap(rt)
    }

    /// Whether a request of kind byte `head` from `origin` must wait: its lock release while
    /// an answer to it still reads the window memory, or its release, flush or complete
    /// while the data of its puts is still arriving.
    pub(super) fn holds(&self, head: Option<u8>, origin: i32) -> bool {
        let reading = || self.answers.iter().any(|a| a.reads_for == Some(origin));
        let arriving = || self.arrivals.iter().any(|a| a.from == origin);
        match head.and_then(Kind::of) {
            Some(Kind::Unlock) => reading() || arriving(),
            Some(Kind::Flush | Kind::Complete) => arriving(),
            _ => false,
        }
    }

    /// Frees the answers sent and lands the put data received.
    pub(super) fn reap(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        let mut k = 0;
        while k < self.arrivals.len() {
            if !team::all_done(rt, &[self.arrivals[k].rid])? {
                k += 1;
                continue;
            }
            let a = self.arrivals.remove(k);
            // SAFETY: the segments lie in this rank's window memory (checked by `place`
            // when the request was handled; the window lives while its server is busy)
            // and `buf` holds their total.
            unsafe { scatter(&a.scatter, &a.buf) };
            if let Some(seq) = a.answer {
                self.answer(rt, a.from, seq, Ok(Vec::new()))?;
            }
        }
        let mut k = 0;
        while k < self.answers.len() {
            if team::all_done(rt, &[self.answers[k].rid])? {
                self.answers.remove(k);
            } else {
                k += 1;
            }
        }
        Ok(())
    }

    pub(super) fn answer(
        &mut self,
        rt: &mut Runtime,
        to: i32,
        seq: u64,
        r: Result<Vec<u8>, Refusal>,
    ) -> MpiResult<()> {
        let msg = match r {
            Ok(mut data) => {
                let mut m = 0u64.to_ne_bytes().to_vec();
                m.append(&mut data);
                m
            }
            Err((code, text)) => {
                let mut m = (code as u64).to_ne_bytes().to_vec();
                let t = text.as_bytes();
                m.extend_from_slice(&t[..t.len().min(MESSAGE - 1)]);
                m
            }
        };
        let rid = team::post_send(rt, self.comm, to, tag::rma_reply(seq), &msg)?;
        self.answers.push(Answer {
            rid,
            _buf: msg,
            reads_for: None,
        });
        Ok(())
    }

    pub(super) fn grant_locks(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        while let Some(&(src, seq, kind)) = self.locks.front() {
            if !self.ctrl.try_lock(self.me, kind) {
                break;
            }
            self.locks.pop_front();
            self.answer(rt, src, seq, Ok(Vec::new()))?;
        }
        Ok(())
    }

    /// The segments of a request as addresses here, checked against this rank's memory.
    pub(super) fn place(&self, segs: &[(usize, usize)]) -> Result<Vec<(usize, usize)>, Refusal> {
        let regions = self.mem.dynamic.then(|| {
            let _g = self.ctrl.acc_lock(self.me);
            self.ctrl.regions(self.me)
        });
        place(&self.mem, regions.as_deref(), segs)
    }

    /// Handles request `b` from `src`; `split`: the data of a [`SPLIT`] accumulate, which
    /// came apart from it.
    pub(super) fn handle(
        &mut self,
        rt: &mut Runtime,
        src: i32,
        b: &[u8],
        split: Option<&[u8]>,
    ) -> MpiResult<()> {
        let Request {
            kind,
            head,
            seq,
            op,
            basic,
            segs,
            data,
        } = Request::parse(b)?;
        let data = split.unwrap_or(data);
        let lock = if head & EXCLUSIVE != 0 {
            LockKind::Exclusive
        } else {
            LockKind::Shared
        };
        let me = self.me;
        let r = match kind {
            Kind::Lock => {
                self.locks.push_back((src, seq, lock));
                return self.grant_locks(rt);
            }
            Kind::Unlock if head & ANSWER == 0 => {
                self.ctrl.unlock(me, lock);
                Ok(Vec::new())
            }
            Kind::Unlock | Kind::Flush => {
                if kind == Kind::Unlock {
                    self.ctrl.unlock(me, lock);
                }
                // Answered after the sender's earlier requests: their first error, if any.
                match self.errors.remove(&src) {
                    Some(e) => Err(e),
                    None => Ok(Vec::new()),
                }
            }
            Kind::Post => {
                self.ctrl
                    .post_count(src as usize, me)
                    .fetch_add(1, Ordering::Release);
                Ok(Vec::new())
            }
            Kind::Complete => {
                self.ctrl
                    .complete_count(me, src as usize)
                    .fetch_add(1, Ordering::Release);
                Ok(Vec::new())
            }
            Kind::Put if head & SPLIT != 0 => {
                return self.receive_put(rt, src, head, seq, &segs);
            }
            Kind::Put => self.place(&segs).map(|at| {
                // SAFETY: the segments lie in this rank's window memory (checked by
                // `place`), which lives while the window does; `data` holds their total.
                unsafe { scatter(&at, data) };
                Vec::new()
            }),
            Kind::Get if head & SPLIT != 0 => {
                // The data under the next sequence (none after an error), then the class.
                let data_tag = tag::rma_reply(seq + 1);
                let r = match self.place(&segs) {
                    Ok(at) if at.len() == 1 => {
                        // SAFETY: one segment of this rank's window memory (`place`), which
                        // lives until the window is freed, and the window is not freed
                        // while an answer is being sent (`Shared::busy`). What the send reads
                        // changes only in a conflicting access or a later epoch, and the
                        // origin's lock release waits until it is sent (`reads_for`).
                        let window =
                            unsafe { std::slice::from_raw_parts(at[0].0 as *const u8, at[0].1) };
                        let rid = team::post_send(rt, self.comm, src, data_tag, window)?;
                        self.answers.push(Answer {
                            rid,
                            _buf: Vec::new(),
                            reads_for: Some(src),
                        });
                        return self.answer(rt, src, seq, Ok(Vec::new()));
                    }
                    // SAFETY: as for `Put`, reading.
                    Ok(at) => Ok(unsafe { gather(&at) }),
                    Err(e) => Err(e),
                };
                return self.answer_apart(rt, src, seq, r);
            }
            Kind::Get => self.place(&segs).map(|at| {
                // SAFETY: as for `Put`, reading.
                unsafe { gather(&at) }
            }),
            Kind::Acc => match (self.place(&segs), element(rt, op, basic)) {
                (Ok(at), Ok(el)) if self.mem.atomics && atomic::width(basic).is_some() => {
                    let size = atomic::width(basic).expect("checked");
                    let fetch = head & FETCH != 0;
                    let total: usize = at.iter().map(|s| s.1).sum();
                    if el.is_some() && data.len() != total {
                        Err((
                            MPI_ERR_INTERN,
                            "an accumulate request's data does not match its target".into(),
                        ))
                    } else {
                        // SAFETY: the segments lie in this rank's window memory (`place`),
                        // whole elements of `basic`; `data` holds their total (checked; a
                        // `MPI_NO_OP` reads none).
                        Ok(unsafe {
                            atomic::accumulate_packed(
                                &self.ctrl,
                                me,
                                size,
                                &at,
                                data,
                                fetch,
                                el.as_ref(),
                            )
                        })
                    }
                }
                (Ok(at), Ok(el)) => {
                    let _g = self.ctrl.acc_lock(me);
                    // SAFETY: as for `Put`; the accumulate lock makes the update atomic with
                    // every other accumulate to this rank, on the node or from afar.
                    let old = (head & FETCH != 0).then(|| unsafe { gather(&at) });
                    if let Some(el) = el {
                        // SAFETY: as above.
                        if !unsafe { reduce_in_place(&at, data, &el) } {
                            // SAFETY: as above.
                            let mut cur = unsafe { gather(&at) };
                            el.apply(data, &mut cur);
                            // SAFETY: as above.
                            unsafe { scatter(&at, &cur) };
                        }
                    }
                    Ok(old.unwrap_or_default())
                }
                (Err(e), _) | (_, Err(e)) => Err(e),
            },
            Kind::Cas => match self.place(&segs) {
                Ok(at)
                    if self.mem.atomics
                        && at.len() == 1
                        && atomic::capable(at[0].1, true, at[0].0)
                        && data.len() == 2 * at[0].1 =>
                {
                    let size = at[0].1;
                    let mut old = vec![0u8; size];
                    // SAFETY: one aligned element of this rank's window memory (`place`,
                    // `capable`); `data` holds the new value and the one to compare.
                    unsafe {
                        atomic::compare_and_swap(
                            size,
                            data.as_ptr(),
                            data[size..].as_ptr(),
                            old.as_mut_ptr(),
                            at[0].0 as *mut u8,
                        )
                    };
                    Ok(old)
                }
                Ok(at) => {
                    let size = data.len() / 2;
                    let _g = self.ctrl.acc_lock(me);
                    // SAFETY: as for `Acc`.
                    let cur = unsafe { gather(&at) };
                    if cur.len() == size && cur == data[size..] {
                        // SAFETY: as for `Acc`.
                        unsafe { scatter(&at, &data[..size]) };
                    }
                    Ok(cur)
                }
                Err(e) => Err(e),
            },
        };
        if kind == Kind::Acc && head & FETCH_APART != 0 {
            return self.answer_apart(rt, src, seq, r);
        }
        if head & ANSWER != 0 {
            return self.answer(rt, src, seq, r);
        }
        if let Err(e) = r {
            self.errors.entry(src).or_insert(e);
        }
        Ok(())
    }

    /// Answers the request numbered `seq` with its data as a message of its own under the
    /// next sequence (empty after an error), then the class ([`SPLIT`] gets,
    /// [`FETCH_APART`] accumulates).
    pub(super) fn answer_apart(
        &mut self,
        rt: &mut Runtime,
        src: i32,
        seq: u64,
        r: Result<Vec<u8>, Refusal>,
    ) -> MpiResult<()> {
        let (data, r) = match r {
            Ok(data) => (data, Ok(Vec::new())),
            Err(e) => (Vec::new(), Err(e)),
        };
        let rid = team::post_send(rt, self.comm, src, tag::rma_reply(seq + 1), &data)?;
        self.answers.push(Answer {
            rid,
            _buf: data,
            reads_for: None,
        });
        self.answer(rt, src, seq, r)
    }
}

impl Server {
    /// Posts the receive of a [`SPLIT`] put's data: straight into the window memory when
    /// it has one target segment, else into a buffer scattered once it arrived; a refused
    /// request's data is drained. Answered (if asked) once it landed, or at once when
    /// refused.
    pub(super) fn receive_put(
        &mut self,
        rt: &mut Runtime,
        src: i32,
        head: u64,
        seq: u64,
        segs: &[(usize, usize)],
    ) -> MpiResult<()> {
        let total = segs.iter().map(|s| s.1).sum();
        let placed = self.place(segs);
        let (mut buf, scatter) = match &placed {
            Ok(at) if at.len() == 1 => (Vec::new(), Vec::new()),
            Ok(at) => (vec![0u8; total], at.clone()),
            Err(_) => (vec![0u8; total], Vec::new()),
        };
        let into: &mut [u8] = match &placed {
            // SAFETY: one segment of this rank's window memory (`place`), which lives until
            // the window is freed, and the window is not freed while data is arriving
            // (`Shared::busy`). Only this origin's conflicting accesses could touch it
            // before it lands, and its release, flushes and completes wait (`holds`).
            Ok(at) if at.len() == 1 => unsafe {
                std::slice::from_raw_parts_mut(at[0].0 as *mut u8, at[0].1)
            },
            _ => &mut buf,
        };
        let rid = team::post_recv(rt, self.comm, src, tag::rma_data(seq), into)?;
        let asked = head & ANSWER != 0;
        self.arrivals.push(Arrival {
            rid,
            from: src,
            buf,
            scatter,
            answer: (asked && placed.is_ok()).then_some(seq),
        });
        match placed {
            Err(e) if asked => self.answer(rt, src, seq, Err(e)),
            Err(e) => {
                self.errors.entry(src).or_insert(e);
                Ok(())
            }
            Ok(_) => Ok(()),
        }
    }
}

/// A request as a server reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Request<'a> {
    pub(super) kind: Kind,
    /// The first word (kind and flags).
    pub(super) head: u64,
    /// Answer sequence.
    pub(super) seq: u64,
    pub(super) op: usize,
    pub(super) basic: usize,
    pub(super) segs: Vec<(usize, usize)>,
    pub(super) data: &'a [u8],
}

impl<'a> Request<'a> {
    /// Reads request `b` (`MPI_ERR_INTERN` when malformed).
    pub(super) fn parse(b: &'a [u8]) -> MpiResult<Request<'a>> {
        if b.len() < 8 * WORDS {
            return fail(MPI_ERR_INTERN, "a one-sided request is too short");
        }
        let head = word(b, 0);
        let (nsegs, dbytes) = (word(b, 4) as usize, word(b, 5) as usize);
        let data_at = nsegs
            .checked_mul(2)
            .and_then(|w| w.checked_add(WORDS))
            .and_then(|w| w.checked_mul(8));
        if data_at.and_then(|d| d.checked_add(dbytes)) != Some(b.len()) {
            return fail(MPI_ERR_INTERN, "a one-sided request has a wrong length");
        }
        let Some(kind) = Kind::of(head as u8) else {
            return fail(MPI_ERR_INTERN, "an unknown one-sided request");
        };
        let segs = (0..nsegs)
            .map(|s| {
                (
                    word(b, WORDS + 2 * s) as usize,
                    word(b, WORDS + 2 * s + 1) as usize,
                )
            })
            .collect();
        Ok(Request {
            kind,
            head,
            seq: word(b, 1),
            op: word(b, 2) as usize,
            basic: word(b, 3) as usize,
            segs,
            data: &b[8 * (WORDS + 2 * nsegs)..],
        })
    }
}

/// Segments `segs` of a request as addresses in memory `mem`: inside the window (static), or
/// each inside one of the attached `regions` (dynamic).
pub(super) fn place(
    mem: &Memory,
    regions: Option<&[(u64, u64)]>,
    segs: &[(usize, usize)],
) -> Result<Vec<(usize, usize)>, Refusal> {
    let inside = |&(a, l): &(usize, usize)| match regions {
        _ if l == 0 => true,
        Some(regions) => {
            let (lo, hi) = (a as u64, (a as u64).saturating_add(l as u64));
            regions.iter().any(|&(b, n)| lo >= b && hi <= b + n)
        }
        None => a.checked_add(l).is_some_and(|e| e <= mem.size),
    };
    if !segs.iter().all(inside) {
        let what = if mem.dynamic {
            "the memory attached to the window"
        } else {
            "the window"
        };
        return Err((MPI_ERR_RMA_RANGE, format!("the access is outside {what}")));
    }
    Ok(segs
        .iter()
        .map(|&(o, l)| (mem.base.wrapping_add(o), l))
        .collect())
}

/// The element and reduction of an accumulate request (`None` for `MPI_NO_OP`).
pub(super) fn element(rt: &Runtime, op: usize, basic: usize) -> Result<Option<Element>, Refusal> {
    if Builtin::from_handle(op) == Some(Builtin::NoOp) {
        return Ok(None);
    }
    crate::core::rma::basic_element(rt, op, basic)
        .map(Some)
        .map_err(|e| (e.class(), e.message().to_string()))
}

/// Writes `data` to the segments `at` in order.
///
/// # Safety
/// The segments must be writable here; `data` holds their total.
pub(super) unsafe fn scatter(at: &[(usize, usize)], data: &[u8]) {
    let mut from = 0;
    for &(a, l) in at {
        // SAFETY: caller guarantee; `data` is a separate buffer of ours.
        unsafe { std::ptr::copy_nonoverlapping(data[from..].as_ptr(), a as *mut u8, l) };
        from += l;
    }
}

/// Applies `data op target` straight in the segments `at` (in order), when the element has
/// no holes, every segment holds whole elements and `data` their total; else returns false
/// having changed nothing (the caller then reduces a gathered copy).
///
/// # Safety
/// The segments must be readable and writable here.
pub(super) unsafe fn reduce_in_place(at: &[(usize, usize)], data: &[u8], el: &Element) -> bool {
    let size = el.size;
    let total: usize = at.iter().map(|s| s.1).sum();
    if !el.dense() || size == 0 || total != data.len() || at.iter().any(|s| s.1 % size != 0) {
        return false;
    }
    let mut from = 0;
    for &(a, l) in at {
        // SAFETY: caller guarantee for the segment; `data[from..from + l]` holds its
        // elements (total checked); the kernel copes with unaligned and overlapping
        // buffers (`apply_raw`).
        unsafe {
            el.reducer
                .apply_raw(l / size, data[from..].as_ptr(), a as *mut u8)
        };
        from += l;
    }
    true
}

/// Reads the segments `at` in order.
///
/// # Safety
/// The segments must be readable here.
pub(super) unsafe fn gather(at: &[(usize, usize)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(at.iter().map(|s| s.1).sum());
    for &(a, l) in at {
        // SAFETY: caller guarantee.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(a as *const u8, l) });
    }
    out
}
