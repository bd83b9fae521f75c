//! Multi-host jobs: the launcher starts one proxy per host through the launcher command
//! (`ssh {host}` by default, `--launcher-exec` to change it), waits for each to connect back
//! over TCP with the job token, and then runs the ordinary job loop with those hosts' ranks
//! behind their proxies: PMI lines, starts, exits and signals travel as [`crate::wire`]
//! messages; output comes home on the launcher command's own stdout and stderr.
//!
//! A proxy that exits, disconnects or goes silent for [`wire::LOST_AFTER`] while its ranks
//! run ends the job, with a report naming the host.

use std::io::Write;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};

use super::*;
use crate::hosts::{self, Host};
use crate::link::Link;
use crate::wire::{self, StartSpec, ToFront, ToProxy};

/// How long the launcher waits, once every rank has exited, for the proxies to exit.
pub const PROXY_DRAIN_GRACE: Duration = Duration::from_secs(2);

/// How long a proxy has to connect back after its launcher command starts.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a connection has to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// The launcher command used when `--launcher-exec` is not given.
pub const DEFAULT_LAUNCHER: &str = "ssh {host}";

/// One host's proxy, as the launcher sees it.
pub struct Proxy {
    /// The host's name.
    pub name: String,
    /// The launcher command's process (`ssh`, `ip netns exec`, ...).
    child: Option<Child>,
    link: Option<Link>,
    outputs: [Option<OutStream>; 2],
    exited: bool,
    /// What it runs; sent once every proxy has said hello (its machine's share is filled in
    /// then).
    start: StartSpec,
    /// The machine it said it runs on (`None`: no hello yet).
    machine: Option<String>,
    /// The world ranks it runs.
    ranks: Vec<usize>,
    /// Already declared lost (its ranks count as dead).
    lost: bool,
}

impl Proxy {
    /// Queues a message for the proxy (dropped while it is not connected: it has no ranks).
    pub fn tell(&mut self, msg: &ToProxy) {
        if let Some(link) = self.link.as_mut() {
            link.queue(&msg.encode());
        }
    }

    /// True while its launcher command's output pipes are open.
    pub fn open(&self) -> bool {
        self.outputs.iter().any(Option::is_some)
    }
}

/// The listening side of a multi-host job.
pub struct Front {
    listener: TcpListener,
    token: String,
    /// Connections that have not said hello, with their deadline.
    pending: Vec<(Link, Instant)>,
    connect_by: Instant,
}

/// A random job token (hex), from the kernel's generator.
fn token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// This machine's IPv4 addresses, the loopback address last.
fn local_addresses() -> Vec<String> {
    let mut out = Vec::new();
    let mut ifa: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `ifa` with a list we walk read-only and free once below.
    unsafe {
        if libc::getifaddrs(&mut ifa) == 0 {
            let mut cur = ifa;
            while !cur.is_null() {
                let a = (*cur).ifa_addr;
                if !a.is_null() && i32::from((*a).sa_family) == libc::AF_INET {
                    let sin = &*(a as *const libc::sockaddr_in);
                    let ip = std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                    if !ip.is_loopback() && !out.contains(&ip.to_string()) {
                        out.push(ip.to_string());
                    }
                }
                cur = (*cur).ifa_next;
            }
            libc::freeifaddrs(ifa);
        }
    }
    out.push("127.0.0.1".into());
    out
}

/// The launcher command for `host`: the template's words with `{host}` replaced (the host is
/// appended when the template does not name it), then the proxy's own command line.
pub fn launcher_command(template: &str, host: &str, proxy: &[String]) -> Vec<String> {
    let mut words: Vec<String> = template
        .split_whitespace()
        .map(|w| w.replace("{host}", host))
        .collect();
    if !template.contains("{host}") {
        words.push(host.to_string());
    }
    words.extend(proxy.iter().cloned());
    words
}

/// Variables of this process that go to the ranks on every host (UTF-8 ones; the others
/// cannot travel in the start message).
fn job_environment(opts: &Options) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    for (k, v) in extra_env(opts) {
        let v = v.to_string_lossy().into_owned();
        match env.iter_mut().find(|(name, _)| *name == k) {
            Some(slot) => slot.1 = v,
            None => env.push((k, v)),
        }
    }
    env
}

