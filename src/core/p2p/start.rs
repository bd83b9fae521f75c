//! Starting and completing operations: requests, the send protocols (self, eager, rendezvous,
//! buffered, derived layouts), receives, and their completion.

use super::*;

impl Runtime {
    /// Allocates a request.
    #[inline(always)]
    pub fn new_request(&mut self, kind: ReqKind, comm: u32) -> MpiResult<u32> {
        let v = match self.comms.get(comm) {
            Some(c) => self.vcis.vci_of_ctx(c.ctx),
            None => 0,
        };
        match self.reqs.insert(v, Request::new(kind, comm)) {
            Some(i) => Ok(i),
            None => fail(MPI_ERR_INTERN, "too many outstanding requests"),
        }
    }

    /// Marks request `rid` complete, releasing it when nobody will wait for it.
    #[inline(always)]
    pub fn complete(&mut self, rid: u32) {
        let Some(r) = self.reqs.get_mut(rid) else {
            return;
        };
        r.set_done(true);
        if r.extra_ref().is_some() {
            unpack_on_completion(r);
        }
        if r.user_freed() || r.internal() {
            let (parent, kind, status) = (r.parent, r.kind, r.status);
            if r.internal() {
                self.bsend.release(rid);
            }
            self.reqs.free(rid);
            if parent != NO_PARENT {
                self.part_done(parent, kind, status);
            }
        }
    }

    /// A part of compound request `parent` completed; the receive part gives the status.
    #[cold]
    pub(super) fn part_done(&mut self, parent: u32, kind: ReqKind, status: Status) {
        let Some(p) = self.reqs.get_mut(parent) else {
            return;
        };
        if p.extra_ref().is_some_and(|e| e.part.is_some()) {
            // A segment of a partitioned request.
            return crate::core::p2p::part::segment_done(self, parent, status);
        }
        if kind == ReqKind::Recv {
            p.status = status;
        }
        let e = p.extra();
        e.parts -= 1;
        if e.parts == 0 {
            e.scratch = Vec::new();
            self.complete(parent);
        }
    }

    /// Starts a send and a receive as the two parts of compound request `parent`
    /// (`MPI_Isendrecv`): it completes when both have, with the receive's status.
    #[inline(always)]
    pub fn start_sendrecv(&mut self, parent: u32, s: SendArgs, r: RecvArgs) -> MpiResult<()> {
        self.reqs.get_mut(parent).unwrap().extra().parts = 2;
        let rr = self.new_request(ReqKind::Recv, r.comm)?;
        let sr = self.new_request(ReqKind::Send, s.comm)?;
        for id in [rr, sr] {
            let q = self.reqs.get_mut(id).unwrap();
            q.set_internal(true);
            q.parent = parent;
        }
        self.start_recv(rr, r)?;
        self.start_send(sr, s)
    }

    pub(super) fn complete_token(&mut self, token: u64) {
        if let Some(rid) = self.reqs.decode(token as usize) {
            self.complete(rid);
        }
    }

