//! The job supervisor: starts the ranks, then one `poll(2)` loop serves PMI, relays output,
//! forwards signals and reaps ranks, killing the job when a rank fails.
//!
//! Failure rule: a rank that dies by a signal or exits non-zero before PMI `finalize`, exits 0
//! after PMI `init` without `finalize`, sends `abort`, or breaks the protocol ends the job: the
//! others get SIGTERM, and SIGKILL [`KILL_GRACE`] later. A rank exiting non-zero after
//! `finalize` is reported but kills nobody. The job's exit status is the first failure's
//! (128 + N for signal N; the abort code for an abort), else 0.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use hympi::platform::pmi_wire::{LineBuffer, Message};

use crate::args::Options;
use crate::binding;
use crate::launch::{self, JobSpec};
use crate::output::{self, Relay, Sink};
use crate::server::{Event, PmiServer};
use crate::signals::{self, SignalPipe};
use crate::status;

/// Time between SIGTERM and SIGKILL when the job is torn down.
pub const KILL_GRACE: Duration = Duration::from_millis(500);

/// How long output is still relayed once every rank has exited (descendants may hold the
/// pipes open forever).
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// Prints a launcher message on stderr.
macro_rules! report {
    ($($t:tt)*) => {{
        let msg = format!("hympiexec: {}\n", format_args!($($t)*));
        let _ = output::write(Sink::Stderr, msg.as_bytes());
    }};
}

mod front;

/// The launcher's side of one rank's PMI connection.
struct PmiConn {
    /// The socket of a rank of this host; `None` for a rank behind a proxy.
    file: Option<File>,
    lines: LineBuffer,
    /// Replies not yet written (the socket is non-blocking).
    out: Vec<u8>,
    /// Inside a multi-line `mcmd=` request (spawn), which is refused at `endcmd`.
    in_mcmd: bool,
}

/// One output stream of a rank.
struct OutStream {
    file: File,
    relay: Relay,
}

/// Everything the launcher knows about one rank.
struct Rank {
    /// The process of a rank of this host; `None` for a rank behind a proxy.
    child: Option<Child>,
    /// Its pid (0 until a proxy reports it).
    pid: i32,
    /// The proxy (host) that runs it, in a multi-host job.
    host: Option<usize>,
    pmi: Option<PmiConn>,
    outputs: [Option<OutStream>; 2],
    exited: Option<ExitStatus>,
    initialized: bool,
    finalized: bool,
}

/// What a poll entry refers to.
#[derive(Clone, Copy)]
enum Slot {
    Signals,
    Pmi(usize),
    Output(usize, usize),
    /// The listening socket proxies connect to.
    Listener,
    /// A proxy connection that has not said hello yet.
    Pending(usize),
    /// Proxy `p`'s connection.
    Proxy(usize),
    /// Output stream `s` of proxy `p`'s launcher command.
    ProxyOutput(usize, usize),
}

/// A running job.
struct Job {
    ranks: Vec<Rank>,
    server: PmiServer,
    /// The job's exit status once the first failure is known.
    result: Option<i32>,
    /// When the job is being torn down: the time SIGKILL is due.
    kill_at: Option<Instant>,
    sigkill_sent: bool,
    /// Signals received from outside (SIGINT, SIGTERM, ...).
    interrupts: u32,
    drain_until: Option<Instant>,
    /// The per-host proxies of a multi-host job (empty for a job on this host).
    proxies: Vec<front::Proxy>,
    /// Where proxies connect, in a multi-host job.
    front: Option<front::Front>,
}

impl Job {
    /// Sends `sig` to rank `r` if it has not been reaped (so its pid cannot have been reused):
    /// directly, or through its host's proxy.
    fn signal(&mut self, r: usize, sig: i32) {
        let rank = &self.ranks[r];
        if rank.exited.is_some() {
            return;
        }
        match rank.host {
            Some(p) => self.proxies[p].tell(&crate::wire::ToProxy::Signal { rank: r, sig }),
            // SAFETY: kill(2) has no memory effects; the pid is our unreaped child.
            None => unsafe {
                libc::kill(rank.pid, sig);
            },
        }
    }