/// Starts the launcher command of proxy `index` for `host`.
fn start_proxy(
    template: &str,
    host: &str,
    index: usize,
    front: &str,
    token: &str,
) -> io::Result<(Child, File, File)> {
    let exe = std::env::current_exe()?;
    let proxy = vec![
        exe.to_string_lossy().into_owned(),
        "--proxy".into(),
        index.to_string(),
        "--front".into(),
        front.to_string(),
    ];
    let words = launcher_command(template, host, &proxy);
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            // If the launcher dies, its launcher commands (and so the proxies) die too.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // The token goes on stdin, never on a command line others can read.
        let _ = writeln!(stdin, "{token}");
    }
    let out = child.stdout.take().map(OwnedFd::from);
    let err = child.stderr.take().map(OwnedFd::from);
    match (out, err) {
        (Some(o), Some(e)) => {
            for fd in [&o, &e] {
                // SAFETY: F_SETFL on descriptors we own.
                unsafe {
                    let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
                }
            }
            Ok((child, File::from(o), File::from(e)))
        }
        _ => Err(io::Error::other("launcher command output pipes missing")),
    }
}

/// Runs a job over `hosts`; returns the launcher's exit status.
pub fn run(opts: &Options, hosts: &[Host], signals: &mut SignalPipe) -> i32 {
    let np = opts.np;
    let host_of = hosts::place(hosts, np);
    let mut job = Job::new(np, &host_of);
    let listener = match TcpListener::bind("0.0.0.0:0").and_then(|l| {
        l.set_nonblocking(true)?;
        Ok(l)
    }) {
        Ok(l) => l,
        Err(e) => {
            report!("cannot listen for proxies: {e}");
            return 1;
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let token = match token() {
        Ok(t) => t,
        Err(e) => {
            report!("cannot make a job token: {e}");
            return 1;
        }
    };
    let front_addr = format!("{}:{port}", local_addresses().join(","));
    let env = job_environment(opts);
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into());
    let bind_to = opts.bind_to.map_or("", |b| b.word());
    for &host in &host_of {
        job.ranks.push(Rank {
            child: None,
            pid: 0,
            host: Some(host),
            pmi: Some(PmiConn {
                file: None,
                lines: LineBuffer::new(),
                out: Vec::new(),
                in_mcmd: false,
            }),
            outputs: [None, None],
            exited: None,
            initialized: false,
            finalized: false,
        });
    }
    let template = opts.launcher_exec.as_deref().unwrap_or(DEFAULT_LAUNCHER);
    for (h, host) in hosts.iter().enumerate() {
        let ranks: Vec<usize> = (0..np).filter(|&r| host_of[r] == h).collect();
        let spec = StartSpec {
            program: opts.program.to_string_lossy().into_owned(),
            args: opts
                .args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            env: env.clone(),
            cwd: cwd.clone(),
            np,
            ranks: ranks.clone(),
            node: host.name.clone(),
            tag_output: opts.tag_output,
            bind_to: bind_to.into(),
            cpus_per_rank: opts.cpus_per_rank.unwrap_or(0),
            machine_ranks: ranks.len(),
            machine_first: 0,
        };
        job.proxies.push(Proxy {
            name: host.name.clone(),
            child: None,
            link: None,
            outputs: [None, None],
            exited: ranks.is_empty(),
            start: spec,
            machine: None,
            ranks,
            lost: false,
        });
    }
    job.front = Some(Front {
        listener,
        token: token.clone(),
        pending: Vec::new(),
        connect_by: Instant::now() + CONNECT_TIMEOUT,
    });
    for p in 0..job.proxies.len() {
        if job.proxies[p].ranks.is_empty() {
            continue;
        }
        match start_proxy(template, &job.proxies[p].name, p, &front_addr, &token) {
            Ok((child, out, err)) => {
                let proxy = &mut job.proxies[p];
                proxy.child = Some(child);
                proxy.outputs = [
                    Some(OutStream {
                        file: out,
                        relay: Relay::new(p, Sink::Stdout, false),
                    }),
                    Some(OutStream {
                        file: err,
                        relay: Relay::new(p, Sink::Stderr, false),
                    }),
                ];
            }
            Err(e) => {
                let first = template.split_whitespace().next().unwrap_or("");
                job.proxies[p].exited = true;
                job.lose(
                    p,
                    &format!("cannot run the launcher command {first:?}: {e}"),
                );
            }
        }
    }
    job.run(signals)
}

impl Job {
    /// Declares proxy `p` lost: its unfinished ranks count as dead, and unless the job is
    /// already ending, it ends with a report naming the host.
    pub(super) fn lose(&mut self, p: usize, why: &str) {
        if self.proxies[p].lost {
            return;
        }
        self.proxies[p].lost = true;
        self.proxies[p].link = None;
        let alive: Vec<usize> = self.proxies[p]
            .ranks
            .iter()
            .copied()
            .filter(|&r| self.ranks[r].exited.is_none())
            .collect();
        if alive.is_empty() {
            return;
        }
        for &r in &alive {
            self.ranks[r].exited = Some(ExitStatus::from_raw(1 << 8));
            self.ranks[r].pmi = None;
        }
        if !self.failing() {
            let list: Vec<String> = alive.iter().map(usize::to_string).collect();
            report!(
                "host {}: {why}; its ranks ({}) are lost; terminating the job",
                self.proxies[p].name,
                list.join(", ")
            );
            self.record(1);
        }
        self.tear_down(None);
    }

    /// Adds the listener, pending connections and proxies to the poll set.
    pub(super) fn remote_poll_set(&self, fds: &mut Vec<libc::pollfd>, slots: &mut Vec<Slot>) {
        let entry = |fd: i32, events: i16| libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        if let Some(front) = &self.front {
            fds.push(entry(front.listener.as_raw_fd(), libc::POLLIN));
            slots.push(Slot::Listener);
            for (i, (link, _)) in front.pending.iter().enumerate() {
                fds.push(entry(link.fd(), libc::POLLIN));
                slots.push(Slot::Pending(i));
            }
        }
        for (p, proxy) in self.proxies.iter().enumerate() {
            if let Some(link) = &proxy.link {
                let out = if link.wants_write() { libc::POLLOUT } else { 0 };
                fds.push(entry(link.fd(), libc::POLLIN | out));
                slots.push(Slot::Proxy(p));
            }
            for (s, stream) in proxy.outputs.iter().enumerate() {
                if let Some(stream) = stream {
                    fds.push(entry(stream.file.as_raw_fd(), libc::POLLIN));
                    slots.push(Slot::ProxyOutput(p, s));
                }
            }
        }
    }

    /// Heartbeats, silent proxies, proxies that never connected, stale hellos.
    pub(super) fn remote_timers(&mut self, now: Instant) {
        let Some(front) = self.front.as_mut() else {
            return;
        };
        front.pending.retain(|(_, by)| now < *by);
        let connect_by = front.connect_by;
        for p in 0..self.proxies.len() {
            if self.proxies[p].lost || self.proxies[p].ranks.is_empty() {
                continue;
            }
            match self.proxies[p].link.as_mut() {
                Some(link) => {
                    if now.duration_since(link.sent) >= wire::BEAT_EVERY {
                        link.queue(&ToProxy::Beat.encode());
                    }
                    if now.duration_since(link.heard) > wire::LOST_AFTER {
                        let secs = wire::LOST_AFTER.as_secs();
                        self.lose(
                            p,
                            &format!(
                                "no word from its proxy for {secs} s (host down or link cut?)"
                            ),
                        );
                    }
                }
                None if self.sigkill_sent => self.lose(p, "its proxy never connected"),
                None if now >= connect_by => {
                    let secs = CONNECT_TIMEOUT.as_secs();
                    self.lose(
                        p,
                        &format!("its proxy did not connect within {secs} s (host unreachable?)"),
                    )
                }
                None => {}
            }
        }
    }

    /// Takes new connections from proxies.
    pub(super) fn accept(&mut self) {
        let Some(front) = self.front.as_mut() else {
            return;
        };
        while let Ok((stream, _)) = front.listener.accept() {
            if let Ok(link) = Link::new(stream) {
                front.pending.push((link, Instant::now() + HELLO_TIMEOUT));
            }
        }
    }

    /// Reads a connection's hello: the right token and a proxy not yet connected attach it.
    pub(super) fn read_pending(&mut self, i: usize) {
        let Some(front) = self.front.as_mut() else {
            return;
        };
        let Some((link, _)) = front.pending.get_mut(i) else {
            return;
        };
        let got = link.receive();
        let Some(first) = got.lines.first() else {
            if got.closed {
                front.pending.remove(i);
            }
            return;
        };
        let (link, _) = front.pending.remove(i);
        let (host, machine) = match ToFront::decode(first) {
            Ok(ToFront::Hello {
                host,
                token,
                machine,
            }) if token == front.token => (host, machine),
            // A wrong token or garbage: not one of ours; the connection is dropped.
            _ => return,
        };
        let Some(proxy) = self.proxies.get_mut(host) else {
            return;
        };
        if proxy.link.is_some() || proxy.lost || proxy.ranks.is_empty() {
            return;
        }
        proxy.machine = Some(machine);
        proxy.link = Some(link);
        self.start_when_all_connected();
        // Lines that came with the hello.
        let rest: Vec<String> = got.lines[1..].to_vec();
        for line in rest {
            self.on_proxy_line(host, &line);
        }
    }

    /// Once every proxy with ranks has said hello, sends each its start message, with the
    /// share of its machine that it takes: hosts on one machine (the same boot id: network
    /// namespaces, containers) split its cores in host order instead of each binding its
    /// first rank to core 0, and their ranks count each other when deciding to yield.
    fn start_when_all_connected(&mut self) {
        let waiting = |p: &Proxy| !p.ranks.is_empty() && p.link.is_none();
        if self.proxies.iter().any(waiting) {
            return;
        }
        let hosts: Vec<(Option<&str>, usize)> = self
            .proxies
            .iter()
            .map(|p| (p.machine.as_deref(), p.ranks.len()))
            .collect();
        let shares = machine_shares(&hosts);
        for (p, (first, total)) in self.proxies.iter_mut().zip(shares) {
            if p.ranks.is_empty() {
                continue;
            }
            p.start.machine_first = first;
            p.start.machine_ranks = total;
            let start = ToProxy::Start(p.start.clone());
            p.tell(&start);
        }
    }

    /// Handles one message from proxy `p`.
    pub(super) fn on_proxy_line(&mut self, p: usize, line: &str) {
        let msg = match ToFront::decode(line) {
            Ok(m) => m,
            Err(e) => return self.lose(p, &format!("protocol error from its proxy: {e}")),
        };
        let ours = |r: usize| self.proxies[p].ranks.contains(&r);
        match msg {
            ToFront::Started { rank, pid } if ours(rank) => self.ranks[rank].pid = pid,
            ToFront::SpawnFailed {
                rank,
                code,
                message,
            } if ours(rank) => {
                if self.ranks[rank].exited.is_none() {
                    self.ranks[rank].exited = Some(ExitStatus::from_raw((code & 0xff) << 8));
                    self.ranks[rank].pmi = None;
                    if !self.failing() {
                        report!("rank {rank}: {message}; terminating the job");
                    }
                    self.record(code);
                    self.tear_down(None);
                }
            }
            ToFront::Pmi { rank, line } if ours(rank) => {
                if self.ranks[rank].exited.is_none() {
                    self.on_line(rank, Ok(line));
                }
            }
            ToFront::Exit { rank, status } if ours(rank) => {
                if self.ranks[rank].exited.is_none() {
                    self.on_exit(rank, ExitStatus::from_raw(status));
                }
            }
            ToFront::Beat => {}
            other => self.lose(p, &format!("unexpected message from its proxy: {other:?}")),
        }
    }

    /// Reads proxy `p`'s connection.
    pub(super) fn read_proxy(&mut self, p: usize) {
        let Some(link) = self.proxies[p].link.as_mut() else {
            return;
        };
        let got = link.receive();
        for line in &got.lines {
            self.on_proxy_line(p, line);
        }
        if got.closed {
            self.proxies[p].link = None;
            self.lose(p, "lost the connection to its proxy");
        }
    }

    /// Relays what proxy `p`'s launcher command wrote (the ranks' output, already tagged).
    pub(super) fn read_proxy_output(&mut self, p: usize, s: usize) {
        let Some(stream) = self.proxies[p].outputs[s].as_mut() else {
            return;
        };
        let Some((bytes, eof)) = output::pump(&mut stream.file, &mut stream.relay) else {
            return;
        };
        if !output::write(stream.relay.sink(), &bytes) || eof {
            self.proxies[p].outputs[s] = None;
        }
    }

    /// Writes queued messages to the proxies.
    pub(super) fn flush_proxies(&mut self) {
        for p in 0..self.proxies.len() {
            let failed = match self.proxies[p].link.as_mut() {
                Some(link) => link.flush().is_err(),
                None => false,
            };
            if failed {
                self.proxies[p].link = None;
                self.lose(p, "lost the connection to its proxy");
            }
        }
    }

    /// Reaps launcher commands that ended; one that ends while its ranks run loses its host.
    pub(super) fn reap_proxies(&mut self) {
        for p in 0..self.proxies.len() {
            if self.proxies[p].exited {
                continue;
            }
            let Some(child) = self.proxies[p].child.as_mut() else {
                continue;
            };
            let st = match child.try_wait() {
                Ok(Some(st)) => st,
                Ok(None) => continue,
                Err(_) => ExitStatus::from_raw(1 << 8),
            };
            self.proxies[p].exited = true;
            // Whatever the proxy sent before it exited (the last exits) counts first.
            self.read_proxy(p);
            if self.proxies[p]
                .ranks
                .iter()
                .any(|&r| self.ranks[r].exited.is_none())
            {
                self.lose(p, &format!("its proxy {}", status::describe(st)));
            }
        }
    }

    /// At the end of the job: launcher commands still running are ended.
    pub(super) fn end_proxies(&mut self) {
        for proxy in &mut self.proxies {
            if let (Some(child), false) = (proxy.child.as_mut(), proxy.exited) {
                // SAFETY: kill(2) on our own unreaped child.
                unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            }
        }
        let until = Instant::now() + KILL_GRACE;
        for proxy in &mut self.proxies {
            if let (Some(child), false) = (proxy.child.as_mut(), proxy.exited) {
                while Instant::now() < until {
                    if let Ok(Some(_)) = child.try_wait() {
                        proxy.exited = true;
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                if !proxy.exited {
                    let _ = child.kill();
                    let _ = child.wait();
                    proxy.exited = true;
                }
            }
            for stream in proxy.outputs.iter_mut().flatten() {
                let _ = output::write(stream.relay.sink(), &stream.relay.finish());
            }
        }
    }
}

/// For each host, given as (its machine, its rank count): how many ranks of the hosts before
/// it run on its machine, and how many run there in all. A host whose machine is unknown
/// (`None` or empty) has one of its own.
fn machine_shares(hosts: &[(Option<&str>, usize)]) -> Vec<(usize, usize)> {
    fn known(m: Option<&str>) -> Option<&str> {
        m.filter(|m| !m.is_empty())
    }
    hosts
        .iter()
        .enumerate()
        .map(|(i, &(m, n))| {
            let Some(m) = known(m) else {
                return (0, n);
            };
            let on_m = |h: &&(Option<&str>, usize)| known(h.0) == Some(m);
            let before = hosts[..i].iter().filter(on_m).map(|h| h.1).sum();
            let total = hosts.iter().filter(on_m).map(|h| h.1).sum();
            (before, total)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_commands() {
        let proxy = vec!["/bin/hympiexec".to_string(), "--proxy".into()];
        assert_eq!(
            launcher_command("ip netns exec {host}", "h1", &proxy),
            ["ip", "netns", "exec", "h1", "/bin/hympiexec", "--proxy"]
        );
        assert_eq!(
            launcher_command("ssh -x", "node7", &proxy),
            ["ssh", "-x", "node7", "/bin/hympiexec", "--proxy"]
        );
    }

    #[test]
    fn hosts_on_one_machine_share_its_cores_in_host_order() {
        let hosts = [
            (Some("m1"), 2),
            (Some("m2"), 1),
            (Some("m1"), 3),
            (None, 2),
            (Some(""), 1),
            (Some("m1"), 0),
        ];
        assert_eq!(
            machine_shares(&hosts),
            [(0, 5), (0, 1), (2, 5), (0, 2), (0, 1), (5, 5)]
        );
    }

    #[test]
    fn loopback_is_the_last_address() {
        let a = local_addresses();
        assert_eq!(a.last().map(String::as_str), Some("127.0.0.1"));
    }
}
