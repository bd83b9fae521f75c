//! The progress engine: polling the node and network lanes, handling what arrives (matching,
//! rendezvous reads and streams, replies), and the packing helpers of derived layouts.

use super::*;

impl Runtime {
    /// Completes the stealable copies whose chunks are all done, copying one chunk of each
    /// unfinished one first (so they finish even when no thread helps).
    #[cold]
    pub(super) fn progress_copies<T: Transport>(&mut self, shm: &mut T) -> bool {
        let mut did = false;
        let mut i = 0;
        while i < self.copies.len() {
            let job = &self.copies[i].job;
            if !job.finished() {
                did |= job.run_one();
            }
            if !self.copies[i].job.finished() {
                i += 1;
                continue;
            }
            let c = self.copies.swap_remove(i);
            if c.job.failed() {
                if let Some(r) = self.reqs.get_mut(c.rid) {
                    r.status.error = MPI_ERR_OTHER;
                }
            }
            self.complete(c.rid);
            shm.send_or_queue(Outgoing::Reply {
                dest: c.src_local,
                kind: MsgKind::Fin,
                sreq: c.sreq,
                rreq: 0,
            });
            did = true;
        }
        did
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn recv_rendezvous<T: Transport>(
        &mut self,
        shm: &mut T,
        rid: u32,
        env: Envelope,
        src_local: u32,
        sreq: u64,
        addr: u64,
        total: u64,
        nseg: u64,
    ) {
        let token = self.reqs.token(rid);
        let r = self.reqs.get_mut(rid).expect("live receive request");
        if nseg != 0 || r.noncontig() {
            return self.recv_rendezvous_v(shm, rid, env, src_local, sreq, addr, total, nseg);
        }
        let n = (total as usize).min(r.cap);
        let steal = crate::core::threads::steal::settings();
        let waiting = shm.peer_waiting(src_local);
        let cma = shm.cma_enabled();
        // A waiting sender can stream its message; whether that beats a CMA copy depends on
        // the machine, so it is measured (`core::p2p::copy_choice`) unless a limit was set.
        let timed = waiting && cma && n > 0 && self.copy_choice.is_measured();
        let kind = if timed {
            self.copy_choice.start(n, timestamp_ns())
        } else {
            self.copy_choice.fixed_kind(n)
        };
        let stream = waiting && (!cma || kind == CopyKind::Stream);
        let split = cma && !stream && n >= self.split_min && waiting;
        if !split
            && !stream
            && steal.on
            && self.thread_level == MPI_THREAD_MULTIPLE
            && shm.cma_enabled()
            && n >= steal.min
            && crate::core::threads::steal::helpers_available()
        {
            // The sender is busy elsewhere (when it waits, it copies half itself: the split
            // below) and another thread of this process waits inside MPI: copy in chunks it
            // can take.
            // SAFETY: the receive buffer holds `cap` >= n bytes and stays valid until the
            // request completes, which `progress_copies` does only after every chunk.
            let job = std::sync::Arc::new(unsafe {
                crate::core::threads::steal::CopyJob::new(
                    shm.pid_of(src_local),
                    addr,
                    r.buf,
                    n,
                    crate::core::threads::steal::chunk_for(n, steal.chunk),
                )
            });
            r.status = Status {
                source: env.src,
                tag: env.tag,
                error: if total as usize > r.cap {
                    MPI_ERR_TRUNCATE
                } else {
                    MPI_SUCCESS
                },
                bytes: n as u64,
                cancelled: false,
            };
            crate::core::threads::steal::publish(&job);
            if timed {
                self.copy_choice.abandon(n, timestamp_ns());
            }
            self.copies.push(PendingCopy {
                rid,
                job,
                src_local,
                sreq,
            });
            return;
        }
        if split {
            // Two cores copy: the waiting sender writes the tail, we read the head.
            let head = split_point(n);
            let (buf, cap) = (r.buf, r.cap);
            shm.send_or_queue(Outgoing::Split {
                dest: src_local,
                sreq,
                rreq: token,
                addr: buf as u64,
                total: n as u64,
            });
            let traced = crate::core::diag::trace::begin();
            // SAFETY: the receive buffer holds `cap` ≥ n > head bytes.
            let ok = unsafe { shm.cma_read(src_local, addr, buf, head) }.is_ok();
            if let Some(start) = traced {
                crate::core::diag::trace::copy(start, env.src, head);
            }
            r.status = Status {
                source: env.src,
                tag: env.tag,
                error: if !ok {
                    MPI_ERR_OTHER
                } else if total as usize > cap {
                    MPI_ERR_TRUNCATE
                } else {
                    MPI_SUCCESS
                },
                bytes: n as u64,
                cancelled: false,
            };
            // Completion waits for SplitDone; remember where the sender's buffer is in case
            // the sender cannot write and we copy the tail ourselves.
            let e = r.extra();
            e.stream_total = addr;
            e.stream_got = src_local as u64;
            e.timed_bytes = if timed { n as u64 } else { 0 };
            return;
        }
        if cma && !stream {
            let traced = crate::core::diag::trace::begin();
            // SAFETY: the receive buffer holds `cap` ≥ n bytes.
            let ok = unsafe { shm.cma_read(src_local, addr, r.buf, n) }.is_ok();
            if let Some(start) = traced {
                crate::core::diag::trace::copy(start, env.src, n);
            }
            if timed {
                // A failed read falls back to the stream below, which is not timed.
                if ok {
                    self.copy_choice.finish(n, timestamp_ns());
                } else {
                    self.copy_choice.abandon(n, timestamp_ns());
                }
            }
            if ok {
                r.status = Status {
                    source: env.src,
                    tag: env.tag,
                    error: if total as usize > r.cap {
                        MPI_ERR_TRUNCATE
                    } else {
                        MPI_SUCCESS
                    },
                    bytes: n as u64,
                    cancelled: false,
                };
                self.complete(rid);
                shm.send_or_queue(Outgoing::Reply {
                    dest: src_local,
                    kind: MsgKind::Fin,
                    sreq,
                    rreq: 0,
                });
                return;
            }
        }
        // Streamed copy through cells, or (on the network) straight into our buffer when it
        // takes the whole message.
        if total > 0 && total as usize <= r.cap && !r.noncontig() {
            // SAFETY: the receive buffer holds `cap` >= total bytes and stays valid until the
            // request completes, which is after the data message is released.
            unsafe { shm.recv_into(src_local, token, r.buf, total as usize) };
        }
        let e = r.extra();
        e.stream_total = total;
        e.stream_got = 0;
        e.timed_bytes = if timed && stream { n as u64 } else { 0 };
        r.status = Status {
            source: env.src,
            tag: env.tag,
            error: MPI_SUCCESS,
            bytes: 0,
            cancelled: false,
        };
        if total == 0 {
            self.complete(rid);
        }
        shm.send_or_queue(Outgoing::Reply {
            dest: src_local,
            kind: MsgKind::Cts,
            sreq,
            rreq: token,
        });
    }

    /// Rendezvous receive where a side is noncontiguous: one vectored CMA copy from the
    /// sender's segments straight into the receiver's (no pack buffer), or a stream of packed
    /// cells when CMA is off or the sender asked for it.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    pub(super) fn recv_rendezvous_v<T: Transport>(
        &mut self,
        shm: &mut T,
        rid: u32,
        env: Envelope,
        src_local: u32,
        sreq: u64,
        addr: u64,
        total: u64,
        nseg: u64,
    ) {
        let token = self.reqs.token(rid);
        let iov_min = self.dt_iov_min;
        let r = self.reqs.get_mut(rid).expect("live receive request");
        let n = (total as usize).min(r.cap);
        // A contiguous sender's block is read straight into our segments when they are large
        // enough (HYMPI_DT_IOV_MIN); otherwise we ask for a stream and unpack it as it comes.
        let layout = r.extra_ref().and_then(|e| e.layout.as_ref());
        let vectored = match nseg {
            RTS_STREAM => false,
            0 => layout.is_none_or(|l| l.avg_segment() >= iov_min),
            _ => true,
        };
        if shm.cma_enabled() && vectored {
            let traced = crate::core::diag::trace::begin();
            let ok = vectored_read(shm, r, src_local, addr, n, nseg).is_ok();
            if let Some(start) = traced {
                crate::core::diag::trace::copy(start, env.src, n);
            }
            r.status = Status {
                source: env.src,
                tag: env.tag,
                error: if !ok {
                    MPI_ERR_OTHER
                } else if total as usize > r.cap {
                    MPI_ERR_TRUNCATE
                } else {
                    MPI_SUCCESS
                },
                bytes: n as u64,
                cancelled: false,
            };
            self.complete(rid);
            shm.send_or_queue(Outgoing::Reply {
                dest: src_local,
                kind: MsgKind::Fin,
                sreq,
                rreq: 0,
            });
            return;
        }
        let e = r.extra();
        e.stream_total = total;
        e.stream_got = 0;
        e.timed_bytes = 0;
        r.status = Status {
            source: env.src,
            tag: env.tag,
            error: MPI_SUCCESS,
            bytes: 0,
            cancelled: false,
        };
        if total == 0 {
            self.complete(rid);
        }
        shm.send_or_queue(Outgoing::Reply {
            dest: src_local,
            kind: MsgKind::Cts,
            sreq,
            rreq: token,
        });
    }

