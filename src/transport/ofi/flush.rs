//! Sending what is queued (`NetEngine::flush`) and reaping the completion queue: finished
//! sends, direct transfers and failed operations.

use super::*;

impl NetEngine {
    /// Sends queued items in order, then stream chunks; eager sends that went out and
    /// streams fully sent are reported in `done` (their requests are complete). Returns
    /// whether anything was sent.
    pub fn flush(&mut self, done: &mut Vec<u64>) -> bool {
        self.reap();
        if !self.answers_out.is_empty() {
            self.send_answers();
        }
        if !self.rx_unposted.is_empty() {
            self.post_receives();
        }
        if !self.direct_pending.is_empty() {
            self.post_direct_sends();
        }
        let mut any = !self.sends_done.is_empty();
        done.append(&mut self.sends_done);
        while let Some(o) = self.pending.pop_front() {
            if !self.try_emit(&o) {
                self.pending.push_front(o);
                break;
            }
            if let Outgoing::Msg {
                kind: MsgKind::Eager,
                sreq,
                ..
            } = o
            {
                done.push(sreq);
            }
            any = true;
        }
        let me = self.me;
        let mut i = 0;
        while i < self.streams.len() {
            loop {
                let s = &self.streams[i];
                if s.off >= s.total {
                    break;
                }
                let n = PAYLOAD_CAP.min(s.total - s.off);
                let h = Hdr {
                    kind: MsgKind::Data as u32,
                    src: me,
                    len: n as u32,
                    total: s.total as u64,
                    sreq: s.sreq,
                    rreq: s.rreq,
                    addr: s.off as u64,
                    ..Hdr::default()
                };
                let (dest, base, off, layout) = (s.dest, s.buf, s.off, s.layout.as_deref());
                // The closure borrows the stream's layout while `emit` borrows the engine:
                // take the layout out for the call.
                let layout_ptr = layout.map(|l| l as *const dyn Gather);
                let sent = self.emit(dest, h, |out| match layout_ptr {
                    // SAFETY: [off, off + n) lies in the active send's buffer (its layout's
                    // packed length is `total`); the layout outlives the call (it is owned
                    // by the stream, which is not touched meanwhile).
                    Some(l) => unsafe { (*l).pack(base as usize, off, out) },
                    // SAFETY: as above, for a contiguous buffer of `total` bytes.
                    None => unsafe {
                        std::ptr::copy_nonoverlapping(base.add(off), out.as_mut_ptr(), n)
                    },
                });
                if !sent {
                    break;
                }
                self.streams[i].off += n;
                any = true;
            }
            if self.streams[i].off >= self.streams[i].total {
                done.push(self.streams[i].sreq);
                self.streams.swap_remove(i);
            } else {
                i += 1;
            }
        }
        any
    }

    /// Reads the completion queue: arrived messages go to `ready` (in each sender's order),
    /// finished sends free their buffers.
    pub(super) fn reap(&mut self) {
        let mut cqes = [Cqe::default(); 32];
        loop {
            let (n, failed) = match self.ep.poll(&mut cqes) {
                Ok(r) => r,
                Err(e) => {
                    self.fail(e);
                    return;
                }
            };
            if n == 0 {
                return;
            }
            if let Some(msg) = failed {
                self.failed_op(&cqes[0], msg);
                continue;
            }
            for c in &cqes[..n] {
                let Some(slot) = self.slot_of(c) else {
                    self.fail("a completion for an unknown operation".into());
                    continue;
                };
                if (slot as usize) < RX_SLOTS {
                    self.arrived(slot, c.len as usize);
                } else if (slot as usize) < RX_SLOTS + TX_SLOTS {
                    self.tx_free.push(slot);
                } else {
                    self.direct_done(slot - (RX_SLOTS + TX_SLOTS) as u32, c.len as usize);
                }
            }
            if n < cqes.len() {
                return;
            }
        }
    }

    /// A failed operation: its buffer comes back; unless finalizing, the job cannot go on.
    #[cold]
    pub(super) fn failed_op(&mut self, c: &Cqe, msg: String) {
        match self.slot_of(c) {
            Some(slot) if (slot as usize) < RX_SLOTS => self.rx_unposted.push(slot),
            Some(slot) if (slot as usize) < RX_SLOTS + TX_SLOTS => self.tx_free.push(slot),
            Some(slot) => {
                let d = slot - (RX_SLOTS + TX_SLOTS) as u32;
                self.direct[d as usize] = None;
                self.free_direct(d);
            }
            None => {}
        }
        if !self.closing {
            if peer_gone(c.err) {
                // The peer's process or host is gone. Its launcher knows why (a rank killed,
                // a host lost) and ends the job with that report within a fraction of a
                // second; give it the chance, rather than ending the job first with a report
                // that only says a connection broke.
                std::thread::sleep(PEER_GONE_GRACE);
            }
            self.fail(format!(
                "a transfer failed: {} ({msg})",
                ffi::strerror(c.err)
            ));
        }
    }
}
