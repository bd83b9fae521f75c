//! Opening a rank's endpoints and connecting the job (`NetEngine::setup`, `open_late`),
//! peers added later, and the hello/answer handshake of dynamic connections.

use super::*;

impl NetEngine {
    /// Opens this rank's endpoints (one per lane, `wanted` of them), publishes their addresses
    /// and connects the job's: collective over all ranks (it uses a bootstrap barrier). The
    /// job runs as many lanes as the rank that wants the fewest (every rank reads every
    /// rank's list), so the result has that many engines, lane 0 first; the other endpoints
    /// close.
    pub fn setup(
        boot: &mut dyn Bootstrap,
        me: u32,
        size: u32,
        job: u32,
        wanted: usize,
    ) -> MpiResult<Vec<NetEngine>> {
        let err = |what: String| MpiError::new(MPI_ERR_OTHER, format!("network transport: {what}"));
        let addr = config::text(Knob::OfiAddr);
        widen_rxm_eager_limit();
        let mut eps = Vec::with_capacity(wanted.max(1));
        let mut mine = Vec::with_capacity(wanted.max(1));
        for _ in 0..wanted.max(1) {
            let ep = Endpoint::open(
                provider_wanted().as_deref(),
                (!addr.is_empty()).then_some(addr.as_str()),
            )
            .map_err(err)?;
            mine.push(hex(&ep.name().map_err(err)?));
            eps.push(ep);
        }
        let io = |e: std::io::Error| err(format!("address exchange: {e}"));
        boot.put(&format!("ofi-{me}"), &mine.join(","))
            .map_err(io)?;
        boot.barrier().map_err(io)?;
        // names[r][lane]: rank r's address on each of its lanes.
        let mut names: Vec<Vec<Vec<u8>>> = Vec::with_capacity(size as usize);
        for r in 0..size {
            let v = boot.get(&format!("ofi-{r}")).map_err(io)?;
            let lanes: Option<Vec<Vec<u8>>> =
                v.as_deref().and_then(|v| v.split(',').map(unhex).collect());
            match lanes {
                Some(l) if !l.is_empty() => names.push(l),
                _ => {
                    return Err(err(format!(
                    "rank {r} published no network address (is it running hympi with the same provider?)"
                )))
                }
            }
        }
        let lanes = names.iter().map(Vec::len).min().unwrap_or(1).min(eps.len());
        eps.truncate(lanes);
        let mut engines = Vec::with_capacity(lanes);
        for (lane, ep) in eps.into_iter().enumerate() {
            let of_lane: Vec<Vec<u8>> = names.iter().map(|l| l[lane].clone()).collect();
            let addrs = ep.insert(&of_lane).map_err(err)?;
            let name = of_lane[me as usize].clone();
            engines.push(NetEngine::start(ep, me, job, name, addrs).map_err(err)?);
        }
        Ok(engines)
    }

    /// Opens the engine of world rank `me` of a job of `size` ranks (id `job`) on its own,
    /// knowing no peer yet: for a job on one node that connects to another job
    /// (`MPI_Comm_accept`, `MPI_Comm_connect`, `MPI_Comm_join`). Not collective.
    pub fn open_late(me: u32, size: u32, job: u32) -> MpiResult<NetEngine> {
        let err = |what: String| MpiError::new(MPI_ERR_OTHER, format!("network transport: {what}"));
        let addr = config::text(Knob::OfiAddr);
        widen_rxm_eager_limit();
        let ep = Endpoint::open(
            provider_wanted().as_deref(),
            (!addr.is_empty()).then_some(addr.as_str()),
        )
        .map_err(err)?;
        let name = ep.name().map_err(err)?;
        NetEngine::start(ep, me, job, name, vec![NO_ADDR; size as usize]).map_err(err)
    }

    /// The engine of world rank `me` on open endpoint `ep` (address `name`), given the
    /// libfabric address of every world rank.
    pub(super) fn start(
        ep: Endpoint,
        me: u32,
        job: u32,
        name: Vec<u8>,
        addrs: Vec<u64>,
    ) -> Result<NetEngine, String> {
        let provider = ep.provider();
        let max_msg = ep.max_msg().min(usize::MAX as u64) as usize;
        let inject_max = ep.inject_max().min(BUF as u64) as usize;
        let size = addrs.len();
        let slots = RX_SLOTS + TX_SLOTS;
        let mut e = NetEngine {
            ep,
            me,
            job,
            world: size as u32,
            name,
            addrs,
            foreign: HashMap::new(),
            hellos: Vec::new(),
            ports: Vec::new(),
            answers_out: Vec::new(),
            answers_in: Vec::new(),
            // Filled (not zeroed, which would leave the pages unmapped until first use), so
            // the buffers are resident from the start: no page faults on the message path.
            bufs: vec![!0u64; slots * BUF / 8].into_boxed_slice(),
            ctxs: vec![FiContext::default(); slots + DIRECT_SLOTS].into_boxed_slice(),
            tx_free: (RX_SLOTS as u32..slots as u32).rev().collect(),
            rx_unposted: (0..RX_SLOTS as u32).collect(),
            pending: VecDeque::new(),
            streams: Vec::new(),
            ready: VecDeque::new(),
            early: Vec::new(),
            send_seq: vec![0; size],
            recv_seq: vec![0; size],
            direct: (0..DIRECT_SLOTS).map(|_| None).collect(),
            direct_free: [
                (0..DIRECT_RECV_SLOTS).rev().collect(),
                (DIRECT_RECV_SLOTS..DIRECT_SLOTS as u32).rev().collect(),
            ],
            direct_pending: VecDeque::new(),
            posted_direct: Vec::new(),
            direct_wanted: Vec::new(),
            sends_done: Vec::new(),
            max_msg,
            inject_max,
            direct_min: match config::setting(Knob::OfiDirectMin) {
                config::Setting::Value(v) => v as usize,
                _ => usize::MAX,
            },
            failed: None,
            closing: false,
            provider,
        };
        e.post_receives();
        match e.failed.take() {
            Some(f) => Err(f),
            None => Ok(e),
        }
    }