    /// One round of progress: flush queued sends, handle arrived cells.
    #[inline]
    pub fn progress(&mut self) -> MpiResult<bool> {
        let background = !self.background.is_empty() && self.poll_background();
        let net = if self.net.is_some() {
            self.progress_net()?
        } else {
            false
        };
        let Some(mut shm) = self.shm.take() else {
            return Ok(background | net);
        };
        let r = self.progress_with(&mut *shm);
        self.shm = Some(shm);
        let lanes = if self.shm_lanes.is_empty() {
            Ok(false)
        } else {
            self.progress_lanes()
        };
        Ok(r? | lanes? | background | net)
    }

    /// Progresses the network transport's lanes (which exist: the job spans nodes, or this
    /// process connected to another job).
    #[cold]
    pub(super) fn progress_net(&mut self) -> MpiResult<bool> {
        let mut did = false;
        for lane in 0..=self.net_lanes.len() {
            // Taken out while progressing (handlers reach `self`).
            let slot = match lane {
                0 => &mut self.net,
                i => &mut self.net_lanes[i - 1],
            };
            let Some(mut net) = slot.take() else {
                continue;
            };
            let r = self.progress_with(&mut *net);
            let failed = net.failure().map(str::to_string);
            match lane {
                0 => self.net = Some(net),
                i => self.net_lanes[i - 1] = Some(net),
            }
            if let Some(f) = failed {
                return fail(MPI_ERR_OTHER, format!("network transport: {f}"));
            }
            did |= r?;
        }
        Ok(did)
    }