    /// Starts a send on request `rid` (already allocated).
    #[inline(always)]
    pub fn start_send(&mut self, rid: u32, mut a: SendArgs) -> MpiResult<()> {
        if a.dest == MPI_PROC_NULL {
            self.complete(rid);
            return Ok(());
        }
        if a.layout.is_some() {
            return self.start_send_layout(rid, a);
        }
        if a.unit.size != a.unit.extent {
            // A datatype with holes: the message carries only the data.
            let packed = pack(a.buf, a.bytes, a.unit);
            let e = self.reqs.get_mut(rid).unwrap().extra();
            e.scratch = packed;
            a.buf = e.scratch.as_ptr();
            a.bytes = e.scratch.len();
            a.unit.extent = a.unit.size;
        }
        if a.mode == SendMode::Buffered {
            return self.start_bsend(rid, a);
        }
        let c = self.comms.get(a.comm).expect("validated communicator");
        let world = c.world_rank(a.dest);
        let env = Envelope {
            ctx: send_wire_ctx(c, a.dest, a.tag),
            src: c.rank,
            tag: a.tag,
        };
        if world as i32 == self.world_rank {
            return self.send_to_self(rid, env, a);
        }
        let dest = self.local_of_world[world as usize];
        let token = self.reqs.token(rid);
        let eager = if dest == u32::MAX {
            a.bytes <= self.net_eager_max
        } else {
            a.bytes <= self.eager_max
        };
        let kind = match (eager, a.mode) {
            (true, SendMode::Sync) => MsgKind::EagerSync,
            (true, _) => MsgKind::Eager,
            (false, _) => MsgKind::Rts,
        };
        if crate::core::diag::stats_on() {
            stats::sent(
                vci_of_rid(rid),
                Proto::of(dest == u32::MAX, kind != MsgKind::Rts),
                a.bytes,
            );
        }
        if kind == MsgKind::Rts {
            // Remember the buffer in case the receiver asks for a streamed copy (no CMA).
            let r = self.reqs.get_mut(rid).unwrap();
            r.buf = a.buf as *mut u8;
            r.cap = a.bytes;
        }
        let msg = |dest| Outgoing::Msg {
            dest,
            kind,
            env,
            sreq: token,
            buf: a.buf,
            bytes: a.bytes,
        };
        let sent = if dest == u32::MAX {
            // Another node's rank: through the network transport, on the lane of the
            // context for this job's ranks (other jobs' processes are met on lane 0).
            let lane = if (world as i32) < self.world_size {
                NET_LANES.lane_of(env.ctx)
            } else {
                0
            };
            self.net_lane(lane).send_or_queue(msg(NET_PEER | world))
        } else {
            self.lane(engine_ref::lane_of(env.ctx))
                .send_or_queue(msg(dest))
        };
        if sent && kind == MsgKind::Eager {
            self.complete(rid);
        }
        Ok(())
    }

    /// Starts a send whose buffer is laid out by a derived datatype: small messages, buffered
    /// ones and those to oneself are packed into the request; large ones to a node peer are
    /// announced by their segment list (the receiver copies them with one vectored CMA read)
    /// or, for layouts of small pieces and without CMA, streamed packed through cells.
    #[cold]
    pub(super) fn start_send_layout(&mut self, rid: u32, mut a: SendArgs) -> MpiResult<()> {
        let l = a.layout.take().expect("layout send");
        let bytes = l.bytes();
        let world = {
            let c = self.comms.get(a.comm).expect("validated communicator");
            c.world_rank(a.dest)
        };
        // Only node peers read a layout's segments; network peers get it packed.
        let to_peer = world as i32 != self.world_rank
            && self.shm.is_some()
            && self.local_of_world[world as usize] != u32::MAX;
        if !to_peer || a.mode == SendMode::Buffered || bytes <= self.eager_max {
            let mut packed = vec![0u8; bytes];
            // SAFETY: `buf` is the base of a valid send of this layout.
            unsafe { l.pack(a.buf as usize, 0, &mut packed) };
            let e = self.reqs.get_mut(rid).unwrap().extra();
            e.scratch = packed;
            a.buf = e.scratch.as_ptr();
            a.bytes = bytes;
            a.unit = TypeInfo {
                size: 1,
                extent: 1,
                head: 1,
                tail_at: 1,
                basic: 1,
            };
            return self.start_send(rid, a);
        }
        let c = self.comms.get(a.comm).expect("validated communicator");
        let env = Envelope {
            ctx: send_wire_ctx(c, a.dest, a.tag),
            src: c.rank,
            tag: a.tag,
        };
        let dest = self.local_of_world[world as usize];
        let token = self.reqs.token(rid);
        let iov_min = self.dt_iov_min;
        let shm = lane_in(
            &mut self.shm,
            &mut self.shm_lanes,
            engine_ref::lane_of(env.ctx),
        );
        let vectored = shm.cma_enabled() && l.avg_segment() >= iov_min;
        let r = self.reqs.get_mut(rid).unwrap();
        r.buf = a.buf as *mut u8;
        r.cap = bytes;
        let e = r.extra();
        let (addr, nseg) = if vectored {
            let segs = l.segments(a.buf as usize, 0, bytes, usize::MAX);
            e.iov = segs
                .iov
                .iter()
                .map(|&(p, n)| [p as u64, n as u64])
                .collect();
            (e.iov.as_ptr() as u64, e.iov.len() as u64)
        } else {
            (0, RTS_STREAM)
        };
        // Kept for a streamed copy (no CMA, or asked for by `nseg`).
        e.layout = Some(l);
        if crate::core::diag::stats_on() {
            stats::sent(vci_of_rid(rid), Proto::ShmRendezvous, bytes);
        }
        shm.send_or_queue(Outgoing::RtsV {
            dest,
            env,
            sreq: token,
            addr,
            total: bytes as u64,
            nseg,
        });
        Ok(())
    }