    /// How reports name rank `r`: `rank 3 (pid 1234)`, plus `on host h2` in a multi-host job.
    fn who(&self, r: usize) -> String {
        let rank = &self.ranks[r];
        match rank.host {
            Some(p) => format!(
                "rank {r} (pid {} on host {})",
                rank.pid, self.proxies[p].name
            ),
            None => format!("rank {r} (pid {})", rank.pid),
        }
    }

    fn record(&mut self, code: i32) {
        if self.result.is_none() && code != 0 {
            self.result = Some(code);
        }
    }

    /// Starts tearing the job down: SIGTERM to every live rank but `spare`, SIGKILL later.
    fn tear_down(&mut self, spare: Option<usize>) {
        if self.kill_at.is_some() {
            return;
        }
        self.kill_at = Some(Instant::now() + KILL_GRACE);
        for r in 0..self.ranks.len() {
            if Some(r) != spare {
                self.signal(r, libc::SIGTERM);
            }
        }
    }

    fn kill_all(&mut self) {
        self.sigkill_sent = true;
        for r in 0..self.ranks.len() {
            self.signal(r, libc::SIGKILL);
        }
    }

    fn failing(&self) -> bool {
        self.kill_at.is_some() || self.interrupts > 0
    }

    /// Acts on the death of rank `r`.
    fn on_exit(&mut self, r: usize, st: ExitStatus) {
        // Reaped: never signal this pid again.
        self.ranks[r].exited = Some(st);
        // What the rank sent just before dying (finalize, abort) decides how its death reads.
        while self.read_pmi(r) {}
        let who = self.who(r);
        let rank = &mut self.ranks[r];
        rank.pmi = None;
        let (finalized, initialized) = (rank.finalized, rank.initialized);
        let code = status::code(st);
        if finalized {
            if code != 0 {
                report!("{who} {} after MPI_Finalize", status::describe(st));
                self.record(code);
            }
        } else if self.failing() {
            // Collateral of a teardown or of a forwarded signal: no report of its own.
            self.record(code);
            if code != 0 || initialized {
                self.tear_down(None);
            }
        } else if code != 0 {
            report!(
                "{who} {} before MPI_Finalize; terminating the job",
                status::describe(st)
            );
            self.record(code);
            self.tear_down(None);
        } else if initialized {
            report!("{who} exited with status 0 without calling MPI_Finalize; terminating the job");
            self.record(1);
            self.tear_down(None);
        }
    }

    fn on_event(&mut self, r: usize, event: Event) {
        match event {
            Event::Finalized => self.ranks[r].finalized = true,
            Event::Abort { code, message } => {
                if !self.failing() {
                    let sep = if message.is_empty() { "" } else { ": " };
                    report!(
                        "rank {r} called MPI_Abort(MPI_COMM_WORLD, {code}){sep}{message}; \
                         terminating the job"
                    );
                    self.result = self.result.or(Some(code));
                }
                self.tear_down(Some(r));
            }
            Event::ProtocolError(e) => {
                if !self.failing() {
                    report!("rank {r}: PMI protocol error: {e}; terminating the job");
                    self.record(1);
                }
                self.tear_down(None);
            }
        }
    }

    /// Queues `msg` for rank `r`.
    fn send(&mut self, r: usize, msg: &Message) {
        let host = self.ranks[r].host;
        if let Some(conn) = self.ranks[r].pmi.as_mut() {
            // Replies are built from bounded, validated parts; a failure is a launcher bug
            // that the rank would see as a closed connection.
            match (msg.to_line(), host) {
                (Ok(text), Some(p)) => {
                    self.proxies[p].tell(&crate::wire::ToProxy::Pmi { rank: r, text })
                }
                (Ok(line), None) => conn.out.extend_from_slice(line.as_bytes()),
                (Err(_), _) => self.ranks[r].pmi = None,
            }
        }
    }