    /// Lane `lane` of the network transport (which exists: the job spans nodes).
    #[inline]
    pub(super) fn net_lane(&mut self, lane: usize) -> &mut NetEngine {
        match lane {
            0 => self.net.as_deref_mut(),
            i => self.net_lanes.get_mut(i - 1).and_then(|n| n.as_deref_mut()),
        }
        .expect("a job spanning nodes has its network transport's lanes")
    }

    /// Lane `lane` of the node transport (which exists: this process has node peers).
    #[inline(always)]
    pub(super) fn lane(&mut self, lane: usize) -> &mut ShmEngine {
        lane_in(&mut self.shm, &mut self.shm_lanes, lane)
    }

    /// Progresses the node transport's lanes other than lane 0.
    pub fn progress_lanes(&mut self) -> MpiResult<bool> {
        let mut did = false;
        for i in 0..self.shm_lanes.len() {
            // Taken out while progressing (handlers reach `self`), as lane 0 is.
            let Some(mut lane) = self.shm_lanes[i].take() else {
                continue;
            };
            let r = self.progress_with(&mut *lane);
            self.shm_lanes[i] = Some(lane);
            did |= r?;
        }
        Ok(did)
    }

    /// [`Runtime::progress`] with the transport already taken out of `self`.
    pub fn progress_with<T: Transport>(&mut self, shm: &mut T) -> MpiResult<bool> {
        let mut did = false;
        if !shm.idle() {
            did |= shm.flush(&mut self.completions);
            while let Some(t) = self.completions.pop() {
                self.complete_token(t);
            }
        }
        for _ in 0..POLL_BATCH {
            let Some(m) = shm.poll() else { break };
            did = true;
            self.handle(shm, m);
        }
        if shm.cma_enabled() && !self.copies.is_empty() {
            // Stealable copies are node-transport reads (CMA); their `Fin` goes back there.
            did |= self.progress_copies(shm);
        }
        Ok(did)
    }