    #[inline(always)]
    pub(super) fn send_to_self(&mut self, rid: u32, env: Envelope, a: SendArgs) -> MpiResult<()> {
        if crate::core::diag::stats_on() {
            stats::sent(vci_of_rid(rid), Proto::SelfCopy, a.bytes);
            stats::received(vci_of_rid(rid), Proto::SelfCopy, a.bytes);
        }
        if let Some(p) = self
            .matchers
            .of_msg(env.ctx, env.src, env.tag)
            .take_posted(&env)
        {
            // SAFETY: the user buffer holds `bytes` bytes for the life of the send.
            let data = unsafe { raw_slice(a.buf, a.bytes) };
            self.finish_recv(p.req, env, data, a.bytes as u64);
            self.complete(rid);
            return Ok(());
        }
        let payload = if a.mode == SendMode::Sync || a.bytes > self.eager_max {
            Payload::SelfPending {
                sreq: rid,
                addr: a.buf,
                total: a.bytes as u64,
            }
        } else {
            // SAFETY: as above.
            let data = unsafe { raw_slice(a.buf, a.bytes) }.to_vec();
            self.complete(rid);
            Payload::Eager { data, ack: None }
        };
        self.matchers
            .of_msg(env.ctx, env.src, env.tag)
            .unexpected
            .push_back(Unexpected { env, payload });
        Ok(())
    }

    pub(super) fn start_bsend(&mut self, rid: u32, a: SendArgs) -> MpiResult<()> {
        let need = a.bytes + crate::core::p2p::bsend::OVERHEAD;
        // Completed buffered sends release their space as they complete; make progress first
        // so the space of finished ones is free.
        let _ = self.progress()?;
        let session = self.comms.get(a.comm).and_then(|c| c.session);
        let scope = self.bsend.scope_for(a.comm, session);
        let b = self.bsend.buffer(scope);
        let (off, copy) = match b.space {
            Space::Automatic => (0, None),
            space => match b.alloc(need) {
                Some(off) => {
                    let Space::User { base, .. } = space else {
                        unreachable!("alloc succeeds in user buffers only")
                    };
                    (off, Some((base + off) as *mut u8))
                }
                None => return fail(MPI_ERR_BUFFER, bsend_no_room(b, a.bytes)),
            },
        };
        let inner = self.new_request(ReqKind::Send, a.comm)?;
        let r = self.reqs.get_mut(inner).unwrap();
        r.set_internal(true);
        let copy = match copy {
            Some(copy) => {
                if a.bytes > 0 {
                    // SAFETY: [off, off+need) lies inside the attached buffer and is not in
                    // use; the source is the user's send buffer of `bytes` bytes.
                    unsafe { std::ptr::copy_nonoverlapping(a.buf, copy, a.bytes) };
                }
                copy as *const u8
            }
            None => {
                // `MPI_BUFFER_AUTOMATIC`: the internal request owns the copy until it is
                // freed, when the send completed.
                let e = r.extra();
                // SAFETY: the send buffer holds `bytes` bytes (checked at validation).
                e.scratch = unsafe { raw_slice(a.buf, a.bytes) }.to_vec();
                e.scratch.as_ptr()
            }
        };
        self.bsend.record(scope, off, need, inner);
        // The user's request is complete: the data is in the buffer.
        self.complete(rid);
        self.start_send(
            inner,
            SendArgs {
                buf: copy,
                mode: SendMode::Standard,
                ..a
            },
        )
    }

    /// Starts a receive on request `rid` (already allocated).
    #[inline(always)]
    pub fn start_recv(&mut self, rid: u32, a: RecvArgs) -> MpiResult<()> {
        self.prepare_recv(rid, a.buf, a.cap, a.unit, a.layout);
        if a.src == MPI_PROC_NULL {
            self.reqs.get_mut(rid).unwrap().status = Status::PROC_NULL;
            self.complete(rid);
            return Ok(());
        }
        let ctx = wire_ctx(
            self.comms.get(a.comm).expect("validated communicator"),
            a.tag,
        );
        let pattern = Pattern {
            ctx,
            src: a.src,
            tag: a.tag,
        };
        match self
            .matchers
            .of_msg(pattern.ctx, pattern.src, pattern.tag)
            .take_unexpected(&pattern)
        {
            Some(u) => self.consume(rid, u),
            None => {
                self.matchers
                    .of_msg(pattern.ctx, pattern.src, pattern.tag)
                    .posted
                    .push_back(Posted { pattern, req: rid });
                Ok(())
            }
        }
    }

