//! `hympiexec --proxy`: the launcher's agent on one host of a multi-host job.
//!
//! Started on its host by the launcher command (`ssh`, `ip netns exec`, ...), it reads the job
//! token on stdin, connects back to the launcher over TCP, receives what to run, starts this
//! host's ranks with their PMI sockets, and then relays: PMI lines up and replies down, rank
//! output to its own stdout/stderr (which the launcher command carries home), starts and
//! exits as messages, signals from the launcher to the ranks. If the launcher goes silent for
//! [`wire::LOST_AFTER`] (killed, or the link is down), the proxy kills its ranks and exits.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, Read};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::binding;
use crate::launch::{self, JobSpec, Place};
use crate::link::Link;
use crate::output::{self, Relay};
use crate::signals;
use crate::wire::{self, StartSpec, ToFront, ToProxy};

/// How long to wait for the launcher's start message.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long output is still relayed once every rank has exited.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

macro_rules! say {
    ($host:expr, $($t:tt)*) => {{
        let msg = format!("hympiexec proxy on {}: {}\n", $host, format_args!($($t)*));
        let _ = output::write(output::Sink::Stderr, msg.as_bytes());
    }};
}

/// One rank on this host.
struct Local {
    world: usize,
    child: Child,
    pid: i32,
    pmi: Option<File>,
    lines: Vec<u8>,
    to_rank: Vec<u8>,
    outputs: [Option<(File, Relay)>; 2],
    exited: bool,
}

/// Connects to the first reachable address of `front` (`addr1,addr2:port`).
fn connect(front: &str) -> io::Result<TcpStream> {
    let (addrs, port) = front
        .rsplit_once(':')
        .ok_or_else(|| io::Error::other(format!("bad launcher address {front:?}")))?;
    let port: u16 = port
        .parse()
        .map_err(|_| io::Error::other(format!("bad launcher port in {front:?}")))?;
    let mut last = io::Error::other("no launcher address given");
    for a in addrs.split(',') {
        let Ok(ip) = a.parse::<std::net::IpAddr>() else {
            continue;
        };
        match TcpStream::connect_timeout(&SocketAddr::new(ip, port), Duration::from_secs(2)) {
            Ok(s) => return Ok(s),
            Err(e) => last = io::Error::new(e.kind(), format!("{ip}:{port}: {e}")),
        }
    }
    Err(last)
}

/// Waits for the start message.
fn await_start(link: &mut Link) -> Result<StartSpec, String> {
    let until = Instant::now() + START_TIMEOUT;
    loop {
        let got = link.receive();
        if let Some(line) = got.lines.first() {
            return match ToProxy::decode(line) {
                Ok(ToProxy::Start(spec)) => Ok(spec),
                Ok(other) => Err(format!("expected the start message, got {other:?}")),
                Err(e) => Err(e),
            };
        }
        if got.closed {
            return Err("the launcher closed the connection (wrong token?)".into());
        }
        if Instant::now() >= until {
            return Err("no start message from the launcher".into());
        }
        let mut pfd = libc::pollfd {
            fd: link.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, 200) };
    }
}

/// Variables of the launcher's environment that describe the launcher's own process, not the
/// job, and are not passed on.
fn passed_on(name: &str) -> bool {
    !matches!(
        name,
        "PMI_FD"
            | "PMI_RANK"
            | "PMI_SIZE"
            | "PMI_PORT"
            | "PMI_ID"
            | "PMI_SPAWNED"
            | "HYMPI_LOCAL_RANK"
            | "HYMPI_LOCAL_SIZE"
            | "HYMPI_DOMAIN_CPUS"
            | "HYMPI_NODE"
            | "PWD"
            | "OLDPWD"
            | "SHLVL"
            | "_"
    )
}