    /// Handles one line received from rank `r`.
    fn on_line(&mut self, r: usize, line: Result<String, hympi::platform::pmi_wire::WireError>) {
        let line = match line {
            Ok(l) => l,
            Err(e) => return self.on_event(r, Event::ProtocolError(e.to_string())),
        };
        let Some(conn) = self.ranks[r].pmi.as_mut() else {
            return;
        };
        if conn.in_mcmd || line.starts_with("mcmd=") {
            conn.in_mcmd = line.trim() != "endcmd";
            if !conn.in_mcmd {
                let reply = Message::new("spawn_result")
                    .arg("rc", -1)
                    .arg("msg", "spawn is not supported by hympiexec");
                self.send(r, &reply);
            }
            return;
        }
        let msg = match Message::parse(&line) {
            Ok(m) => m,
            Err(e) => return self.on_event(r, Event::ProtocolError(e.to_string())),
        };
        if msg.cmd() == "init" {
            self.ranks[r].initialized = true;
        }
        let outcome = self.server.handle(r, &msg);
        for (to, reply) in &outcome.replies {
            self.send(*to, reply);
        }
        if let Some(event) = outcome.event {
            self.on_event(r, event);
        }
    }

    /// Reads what rank `r` sent on its PMI socket and handles the complete lines; true when
    /// bytes were read (there may be more).
    fn read_pmi(&mut self, r: usize) -> bool {
        let Some(conn) = self.ranks[r].pmi.as_mut() else {
            return false;
        };
        let Some(file) = conn.file.as_mut() else {
            return false;
        };
        let mut buf = [0u8; 8192];
        match file.read(&mut buf) {
            Ok(0) => {
                self.ranks[r].pmi = None;
                return false;
            }
            Ok(n) => conn.lines.extend(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return true,
            Err(e) if is_transient(&e) => return false,
            Err(_) => {
                self.ranks[r].pmi = None;
                return false;
            }
        }
        let mut lines = Vec::new();
        while let Some(line) = conn.lines.next_line() {
            lines.push(line);
        }
        for line in lines {
            self.on_line(r, line);
        }
        true
    }

    /// Writes pending replies as far as the sockets accept them.
    fn flush_pmi(&mut self) {
        for rank in &mut self.ranks {
            let Some(conn) = rank.pmi.as_mut() else {
                continue;
            };
            let Some(file) = conn.file.as_mut() else {
                continue;
            };
            if !output::write_pending(file, &mut conn.out) {
                rank.pmi = None;
            }
        }
    }

    /// Relays what rank `r` wrote on stream `s`.
    fn read_output(&mut self, r: usize, s: usize) {
        let Some(stream) = self.ranks[r].outputs[s].as_mut() else {
            return;
        };
        let Some((bytes, eof)) = output::pump(&mut stream.file, &mut stream.relay) else {
            return;
        };
        if !output::write(stream.relay.sink(), &bytes) {
            // Nobody reads our stream any more: close every rank's pipe to it, so that ranks
            // writing there get SIGPIPE, as in an ordinary pipeline.
            for rank in &mut self.ranks {
                rank.outputs[s] = None;
            }
        } else if eof {
            self.ranks[r].outputs[s] = None;
        }
    }

    fn on_signals(&mut self, sigs: &[i32]) {
        for &sig in sigs.iter().filter(|&&s| s != libc::SIGCHLD) {
            self.interrupts += 1;
            if self.interrupts == 1 {
                report!(
                    "received {}; forwarding it to the ranks",
                    status::signal_name(sig)
                );
                for r in 0..self.ranks.len() {
                    self.signal(r, sig);
                }
            } else if !self.sigkill_sent {
                report!(
                    "received {} again; killing the ranks",
                    status::signal_name(sig)
                );
                self.kill_all();
            }
        }
    }

    fn reap(&mut self) {
        for r in 0..self.ranks.len() {
            if self.ranks[r].exited.is_some() {
                continue;
            }
            let Some(child) = self.ranks[r].child.as_mut() else {
                continue;
            };
            match child.try_wait() {
                Ok(Some(st)) => self.on_exit(r, st),
                Ok(None) => {}
                // Cannot happen for our own unreaped child; count it as a failure.
                Err(_) => self.on_exit(
                    r,
                    <ExitStatus as std::os::unix::process::ExitStatusExt>::from_raw(1 << 8),
                ),
            }
        }
    }

    fn all_exited(&self) -> bool {
        self.ranks.iter().all(|r| r.exited.is_some())
    }

    fn outputs_open(&self) -> bool {
        self.ranks
            .iter()
            .any(|r| r.outputs.iter().any(Option::is_some))
            || self.proxies.iter().any(front::Proxy::open)
    }

    /// The poll set: signals, live ranks' PMI sockets, open output pipes.
    fn poll_set(&self, signals: &SignalPipe) -> (Vec<libc::pollfd>, Vec<Slot>) {
        let entry = |fd: i32, events: i16| libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        let mut fds = vec![entry(signals.as_file().as_raw_fd(), libc::POLLIN)];
        let mut slots = vec![Slot::Signals];
        for (r, rank) in self.ranks.iter().enumerate() {
            if let (Some(conn), None) = (&rank.pmi, rank.exited) {
                let out = if conn.out.is_empty() {
                    0
                } else {
                    libc::POLLOUT
                };
                if let Some(file) = &conn.file {
                    fds.push(entry(file.as_raw_fd(), libc::POLLIN | out));
                    slots.push(Slot::Pmi(r));
                }
            }
            for (s, stream) in rank.outputs.iter().enumerate() {
                if let Some(stream) = stream {
                    fds.push(entry(stream.file.as_raw_fd(), libc::POLLIN));
                    slots.push(Slot::Output(r, s));
                }
            }
        }
        self.remote_poll_set(&mut fds, &mut slots);
        (fds, slots)
    }

    /// Milliseconds until the next deadline (capped at one second: a safety net for reaping).
    fn timeout_ms(&self, now: Instant) -> i32 {
        let mut next = now + Duration::from_secs(1);
        if let (Some(t), false) = (self.kill_at, self.sigkill_sent) {
            next = next.min(t);
        }
        if let Some(t) = self.drain_until {
            next = next.min(t);
        }
        if !self.proxies.is_empty() {
            next = next.min(now + crate::wire::BEAT_EVERY / 2);
        }
        let ms = next.saturating_duration_since(now).as_millis();
        // Round up so that the deadline has passed when poll returns.
        i32::try_from(ms + 1).unwrap_or(1000)
    }

    /// The event loop; returns the job's exit status.
    fn run(&mut self, signals: &mut SignalPipe) -> i32 {
        loop {
            let now = Instant::now();
            if let (Some(t), false) = (self.kill_at, self.sigkill_sent) {
                if now >= t {
                    self.kill_all();
                }
            }
            self.remote_timers(now);
            if self.all_exited() {
                let grace = if self.proxies.is_empty() {
                    DRAIN_GRACE
                } else {
                    front::PROXY_DRAIN_GRACE
                };
                let until = *self.drain_until.get_or_insert(now + grace);
                if !self.outputs_open() || now >= until {
                    break;
                }
            }
            let (mut fds, slots) = self.poll_set(signals);
            let timeout = self.timeout_ms(now);
            // SAFETY: fds is a valid, exclusively borrowed array of fds.len() pollfd entries.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if n > 0 {
                for (pfd, slot) in fds.iter().zip(&slots) {
                    if pfd.revents == 0 {
                        continue;
                    }
                    match *slot {
                        Slot::Signals => {
                            let sigs = signals.take();
                            self.on_signals(&sigs);
                        }
                        Slot::Pmi(r) => {
                            self.read_pmi(r);
                        }
                        Slot::Output(r, s) => self.read_output(r, s),
                        Slot::Listener => self.accept(),
                        Slot::Pending(i) => self.read_pending(i),
                        Slot::Proxy(p) => self.read_proxy(p),
                        Slot::ProxyOutput(p, s) => self.read_proxy_output(p, s),
                    }
                }
            }
            self.flush_pmi();
            self.flush_proxies();
            // A signal that also hit the ranks (Ctrl-C, `timeout`) is noted before their deaths
            // are judged, so that they are not blamed on a rank.
            let sigs = signals.take();
            self.on_signals(&sigs);
            self.reap();
            self.reap_proxies();
        }
        self.end_proxies();
        // Whatever is left of partial lines.
        for rank in &mut self.ranks {
            for stream in rank.outputs.iter_mut().flatten() {
                let _ = output::write(stream.relay.sink(), &stream.relay.finish());
            }
        }
        self.result.unwrap_or(0)
    }
}