    pub(super) fn handle<T: Transport>(&mut self, shm: &mut T, m: Incoming) {
        if crate::core::diag::stats_on() {
            self.count_received::<T>(&m);
        }
        match m.kind {
            MsgKind::Eager | MsgKind::EagerSync => {
                let ack = (m.kind == MsgKind::EagerSync).then_some((m.src_local, m.sreq));
                if let Some(p) = self
                    .matchers
                    .of_msg(m.env.ctx, m.env.src, m.env.tag)
                    .take_posted(&m.env)
                {
                    let data = shm.payload(&m);
                    // Copy straight from the cell into the user buffer.
                    let r = self.reqs.get_mut(p.req).expect("live receive request");
                    let n = data.len().min(r.cap);
                    if r.noncontig() {
                        deliver_layout(r, 0, &data[..n]);
                    } else {
                        // SAFETY: receive buffer holds `cap` ≥ n bytes; the cell is ours.
                        unsafe { copy_bytes(data.as_ptr(), r.buf, n) };
                    }
                    r.status = Status {
                        source: m.env.src,
                        tag: m.env.tag,
                        error: if m.len > r.cap {
                            MPI_ERR_TRUNCATE
                        } else {
                            MPI_SUCCESS
                        },
                        bytes: n as u64,
                        cancelled: false,
                    };
                    shm.release(m.cell);
                    self.complete(p.req);
                    if let Some((dest, sreq)) = ack {
                        shm.send_or_queue(Outgoing::Reply {
                            dest,
                            kind: MsgKind::Ack,
                            sreq,
                            rreq: 0,
                        });
                    }
                } else {
                    let data = shm.payload(&m).to_vec();
                    shm.release(m.cell);
                    self.matchers
                        .of_msg(m.env.ctx, m.env.src, m.env.tag)
                        .unexpected
                        .push_back(Unexpected {
                            env: m.env,
                            payload: Payload::Eager { data, ack },
                        });
                }
            }
            MsgKind::Rts => {
                shm.release(m.cell);
                if let Some(p) = self
                    .matchers
                    .of_msg(m.env.ctx, m.env.src, m.env.tag)
                    .take_posted(&m.env)
                {
                    self.recv_rendezvous(
                        shm,
                        p.req,
                        m.env,
                        m.src_local,
                        m.sreq,
                        m.addr,
                        m.total,
                        m.rreq,
                    );
                } else {
                    let payload = Payload::Rendezvous {
                        src_local: m.src_local,
                        sreq: m.sreq,
                        addr: m.addr,
                        total: m.total,
                        nseg: m.rreq,
                    };
                    self.matchers
                        .of_msg(m.env.ctx, m.env.src, m.env.tag)
                        .unexpected
                        .push_back(Unexpected {
                            env: m.env,
                            payload,
                        });
                }
            }
            MsgKind::Ack | MsgKind::Fin => {
                shm.release(m.cell);
                self.complete_token(m.sreq);
            }
            MsgKind::Cts => {
                shm.release(m.cell);
                self.start_stream_for(shm, m.src_local, m.sreq, m.rreq);
            }
            MsgKind::Split => {
                shm.release(m.cell);
                // We are the sender: write our tail of the message into the receiver's buffer.
                let mut ok = false;
                if let Some(rid) = self.reqs.decode(m.sreq as usize) {
                    let r = self.reqs.get(rid).unwrap();
                    let n = m.total as usize;
                    let head = split_point(n);
                    if n <= r.cap {
                        // SAFETY: [head, n) lies inside our send buffer of `cap` bytes, which
                        // stays valid until the receiver's Fin completes the send.
                        ok = unsafe {
                            shm.cma_write(
                                m.src_local,
                                r.buf.add(head),
                                m.addr + head as u64,
                                n - head,
                            )
                        }
                        .is_ok();
                    }
                }
                // A failed write is reported by the SPLIT_FAILED bit of the receiver's token
                // (tokens keep their kind tag in the low 12 bits, so the bit is free).
                let rreq = if ok { m.rreq } else { m.rreq | SPLIT_FAILED };
                shm.send_or_queue(Outgoing::Reply {
                    dest: m.src_local,
                    kind: MsgKind::SplitDone,
                    sreq: m.sreq,
                    rreq,
                });
            }
            MsgKind::SplitDone => {
                shm.release(m.cell);
                if let Some(rid) = self.reqs.decode((m.rreq & !SPLIT_FAILED) as usize) {
                    if m.rreq & SPLIT_FAILED != 0 {
                        // The sender could not write its part: read it ourselves.
                        let r = self.reqs.get_mut(rid).unwrap();
                        let n = r.status.bytes as usize;
                        let head = split_point(n);
                        let e = r.extra_ref().unwrap();
                        let (saddr, src) = (e.stream_total, e.stream_got as u32);
                        // SAFETY: [head, n) lies inside the receive buffer of `cap` ≥ n bytes.
                        if unsafe {
                            shm.cma_read(src, saddr + head as u64, r.buf.add(head), n - head)
                        }
                        .is_err()
                        {
                            r.status.error = MPI_ERR_OTHER;
                        }
                    }
                    self.finish_timed_copy(rid);
                    self.complete(rid);
                }
                shm.send_or_queue(Outgoing::Reply {
                    dest: m.src_local,
                    kind: MsgKind::Fin,
                    sreq: m.sreq,
                    rreq: 0,
                });
            }
            MsgKind::Data => {
                let data = shm.payload(&m);
                if let Some(rid) = self.reqs.decode(m.rreq as usize) {
                    let r = self.reqs.get_mut(rid).unwrap();
                    let off = m.addr as usize;
                    if off < r.cap {
                        let n = data.len().min(r.cap - off);
                        if r.noncontig() {
                            deliver_layout(r, off, &data[..n]);
                        } else if !std::ptr::eq(data.as_ptr(), r.buf.wrapping_add(off)) {
                            // (A transport that received straight into the buffer hands out
                            // the buffer itself: nothing to copy.)
                            // SAFETY: off + n ≤ cap, inside the receive buffer.
                            unsafe {
                                std::ptr::copy_nonoverlapping(data.as_ptr(), r.buf.add(off), n)
                            };
                        }
                    }
                    let e = r.extra();
                    e.stream_got += data.len() as u64;
                    if e.stream_got >= e.stream_total {
                        let total = e.stream_total;
                        r.status.bytes = total.min(r.cap as u64);
                        if total > r.cap as u64 {
                            r.status.error = MPI_ERR_TRUNCATE;
                        }
                        shm.release(m.cell);
                        self.finish_timed_copy(rid);
                        self.complete(rid);
                        return;
                    }
                }
                shm.release(m.cell);
            }
        }
    }