/// This machine's identity: the running kernel's boot id, which hosts made of network
/// namespaces or containers on one kernel share (empty when it cannot be read).
fn machine_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Runs the proxy for host number `host`, connecting to `front`; returns its exit status.
pub fn run(host: usize, front: &str) -> i32 {
    let mut token = String::new();
    if io::stdin().lock().read_line(&mut token).is_err() || token.trim().is_empty() {
        say!(host, "no job token on stdin");
        return 1;
    }
    let stream = match connect(front) {
        Ok(s) => s,
        Err(e) => {
            say!(host, "cannot reach the launcher: {e}");
            return 1;
        }
    };
    let mut link = match Link::new(stream) {
        Ok(l) => l,
        Err(e) => {
            say!(host, "{e}");
            return 1;
        }
    };
    link.queue(
        &ToFront::Hello {
            host,
            token: token.trim().to_string(),
            machine: machine_id(),
        }
        .encode(),
    );
    link.flush_all(Duration::from_secs(5));
    let spec = match await_start(&mut link) {
        Ok(s) => s,
        Err(e) => {
            say!(host, "{e}");
            return 1;
        }
    };
    let node = spec.node.clone();
    if std::env::set_current_dir(&spec.cwd).is_err() {
        say!(
            node,
            "cannot enter {}; ranks start in {:?}",
            spec.cwd,
            std::env::current_dir().ok()
        );
    }
    let mut signals = match signals::install() {
        Ok(s) => s,
        Err(e) => {
            say!(node, "cannot install signal handlers: {e}");
            return 1;
        }
    };
    let env: Vec<(String, OsString)> = spec
        .env
        .iter()
        .filter(|(k, _)| passed_on(k))
        .map(|(k, v)| (k.clone(), v.into()))
        .collect();
    let program = OsString::from(&spec.program);
    let args: Vec<OsString> = spec.args.iter().map(OsString::from).collect();
    let job = JobSpec {
        program: &program,
        args: &args,
        np: spec.np,
        env: &env,
        per_node: None,
        apps: &[],
    };
    let bind = crate::args::parse_bind(&spec.bind_to).ok();
    let request = binding::Request {
        bind_to: bind,
        cpus_per_rank: (spec.cpus_per_rank > 0).then_some(spec.cpus_per_rank),
    };
    let here = spec.ranks.len();
    // Hosts sharing this machine split its cores: the plan covers all of the machine's ranks
    // and this host takes its slice of it.
    let machine_ranks = spec.machine_ranks.max(spec.machine_first + here);
    let plan = binding::plan(request, machine_ranks);
    if let Some(w) = &plan.warning {
        say!(node, "{w}");
    }
    let mut ranks = Vec::with_capacity(here);
    for (i, &world) in spec.ranks.iter().enumerate() {
        let place = Place {
            local_rank: i,
            local_size: here,
            node: Some(node.clone()),
            host_ranks: machine_ranks,
            loopback: false,
        };
        let domain = plan.domain(spec.machine_first + i);
        match launch::start(&job, world, &place, domain, false) {
            Ok(st) => {
                let pid = st.child.id() as i32;
                link.queue(&ToFront::Started { rank: world, pid }.encode());
                let sink = |s| Relay::new(world, s, spec.tag_output);
                ranks.push(Local {
                    world,
                    child: st.child,
                    pid,
                    pmi: Some(st.pmi),
                    lines: Vec::new(),
                    to_rank: Vec::new(),
                    outputs: [
                        Some((st.stdout, sink(output::Sink::Stdout))),
                        Some((st.stderr, sink(output::Sink::Stderr))),
                    ],
                    exited: false,
                });
            }
            Err(e) => {
                let code = crate::job::spawn_failure_code(&e);
                link.queue(
                    &ToFront::SpawnFailed {
                        rank: world,
                        code,
                        message: format!("cannot start {} on {node}: {e}", spec.program),
                    }
                    .encode(),
                );
            }
        }
    }
    Proxy {
        node,
        link,
        ranks,
        drain_until: None,
    }
    .serve(&mut signals)
}

struct Proxy {
    node: String,
    link: Link,
    ranks: Vec<Local>,
    drain_until: Option<Instant>,
}

#[derive(Clone, Copy)]
enum Slot {
    Signals,
    Link,
    Pmi(usize),
    Output(usize, usize),
}

impl Proxy {
    fn kill_all(&mut self, sig: i32) {
        for r in &self.ranks {
            if !r.exited {
                // SAFETY: kill(2) has no memory effects; the pid is our unreaped child.
                unsafe { libc::kill(r.pid, sig) };
            }
        }
    }