impl Job {
    /// A job of `np` ranks, rank `r` on node `node_of[r]`, with no rank started yet.
    fn new(np: usize, node_of: &[usize]) -> Job {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let kvsname = format!("hympi_kvs_{}_{stamp}", std::process::id());
        Job {
            ranks: Vec::with_capacity(np),
            server: PmiServer::new(np, kvsname, node_of),
            result: None,
            kill_at: None,
            sigkill_sent: false,
            interrupts: 0,
            drain_until: None,
            proxies: Vec::new(),
            front: None,
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

/// Raises the soft limit on open files so that 3 descriptors per rank fit.
fn raise_fd_limit(np: usize) {
    let need = (3 * np + 64) as libc::rlim_t;
    // SAFETY: getrlimit/setrlimit read and write the local struct only.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < need {
            lim.rlim_cur = need.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// Resolves the `-x` options into variables to set.
fn extra_env(opts: &Options) -> Vec<(String, std::ffi::OsString)> {
    let mut out = Vec::new();
    for spec in &opts.env {
        match spec {
            crate::args::EnvSpec::Set(k, v) => out.push((k.clone(), v.into())),
            crate::args::EnvSpec::Pass(k) => match std::env::var_os(k) {
                Some(v) => out.push((k.clone(), v)),
                None => report!("-x {k}: not set in this environment; not passed"),
            },
        }
    }
    out
}

/// The exit status for a rank that could not be started, in the shell's convention.
pub fn spawn_failure_code(e: &io::Error) -> i32 {
    match e.kind() {
        io::ErrorKind::NotFound => 127,
        io::ErrorKind::PermissionDenied => 126,
        _ => 1,
    }
}

/// Runs the job described by `opts`; returns the launcher's exit status.
pub fn run(opts: &Options) -> i32 {
    let np = opts.np;
    raise_fd_limit(np);
    let mut signals = match signals::install() {
        Ok(s) => s,
        Err(e) => {
            report!("cannot install signal handlers: {e}");
            return 1;
        }
    };
    if let Some(hosts) = &opts.hosts {
        return front::run(opts, hosts, &mut signals);
    }
    let plan = binding::plan(
        binding::Request {
            bind_to: opts.bind_to,
            cpus_per_rank: opts.cpus_per_rank,
        },
        np,
    );
    if let Some(w) = &plan.warning {
        report!("{w}");
    }
    if opts.report_bindings {
        for (r, d) in plan.domains.iter().enumerate() {
            report!("{}", binding::report_line(r, d.as_ref()));
        }
    }
    let env = extra_env(opts);
    let spec = JobSpec {
        program: &opts.program,
        args: &opts.args,
        np,
        env: &env,
        per_node: opts.nodes.map(|n| n.per_node(np)),
        apps: &opts.apps,
    };
    let node_of: Vec<usize> = (0..np)
        .map(|r| spec.per_node.map_or(0, |p| r / p))
        .collect();
    let mut job = Job::new(np, &node_of);
    job.server
        .set_appnums((0..np).map(|r| spec.app_of(r).3).collect());
    for r in 0..np {
        match launch::start(&spec, r, &spec.place(r), plan.domain(r), true) {
            Ok(started) => {
                let pid = started.child.id() as i32;
                job.ranks.push(Rank {
                    child: Some(started.child),
                    pid,
                    host: None,
                    pmi: Some(PmiConn {
                        file: Some(started.pmi),
                        lines: LineBuffer::new(),
                        out: Vec::new(),
                        in_mcmd: false,
                    }),
                    outputs: [
                        Some(OutStream {
                            file: started.stdout,
                            relay: Relay::new(r, Sink::Stdout, opts.tag_output),
                        }),
                        Some(OutStream {
                            file: started.stderr,
                            relay: Relay::new(r, Sink::Stderr, opts.tag_output),
                        }),
                    ],
                    exited: None,
                    initialized: false,
                    finalized: false,
                });
            }
            Err(e) => {
                report!(
                    "cannot start rank {r} ({}): {e}; terminating the job",
                    spec.app_of(r).0.to_string_lossy()
                );
                job.record(spawn_failure_code(&e));
                // Already failing: the started ranks' deaths are not reported one by one.
                job.kill_at = Some(Instant::now());
                job.kill_all();
                job.run(&mut signals);
                return job.result.unwrap_or(1);
            }
        }
    }
    job.run(&mut signals)
}