    /// Counts a message that arrived through transport `T` in its VCI's statistics.
    #[cold]
    #[inline(never)]
    pub(super) fn count_received<T: Transport>(&self, m: &Incoming) {
        let eager = match m.kind {
            MsgKind::Eager | MsgKind::EagerSync => true,
            MsgKind::Rts => false,
            _ => return,
        };
        let v = self.vcis.vci_of_msg(m.env.ctx, m.env.src, m.env.tag);
        stats::received(v, Proto::of(T::NETWORK, eager), m.total as usize);
    }

    /// Tells `copy_choice` that the timed copy of receive `rid` (if it is one) is done.
    pub(super) fn finish_timed_copy(&mut self, rid: u32) {
        let Some(e) = self.reqs.get_mut(rid).and_then(|r| r.extra_mut()) else {
            return;
        };
        if e.timed_bytes != 0 {
            let n = e.timed_bytes as usize;
            e.timed_bytes = 0;
            self.copy_choice.finish(n, timestamp_ns());
        }
    }

    /// Answers a `Cts`: streams the send buffer of request `sreq` (recorded at the `Rts`).
    pub(super) fn start_stream_for<T: Transport>(
        &mut self,
        shm: &mut T,
        dest: u32,
        sreq: u64,
        rreq: u64,
    ) {
        let Some(rid) = self.reqs.decode(sreq as usize) else {
            return;
        };
        let r = self.reqs.get(rid).unwrap();
        let layout = r.extra_ref().and_then(|e| e.layout.clone());
        let gather = layout.map(|l| Box::new(l) as Box<dyn crate::transport::wire::Gather>);
        shm.start_stream(dest, sreq, rreq, r.buf as *const u8, r.cap, gather);
    }
}