    /// Reads rank `i`'s PMI socket and forwards its complete lines.
    fn read_pmi(&mut self, i: usize) {
        let rank = &mut self.ranks[i];
        let Some(file) = rank.pmi.as_mut() else {
            return;
        };
        let mut buf = [0u8; 8192];
        loop {
            match file.read(&mut buf) {
                Ok(0) => {
                    rank.pmi = None;
                    break;
                }
                Ok(n) => rank.lines.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    rank.pmi = None;
                    break;
                }
            }
        }
        while let Some(nl) = rank.lines.iter().position(|&b| b == b'\n') {
            let rest = rank.lines.split_off(nl + 1);
            let mut line = std::mem::replace(&mut rank.lines, rest);
            line.pop();
            let line = String::from_utf8_lossy(&line).into_owned();
            self.link.queue(
                &ToFront::Pmi {
                    rank: rank.world,
                    line,
                }
                .encode(),
            );
        }
    }

    fn write_pmi(&mut self) {
        for rank in &mut self.ranks {
            if let Some(file) = rank.pmi.as_mut() {
                if !output::write_pending(file, &mut rank.to_rank) {
                    rank.pmi = None;
                }
            }
        }
    }

    fn read_output(&mut self, i: usize, s: usize) {
        let Some((file, relay)) = self.ranks[i].outputs[s].as_mut() else {
            return;
        };
        let Some((bytes, eof)) = output::pump(file, relay) else {
            return;
        };
        let sink = relay.sink();
        if !output::write(sink, &bytes) || eof {
            self.ranks[i].outputs[s] = None;
        }
    }

    /// Handles what the launcher sent; false when the link is gone.
    fn read_front(&mut self) -> bool {
        let got = self.link.receive();
        for line in got.lines {
            match ToProxy::decode(&line) {
                Ok(ToProxy::Pmi { rank, text }) => {
                    if let Some(r) = self.ranks.iter_mut().find(|r| r.world == rank) {
                        r.to_rank.extend_from_slice(text.as_bytes());
                    }
                }
                Ok(ToProxy::Signal { rank, sig }) => {
                    if let Some(r) = self.ranks.iter().find(|r| r.world == rank && !r.exited) {
                        // SAFETY: kill(2) has no memory effects; the pid is our unreaped child.
                        unsafe { libc::kill(r.pid, sig) };
                    }
                }
                Ok(ToProxy::Beat) => {}
                Ok(ToProxy::Start(_)) | Err(_) => {
                    say!(self.node, "unexpected message from the launcher: {line}");
                    return false;
                }
            }
        }
        !got.closed
    }

    fn reap(&mut self) {
        for i in 0..self.ranks.len() {
            if self.ranks[i].exited {
                continue;
            }
            let st = match self.ranks[i].child.try_wait() {
                Ok(Some(st)) => st,
                Ok(None) => continue,
                Err(_) => std::process::ExitStatus::from_raw(1 << 8),
            };
            self.ranks[i].exited = true;
            // What the rank sent just before dying (finalize, abort) goes first.
            self.read_pmi(i);
            let world = self.ranks[i].world;
            self.link.queue(
                &ToFront::Exit {
                    rank: world,
                    status: st.into_raw(),
                }
                .encode(),
            );
        }
    }

    fn poll_set(&self, signals: &signals::SignalPipe) -> (Vec<libc::pollfd>, Vec<Slot>) {
        let entry = |fd: i32, events: i16| libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        let mut fds = vec![entry(signals.as_file().as_raw_fd(), libc::POLLIN)];
        let mut slots = vec![Slot::Signals];
        let out = if self.link.wants_write() {
            libc::POLLOUT
        } else {
            0
        };
        fds.push(entry(self.link.fd(), libc::POLLIN | out));
        slots.push(Slot::Link);
        for (i, r) in self.ranks.iter().enumerate() {
            if let (Some(f), false) = (&r.pmi, r.exited) {
                let out = if r.to_rank.is_empty() {
                    0
                } else {
                    libc::POLLOUT
                };
                fds.push(entry(f.as_raw_fd(), libc::POLLIN | out));
                slots.push(Slot::Pmi(i));
            }
            for (s, o) in r.outputs.iter().enumerate() {
                if let Some((f, _)) = o {
                    fds.push(entry(f.as_raw_fd(), libc::POLLIN));
                    slots.push(Slot::Output(i, s));
                }
            }
        }
        (fds, slots)
    }

    fn serve(mut self, signals: &mut signals::SignalPipe) -> i32 {
        loop {
            let now = Instant::now();
            if self.ranks.iter().all(|r| r.exited) {
                let until = *self.drain_until.get_or_insert(now + DRAIN_GRACE);
                let open = self
                    .ranks
                    .iter()
                    .any(|r| r.outputs.iter().any(Option::is_some));
                if !open || now >= until {
                    self.link.flush_all(Duration::from_secs(2));
                    return 0;
                }
            }
            if now.duration_since(self.link.sent) >= wire::BEAT_EVERY {
                self.link.queue(&ToFront::Beat.encode());
            }
            let (mut fds, slots) = self.poll_set(signals);
            // SAFETY: fds is a valid, exclusively borrowed array of fds.len() pollfd entries.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
            let mut link_ok = true;
            if n > 0 {
                for (pfd, slot) in fds.iter().zip(&slots) {
                    if pfd.revents == 0 {
                        continue;
                    }
                    match *slot {
                        Slot::Signals => {
                            for sig in signals.take() {
                                if sig != libc::SIGCHLD {
                                    self.kill_all(sig);
                                }
                            }
                        }
                        Slot::Link => link_ok &= self.read_front(),
                        Slot::Pmi(i) => self.read_pmi(i),
                        Slot::Output(i, s) => self.read_output(i, s),
                    }
                }
            }
            self.write_pmi();
            self.reap();
            link_ok &= self.link.flush().is_ok();
            let silent = self.link.heard.elapsed() > wire::LOST_AFTER;
            if !link_ok || silent {
                let why = if silent {
                    "no word from the launcher"
                } else {
                    "lost the connection to the launcher"
                };
                if self.ranks.iter().any(|r| !r.exited) {
                    say!(self.node, "{why}; killing this host's ranks");
                }
                self.kill_all(libc::SIGKILL);
                for r in &mut self.ranks {
                    let _ = r.child.wait();
                }
                return 1;
            }
        }
    }
}