    /// The libfabric provider in use.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// This endpoint's address (what other processes give [`NetEngine::add_peer`]).
    pub fn address(&self) -> &[u8] {
        &self.name
    }

    /// Process indices in use: the world's ranks and the other jobs' processes met so far.
    pub fn process_count(&self) -> u32 {
        self.addrs.len() as u32
    }

    /// The process index of world rank `rank` of job `job` at address `name`, registering
    /// it when it is new (a process of this job gets its world rank).
    pub fn add_peer(&mut self, job: u32, rank: u32, name: &[u8]) -> Result<u32, String> {
        let idx = if job == self.job {
            if rank >= self.world {
                return Err(format!(
                    "rank {rank} of this job, which has {} ranks",
                    self.world
                ));
            }
            if self.addrs[rank as usize] != NO_ADDR {
                return Ok(rank);
            }
            rank
        } else if let Some(&i) = self.foreign.get(&(job, rank)) {
            return Ok(i);
        } else {
            self.addrs.len() as u32
        };
        let a = self.ep.insert(&[name.to_vec()])?[0];
        if idx == self.addrs.len() as u32 {
            self.addrs.push(a);
            self.send_seq.push(0);
            self.recv_seq.push(0);
            self.foreign.insert((job, rank), idx);
        } else {
            self.addrs[idx as usize] = a;
        }
        Ok(idx)
    }

    /// Sends a [`Hello`] to port `port` of process `dest` (registered): this process asks to
    /// connect, in connection `nonce`. False when no send buffer is free (try again).
    pub fn send_hello(&mut self, dest: u32, port: u32, nonce: i32) -> bool {
        let name = std::mem::take(&mut self.name);
        let h = Hdr {
            kind: HELLO_KIND,
            src: self.me,
            ctx: port,
            tag: nonce,
            len: name.len() as u32,
            ..Hdr::default()
        };
        let sent = self.emit(NET_PEER | dest, h, |out| out.copy_from_slice(&name));
        self.name = name;
        sent
    }

    /// Takes the oldest connection request to port `port`, if any.
    pub fn take_hello(&mut self, port: u32) -> Option<Hello> {
        self.reap();
        let i = self.hellos.iter().position(|h| h.port == port)?;
        Some(self.hellos.remove(i))
    }

    /// The answer of process `peer` to this process's `Hello` `nonce`, once it came: whether
    /// its port was open.
    pub fn take_answer(&mut self, peer: u32, nonce: i32) -> Option<bool> {
        self.reap();
        let i = self
            .answers_in
            .iter()
            .position(|&(p, n, _)| (p, n) == (peer, nonce))?;
        Some(self.answers_in.swap_remove(i).2)
    }

    /// Opens port `port`: `Hello`s to it are welcomed and kept for [`NetEngine::take_hello`].
    pub fn open_port(&mut self, port: u32) {
        self.ports.push(port);
    }

    /// Closes port `port`: requests to it not yet accepted are forgotten, later ones refused.
    pub fn close_port(&mut self, port: u32) {
        self.ports.retain(|&p| p != port);
        self.hellos.retain(|h| h.port != port);
    }

    /// Sends the answers to `Hello`s that could not go out when they were due.
    pub(super) fn send_answers(&mut self) {
        while let Some(&(dest, port, nonce, ok)) = self.answers_out.first() {
            let h = Hdr {
                kind: HELLO_KIND,
                src: self.me,
                ctx: port,
                tag: nonce,
                addr: if ok { HELLO_WELCOME } else { HELLO_REFUSED },
                ..Hdr::default()
            };
            if !self.emit(NET_PEER | dest, h, |_| {}) {
                return;
            }
            self.answers_out.remove(0);
        }
    }

    /// The first failure the provider reported, if any: the job cannot go on.
    #[inline]
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Marks the engine as finalizing (`true`: peers closing their connections is expected
    /// now) or as in use again (`false`: a session woke a quiesced runtime).
    pub fn set_closing(&mut self, closing: bool) {
        self.closing = closing;
    }
}