/// A byte slice from a raw buffer (empty for zero length, whatever the pointer).
///
/// # Safety
/// When `len > 0`, `p` must be valid for `len` bytes of reads.
#[inline]
pub unsafe fn raw_slice<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: caller guarantee.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

/// Packs elements of `unit` spanning `span` bytes at `buf` (dropping the holes).
pub(super) fn pack(buf: *const u8, span: usize, unit: TypeInfo) -> Vec<u8> {
    let n = span / unit.extent.max(1);
    let mut out = vec![0u8; n * unit.size];
    // SAFETY: the user's send buffer of `span` bytes holds the `n` elements packed here.
    unsafe { pack_into(buf, unit, &mut out) };
    out
}

/// Spreads a packed receive into the user's buffer once it completed.
#[cold]
pub(super) fn unpack_on_completion(r: &mut crate::core::p2p::request::Request) {
    let bytes = r.status.bytes as usize;
    let e = r.extra_mut().unwrap();
    let Some((dst, unit)) = e.unpack.take() else {
        return;
    };
    let data = &e.scratch[..bytes.min(e.scratch.len())];
    // SAFETY: the user's buffer holds as many elements as the scratch buffer (sized from it).
    unsafe { unpack_from(dst, unit, data) };
    e.scratch = Vec::new();
}

/// Unpacks `data` as bytes `[off, off + data.len())` of noncontiguous receive `r`.
#[cold]
pub(super) fn deliver_layout(r: &mut crate::core::p2p::request::Request, off: usize, data: &[u8]) {
    let base = r.buf as usize;
    let l = r
        .extra_ref()
        .and_then(|e| e.layout.as_ref())
        .expect("noncontiguous receive has a layout");
    // SAFETY: the receive buffer is a valid buffer of this layout, and `off + len` is within
    // its packed capacity (callers cut at `cap`).
    unsafe { l.unpack(base, off, data) };
}

/// Copies `n` bytes of a rendezvous message from local rank `src` into receive `r`: the
/// sender's data is one block at `addr` (`nseg` 0) or `nseg` segments listed at `addr`; the
/// receiver's is its buffer or its layout's segments. One `process_vm_readv` per batch of up
/// to `IOV_MAX` segments on either side.
pub(super) fn vectored_read<T: Transport>(
    shm: &T,
    r: &crate::core::p2p::request::Request,
    src: u32,
    addr: u64,
    n: usize,
    nseg: u64,
) -> std::io::Result<()> {
    use crate::platform::cma::IOV_MAX;
    let remote: Vec<(usize, usize)> = if nseg == 0 {
        vec![(addr as usize, n)]
    } else {
        let mut list = vec![[0u64; 2]; nseg as usize];
        // SAFETY: `list` holds nseg * 16 writable bytes.
        unsafe { shm.cma_read(src, addr, list.as_mut_ptr().cast(), nseg as usize * 16)? };
        list.iter()
            .map(|s| (s[0] as usize, s[1] as usize))
            .collect()
    };
    let layout = r.extra_ref().and_then(|e| e.layout.as_ref());
    let (mut ri, mut roff) = (0usize, 0usize);
    let mut done = 0usize;
    while done < n {
        let local = match (r.noncontig(), layout) {
            (true, Some(l)) => l.segments(r.buf as usize, done, n, IOV_MAX).iov,
            _ => vec![(r.buf as usize + done, n - done)],
        };
        let mut rem = Vec::with_capacity(IOV_MAX.min(remote.len() - ri));
        let mut want = n - done;
        let (mut j, mut o) = (ri, roff);
        while want > 0 && j < remote.len() && rem.len() < IOV_MAX {
            let take = (remote[j].1 - o).min(want);
            rem.push((remote[j].0 + o, take));
            want -= take;
            o += take;
            if o == remote[j].1 {
                j += 1;
                o = 0;
            }
        }
        // SAFETY: the local segments lie in the receive buffer (its layout's segments within
        // the packed capacity, or `[buf + done, buf + n)`).
        let got = unsafe { shm.cma_readv(src, &local, &rem)? };
        if got == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "vectored copy made no progress",
            ));
        }
        done += got;
        // Advance the remote cursor by `got` bytes.
        let mut adv = got;
        while adv > 0 && ri < remote.len() {
            let left = remote[ri].1 - roff;
            if adv >= left {
                adv -= left;
                ri += 1;
                roff = 0;
            } else {
                roff += adv;
                adv = 0;
            }
        }
    }
    Ok(())
}