    /// Points receive request `rid` at its buffer (`span` bytes of elements laid out as
    /// `unit`, or a derived layout of `span` packed bytes); a predefined type with holes
    /// receives into a packed scratch buffer first, a derived layout is unpacked into as the
    /// data arrives.
    #[inline(always)]
    pub fn prepare_recv(
        &mut self,
        rid: u32,
        buf: *mut u8,
        span: usize,
        unit: TypeInfo,
        layout: Option<Layout>,
    ) {
        let r = self.reqs.get_mut(rid).unwrap();
        if let Some(l) = layout {
            r.buf = buf;
            r.cap = span;
            r.set_noncontig(true);
            r.extra().layout = Some(l);
            return;
        }
        if unit.size == unit.extent {
            r.buf = buf;
            r.cap = span;
            return;
        }
        let packed_cap = span / unit.extent.max(1) * unit.size;
        let e = r.extra();
        e.scratch = vec![0u8; packed_cap];
        e.unpack = Some((buf, unit));
        r.buf = e.scratch.as_mut_ptr();
        r.cap = packed_cap;
    }

    /// Delivers an unexpected (or probed) message to receive request `rid`.
    pub fn consume(&mut self, rid: u32, u: Unexpected) -> MpiResult<()> {
        match u.payload {
            Payload::Eager { data, ack } => {
                let n = data.len() as u64;
                self.finish_recv(rid, u.env, &data, n);
                if let Some((dest, sreq)) = ack {
                    self.reply(dest, MsgKind::Ack, sreq, 0);
                }
            }
            Payload::SelfPending { sreq, addr, total } => {
                // SAFETY: the pending self-send keeps its buffer valid until its request completes.
                let data = unsafe { raw_slice(addr, total as usize) };
                self.finish_recv(rid, u.env, data, total);
                self.complete(sreq);
            }
            Payload::Rendezvous {
                src_local,
                sreq,
                addr,
                total,
                nseg,
            } => {
                if src_local & NET_PEER != 0 {
                    let mut net = self.net.take().expect("a network peer's rendezvous");
                    self.recv_rendezvous(&mut *net, rid, u.env, src_local, sreq, addr, total, nseg);
                    self.net = Some(net);
                } else {
                    let mut shm = self
                        .shm
                        .take()
                        .expect("rendezvous implies the node transport");
                    self.recv_rendezvous(&mut *shm, rid, u.env, src_local, sreq, addr, total, nseg);
                    self.shm = Some(shm);
                }
            }
        }
        Ok(())
    }

    /// Copies an arrived message into receive request `rid` and completes it (truncating, with
    /// `MPI_ERR_TRUNCATE`, when it does not fit).
    #[inline(always)]
    pub(super) fn finish_recv(&mut self, rid: u32, env: Envelope, data: &[u8], total: u64) {
        let r = self.reqs.get_mut(rid).expect("live receive request");
        let n = data.len().min(r.cap);
        if r.noncontig() {
            deliver_layout(r, 0, &data[..n]);
        } else {
            // SAFETY: the receive buffer holds `cap` ≥ n bytes; the regions are distinct (MPI
            // forbids overlapping send and receive buffers).
            unsafe { copy_bytes(data.as_ptr(), r.buf, n) };
        }
        r.status = Status {
            source: env.src,
            tag: env.tag,
            error: if total > r.cap as u64 {
                MPI_ERR_TRUNCATE
            } else {
                MPI_SUCCESS
            },
            bytes: n as u64,
            cancelled: false,
        };
        self.complete(rid);
    }

    pub(super) fn reply(&mut self, dest: u32, kind: MsgKind, sreq: u64, rreq: u64) {
        let o = Outgoing::Reply {
            dest,
            kind,
            sreq,
            rreq,
        };
        if dest & NET_PEER != 0 {
            if let Some(net) = self.net.as_mut() {
                net.send_or_queue(o);
            }
        } else if let Some(shm) = self.shm.as_mut() {
            shm.send_or_queue(o);
        }
    }
}