/// Bit set in a `SplitDone`'s receiver token when the sender could not write its part.
pub(super) const SPLIT_FAILED: u64 = 0x800;

/// Where a split rendezvous of `n` bytes divides: the receiver reads `[0, split)`, the sender
/// writes `[split, n)` (page aligned, so the two copies touch different pages).
#[inline]
pub fn split_point(n: usize) -> usize {
    (n / 2) & !4095
}

/// Packs the data of elements of predefined `unit` at `buf` into `out` (whose length, a
/// multiple of `unit.size` or shorter for a partial element, says how much).
///
/// # Safety
/// `buf` must hold the elements whose data `out` receives.
pub unsafe fn pack_into(buf: *const u8, unit: TypeInfo, out: &mut [u8]) {
    let (head, tail_at) = (unit.head as usize, unit.tail_at as usize);
    for (i, chunk) in out.chunks_mut(unit.size.max(1)).enumerate() {
        let h = chunk.len().min(head);
        // SAFETY: the caller's buffer holds the elements whose data `out` receives; both
        // blocks lie within element i's extent.
        unsafe {
            let e = buf.add(i * unit.extent);
            std::ptr::copy_nonoverlapping(e, chunk.as_mut_ptr(), h);
            std::ptr::copy_nonoverlapping(
                e.add(tail_at),
                chunk.as_mut_ptr().add(h),
                chunk.len() - h,
            );
        }
    }
}

/// Spreads packed `data` into elements of predefined `unit` at `dst` (the inverse of
/// [`pack_into`]).
///
/// # Safety
/// `dst` must hold as many elements as `data` has data for.
pub unsafe fn unpack_from(dst: *mut u8, unit: TypeInfo, data: &[u8]) {
    let (head, tail_at) = (unit.head as usize, unit.tail_at as usize);
    for (i, chunk) in data.chunks(unit.size.max(1)).enumerate() {
        let h = chunk.len().min(head);
        // SAFETY: the caller's buffer holds as many elements as `data` has data for; both
        // blocks lie within element i's extent.
        unsafe {
            let el = dst.add(i * unit.extent);
            std::ptr::copy_nonoverlapping(chunk.as_ptr(), el, h);
            std::ptr::copy_nonoverlapping(chunk.as_ptr().add(h), el.add(tail_at), chunk.len() - h);
        }
    }
}

/// Lane `lane` of a node transport given as the runtime's two fields (so that other fields
/// stay borrowable).
#[inline(always)]
pub(super) fn lane_in<'a>(
    shm: &'a mut Option<EngineBox>,
    lanes: &'a mut [Option<EngineBox>],
    lane: usize,
) -> &'a mut ShmEngine {
    match lane {
        0 => shm.as_mut(),
        l => lanes[l - 1].as_mut(),
    }
    .expect("node transport lane present (not being progressed)")
}
