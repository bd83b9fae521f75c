//! PMI-1 client: how a rank learns its rank and size and exchanges addresses at start-up.
//!
//! Works under `hympiexec` and under MPICH's Hydra (`mpiexec.hydra`), in both of Hydra's modes:
//! - `PMI_FD` (+ `PMI_RANK`, `PMI_SIZE`): a pre-connected socket inherited from the launcher;
//! - `PMI_PORT` (`host:port`, TCP) + `PMI_ID`: we connect, send `initack pmiid=<id>` and read
//!   `set size=`, `set rank=`, `set debug=`.
//!
//! Then `init pmi_version=1 pmi_subversion=1`, `get_maxes`, `get_my_kvsname`,
//! `get_universe_size` and `get_appnum` are asked once and cached. The key-value space is
//! reached with [`PmiClient::put`], [`PmiClient::barrier`] and [`PmiClient::get`]: a put
//! becomes visible to every rank after the next barrier.
//!
//! Values longer than [`MAX_VALUE_LEN`] (1024 bytes) are the caller's problem: `put` refuses
//! them, and the caller must split long data over several keys. Values must also be portable
//! (printable ASCII without space or backslash, see [`is_portable_value`]), because Hydra 4.0
//! does not undo the protocol's escapes; encode binary data (e.g. hex) before putting it.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use super::pmi_wire::{
    check_key, is_portable_value, LineBuffer, Message, MAX_KEY_LEN, MAX_KVSNAME_LEN, MAX_VALUE_LEN,
};

/// Set once the fd named by `PMI_FD` has been taken, so that it is owned (and closed) once.
static PMI_FD_TAKEN: AtomicBool = AtomicBool::new(false);

/// A connection to the process manager's PMI-1 server.
#[derive(Debug)]
pub struct PmiClient {
    stream: File,
    lines: LineBuffer,
    rank: i32,
    size: i32,
    appnum: i32,
    universe_size: i32,
    kvsname: String,
    key_max: usize,
    value_max: usize,
    finalized: bool,
}

/// Where the launcher said to find its PMI server.
enum Source {
    Fd { fd: i32, rank: i32, size: i32 },
    Port { addr: String, id: i32 },
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn protocol(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Reads an integer environment variable; `default` when unset, an error when malformed.
pub(crate) fn env_int(name: &str, default: Option<i32>) -> io::Result<i32> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| invalid(format!("{name}={v:?} is not an integer"))),
        Err(std::env::VarError::NotPresent) => {
            default.ok_or_else(|| invalid(format!("{name} is not set")))
        }
        Err(std::env::VarError::NotUnicode(_)) => Err(invalid(format!("{name} is not UTF-8"))),
    }
}

impl Source {
    /// Reads the PMI variables; `None` when there are none (a singleton run).
    fn from_env() -> io::Result<Option<Source>> {
        if std::env::var_os("PMI_FD").is_some() {
            // Like MPICH: rank 0 of 1 when the launcher gives only the socket.
            Ok(Some(Source::Fd {
                fd: env_int("PMI_FD", None)?,
                rank: env_int("PMI_RANK", Some(0))?,
                size: env_int("PMI_SIZE", Some(1))?,
            }))
        } else if let Some(addr) = std::env::var_os("PMI_PORT") {
            let addr = addr
                .into_string()
                .map_err(|_| invalid("PMI_PORT is not UTF-8".into()))?;
            Ok(Some(Source::Port {
                addr,
                id: env_int("PMI_ID", None)?,
            }))
        } else {
            Ok(None)
        }
    }
}

/// Takes ownership of the inherited PMI socket `fd` (once per process).
pub(crate) fn take_pmi_fd(fd: i32) -> io::Result<File> {
    if fd < 0 {
        return Err(invalid(format!("PMI_FD={fd} is not a file descriptor")));
    }
    // SAFETY: F_GETFD only queries the descriptor flags; an invalid fd yields -1/EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(invalid(format!(
            "PMI_FD={fd} is not an open file descriptor"
        )));
    }
    if PMI_FD_TAKEN.swap(true, Ordering::AcqRel) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("PMI_FD={fd} is already owned by another PmiClient"),
        ));
    }
    // Programs the rank starts must not inherit the launcher's socket.
    // SAFETY: fd is open (checked above); F_SETFD only changes its close-on-exec flag.
    unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
    // SAFETY: the launcher created this descriptor for this process's PMI client only, it is
    // open, and PMI_FD_TAKEN guarantees no other owner is created in this process.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

impl PmiClient {
    /// Connects from the environment: `PMI_FD` (+ `PMI_RANK`, `PMI_SIZE`), or `PMI_PORT`
    /// (`host:port`, TCP) + `PMI_ID`. `Ok(None)` when no PMI variable is set (a singleton run:
    /// rank 0 of 1). The fd named by `PMI_FD` is taken over (and set close-on-exec); a second
    /// call in the same process fails with `AlreadyExists`.
    pub fn from_env() -> io::Result<Option<PmiClient>> {
        match Source::from_env()? {
            None => Ok(None),
            Some(Source::Fd { fd, rank, size }) => {
                let stream = take_pmi_fd(fd)?;
                PmiClient::handshake(stream, Some((rank, size))).map(Some)
            }
            Some(Source::Port { addr, id }) => {
                let tcp = TcpStream::connect(addr.as_str()).map_err(|e| {
                    io::Error::new(e.kind(), format!("PMI_PORT={addr}: cannot connect: {e}"))
                })?;
                tcp.set_nodelay(true)?;
                let stream = File::from(OwnedFd::from(tcp));
                let mut lines = LineBuffer::new();
                let (rank, size) = port_initack(&stream, &mut lines, id)?;
                let mut c = PmiClient::new(stream, rank, size);
                c.lines = lines;
                c.init().map(|()| Some(c))
            }
        }
    }

    fn new(stream: File, rank: i32, size: i32) -> PmiClient {
        PmiClient {
            stream,
            lines: LineBuffer::new(),
            rank,
            size,
            appnum: 0,
            universe_size: size,
            kvsname: String::new(),
            key_max: MAX_KEY_LEN,
            value_max: MAX_VALUE_LEN,
            finalized: false,
        }
    }

    /// Runs the PMI-1 start-up exchange over an already connected stream.
    fn handshake(stream: File, rank_size: Option<(i32, i32)>) -> io::Result<PmiClient> {
        let (rank, size) = rank_size.unwrap_or((0, 1));
        let mut c = PmiClient::new(stream, rank, size);
        c.init()?;
        Ok(c)
    }

    fn init(&mut self) -> io::Result<()> {
        if self.size < 1 || self.rank < 0 || self.rank >= self.size {
            return Err(invalid(format!(
                "PMI rank {} is not within a job of size {}",
                self.rank, self.size
            )));
        }
        let r = self.request(
            Message::new("init")
                .arg("pmi_version", 1)
                .arg("pmi_subversion", 1),
            "response_to_init",
        )?;
        if let Some(v) = r.get_int("pmi_version") {
            if v != 1 {
                return Err(protocol(format!("PMI server answered version {v}, not 1")));
            }
        }
        let r = self.request(Message::new("get_maxes"), "maxes")?;
        let limit = |key: &str, ours: usize| match r.get_int(key) {
            Some(n) if n > 0 => (n as usize).min(ours),
            _ => ours,
        };
        self.key_max = limit("keylen_max", MAX_KEY_LEN);
        self.value_max = limit("vallen_max", MAX_VALUE_LEN);
        let r = self.request(Message::new("get_my_kvsname"), "my_kvsname")?;
        let kvsname = r.get("kvsname").unwrap_or_default();
        if kvsname.is_empty() || kvsname.len() > MAX_KVSNAME_LEN {
            return Err(protocol(format!(
                "PMI server gave a bad KVS name {kvsname:?}"
            )));
        }
        self.kvsname = kvsname.to_string();
        let r = self.request(Message::new("get_universe_size"), "universe_size")?;
        self.universe_size = int_arg(&r, "size")?;
        let r = self.request(Message::new("get_appnum"), "appnum")?;
        self.appnum = int_arg(&r, "appnum")?;
        Ok(())
    }

    /// This process's rank in the job (0-based).
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// The number of ranks in the job.
    pub fn size(&self) -> i32 {
        self.size
    }

    /// The application number (0 for the first or only executable of an MPMD launch).
    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    /// The universe size as the launcher reports it (Hydra says -1 when it sets no bound).
    pub fn universe_size(&self) -> i32 {
        self.universe_size
    }

    /// The name of the job's key-value space.
    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// Stores `key=value` in the job's key-value space; other ranks see it after the next
    /// [`Self::barrier`]. The key must be 1 to 64 bytes of printable ASCII without `=` or `\`;
    /// the value at most 1024 bytes of printable ASCII without space or `\` (see the module
    /// documentation); anything else is refused with `InvalidInput` before it is sent.
    pub fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.check_key(key)?;
        if value.len() > self.value_max {
            return Err(invalid(format!(
                "PMI value for {key:?} has {} bytes, over the server's limit of {}",
                value.len(),
                self.value_max
            )));
        }
        if !is_portable_value(value) {
            return Err(invalid(format!(
                "PMI value for {key:?} must be printable ASCII without space or backslash"
            )));
        }
        let msg = Message::new("put")
            .arg("kvsname", &self.kvsname)
            .arg("key", key)
            .arg("value", value);
        self.request(msg, "put_result").map(|_| ())
    }

    /// Waits until every rank of the job has entered the barrier; puts made before it are
    /// visible to all after it.
    pub fn barrier(&mut self) -> io::Result<()> {
        self.request(Message::new("barrier_in"), "barrier_out")
            .map(|_| ())
    }

    /// Reads `key` from the job's key-value space: `Ok(None)` when no rank put it (or it was
    /// put after the last barrier). A server that reports a missing key with a non-zero `rc`
    /// (Hydra does) cannot be told apart from other refusals, which also give `None`.
    pub fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        self.check_key(key)?;
        let msg = Message::new("get")
            .arg("kvsname", &self.kvsname)
            .arg("key", key);
        let r = self.exchange(msg, "get_result")?;
        let found = match r.get("found") {
            Some(f) => f.eq_ignore_ascii_case("true") && r.rc() == 0,
            None => r.rc() == 0,
        };
        Ok(if found {
            Some(r.get("value").unwrap_or_default().to_string())
        } else {
            None
        })
    }

    /// Tells the launcher this rank is done (`MPI_Finalize`): a later exit, whatever its
    /// status, no longer makes the launcher kill the job. Further requests fail.
    pub fn finalize(&mut self) -> io::Result<()> {
        self.request(Message::new("finalize"), "finalize_ack")?;
        self.finalized = true;
        Ok(())
    }

    /// Asks the launcher to kill the whole job, reporting `exit_code` and `message` (control
    /// characters become spaces; the message is cut to 1024 bytes). Returns once the request is
    /// sent; the caller should then exit with `exit_code` (the launcher kills it otherwise).
    pub fn abort(&mut self, exit_code: i32, message: &str) -> io::Result<()> {
        let mut text: String = message
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if text.len() > MAX_VALUE_LEN {
            let mut cut = MAX_VALUE_LEN;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let msg = Message::new("abort")
            .arg("exitcode", exit_code)
            .arg("message", text);
        self.send(&msg)
    }

    fn check_key(&self, key: &str) -> io::Result<()> {
        check_key(key).map_err(|e| invalid(e.to_string()))?;
        if key.len() > self.key_max {
            return Err(invalid(format!(
                "PMI key {key:?} is longer than the server's limit of {}",
                self.key_max
            )));
        }
        Ok(())
    }

    /// Sends `msg`, reads the response, checks it is `expect` with `rc` 0.
    fn request(&mut self, msg: Message, expect: &str) -> io::Result<Message> {
        let name = msg.cmd().to_string();
        let r = self.exchange(msg, expect)?;
        if r.rc() != 0 {
            return Err(io::Error::other(format!(
                "PMI {name} failed: rc={} {}",
                r.rc(),
                r.get("msg").unwrap_or_default()
            )));
        }
        Ok(r)
    }

    /// Sends `msg` and reads the response, checking only that it is `expect`.
    fn exchange(&mut self, msg: Message, expect: &str) -> io::Result<Message> {
        self.send(&msg)?;
        let r = read_message(&self.stream, &mut self.lines)?;
        if r.cmd() != expect {
            return Err(protocol(format!(
                "PMI server answered {} to {}, expected {expect}",
                r.cmd(),
                msg.cmd()
            )));
        }
        Ok(r)
    }

    fn send(&mut self, msg: &Message) -> io::Result<()> {
        if self.finalized {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "PMI request after finalize",
            ));
        }
        let line = msg.to_line()?;
        send_all(&self.stream, line.as_bytes())
    }
}

/// Writes all of `bytes` to the socket behind `stream` without raising SIGPIPE when the
/// launcher is gone (a C program linking hympi may not ignore SIGPIPE): the error comes back as
/// `BrokenPipe` instead. Falls back to `write` when the fd is not a socket.
pub(crate) fn send_all(mut stream: &File, mut bytes: &[u8]) -> io::Result<()> {
    let fd = stream.as_raw_fd();
    while !bytes.is_empty() {
        // SAFETY: fd is open for the lifetime of `stream`; the pointer and length describe the
        // live slice `bytes`.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOTSOCK) => return stream.write_all(bytes),
                _ => return Err(e),
            }
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Reads an integer argument a response must carry.
fn int_arg(r: &Message, key: &str) -> io::Result<i32> {
    r.get_int(key)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| protocol(format!("PMI {} response has no integer {key}", r.cmd())))
}

/// Reads the next message from `stream`, buffering any bytes beyond it in `lines`.
fn read_message(mut stream: &File, lines: &mut LineBuffer) -> io::Result<Message> {
    let mut buf = [0u8; 2048];
    loop {
        if let Some(line) = lines.next_line() {
            return Ok(Message::parse(&line?)?);
        }
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "PMI server closed the connection",
            ));
        }
        lines.extend(&buf[..n]);
    }
}

/// The `PMI_PORT` handshake: `initack pmiid=<id>`, then `initack` and the `set` lines.
fn port_initack(stream: &File, lines: &mut LineBuffer, id: i32) -> io::Result<(i32, i32)> {
    let line = Message::new("initack").arg("pmiid", id).to_line()?;
    send_all(stream, line.as_bytes())?;
    let r = read_message(stream, lines)?;
    if r.cmd() != "initack" || r.rc() != 0 {
        return Err(protocol(format!("PMI server answered {r} to initack")));
    }
    let (mut rank, mut size, mut debug) = (None, None, None);
    while rank.is_none() || size.is_none() || debug.is_none() {
        let r = read_message(stream, lines)?;
        if r.cmd() != "set" {
            return Err(protocol(format!("PMI server sent {r} during initack")));
        }
        for (k, v) in r.args() {
            let n: i32 = v
                .parse()
                .map_err(|_| protocol(format!("PMI set {k}={v:?} is not an integer")))?;
            match k.as_str() {
                "rank" => rank = Some(n),
                "size" => size = Some(n),
                "debug" => debug = Some(n),
                _ => {}
            }
        }
    }
    Ok((rank.unwrap_or(0), size.unwrap_or(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixStream;
    use std::thread;

    /// A one-client PMI server speaking Hydra 4.0's dialect (missing key: rc=-1).
    fn fake_server(sock: UnixStream, initack: bool) -> thread::JoinHandle<Vec<String>> {
        thread::spawn(move || {
            let mut out = sock.try_clone().unwrap();
            let mut seen = Vec::new();
            let mut kvs = HashMap::new();
            for line in BufReader::new(sock).lines() {
                let line = line.unwrap();
                seen.push(line.clone());
                let m = Message::parse(&line).unwrap();
                let reply = match m.cmd() {
                    "initack" if initack => {
                        "cmd=initack\ncmd=set size=3\ncmd=set rank=2\ncmd=set debug=0\n".into()
                    }
                    "init" => "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n".into(),
                    "get_maxes" => {
                        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n".into()
                    }
                    "get_my_kvsname" => "cmd=my_kvsname kvsname=kvs_7_0\n".into(),
                    "get_universe_size" => "cmd=universe_size size=-1\n".into(),
                    "get_appnum" => "cmd=appnum appnum=0\n".into(),
                    "put" => {
                        kvs.insert(
                            m.get("key").unwrap().to_string(),
                            m.get("value").unwrap().to_string(),
                        );
                        "cmd=put_result rc=0 msg=success\n".into()
                    }
                    "barrier_in" => "cmd=barrier_out\n".into(),
                    "get" => match kvs.get(m.get("key").unwrap()) {
                        Some(v) => format!("cmd=get_result rc=0 msg=success value={v}\n"),
                        None => "cmd=get_result rc=-1 msg=key_not_found value=unknown\n".into(),
                    },
                    "finalize" => "cmd=finalize_ack\n".into(),
                    "abort" => String::new(),
                    other => panic!("unexpected {other}"),
                };
                out.write_all(reply.as_bytes()).unwrap();
            }
            seen
        })
    }

    fn client_over(sock: UnixStream) -> PmiClient {
        let stream = File::from(OwnedFd::from(sock));
        PmiClient::handshake(stream, Some((1, 4))).unwrap()
    }

    #[test]
    fn fd_mode_session() {
        let (a, b) = UnixStream::pair().unwrap();
        let server = fake_server(b, false);
        let mut c = client_over(a);
        assert_eq!((c.rank(), c.size(), c.appnum()), (1, 4, 0));
        assert_eq!(c.universe_size(), -1);
        assert_eq!(c.kvsname(), "kvs_7_0");
        c.put("addr-1", "tcp://127.0.0.1:99").unwrap();
        c.barrier().unwrap();
        assert_eq!(
            c.get("addr-1").unwrap().as_deref(),
            Some("tcp://127.0.0.1:99")
        );
        assert_eq!(c.get("nokey").unwrap(), None);
        c.abort(3, "it\nbroke").unwrap();
        c.finalize().unwrap();
        assert!(c.barrier().is_err());
        drop(c);
        let seen = server.join().unwrap();
        assert_eq!(seen[0], "cmd=init pmi_version=1 pmi_subversion=1");
        assert!(seen.contains(&"cmd=abort exitcode=3 message=it\\ broke".to_string()));
        assert_eq!(seen.last().unwrap(), "cmd=finalize");
    }

    #[test]
    fn port_mode_handshake() {
        let (a, b) = UnixStream::pair().unwrap();
        let server = fake_server(b, true);
        let stream = File::from(OwnedFd::from(a));
        let mut lines = LineBuffer::new();
        let (rank, size) = port_initack(&stream, &mut lines, 2).unwrap();
        assert_eq!((rank, size), (2, 3));
        let mut c = PmiClient::new(stream, rank, size);
        c.lines = lines;
        c.init().unwrap();
        assert_eq!(c.kvsname(), "kvs_7_0");
        drop(c);
        assert_eq!(server.join().unwrap()[0], "cmd=initack pmiid=2");
    }

    #[test]
    fn put_refuses_what_would_not_survive() {
        let (a, b) = UnixStream::pair().unwrap();
        let _server = fake_server(b, false);
        let mut c = client_over(a);
        let kind = |r: io::Result<()>| r.unwrap_err().kind();
        assert_eq!(kind(c.put("k", "a b")), io::ErrorKind::InvalidInput);
        assert_eq!(kind(c.put("k", "a\\b")), io::ErrorKind::InvalidInput);
        assert_eq!(
            kind(c.put("k", &"x".repeat(MAX_VALUE_LEN + 1))),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(kind(c.put("a=b", "v")), io::ErrorKind::InvalidInput);
        assert_eq!(
            kind(c.put(&"k".repeat(MAX_KEY_LEN + 1), "v")),
            io::ErrorKind::InvalidInput
        );
        c.put("k", &"x".repeat(MAX_VALUE_LEN)).unwrap();
    }

    #[test]
    fn server_closing_is_an_error() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        let stream = File::from(OwnedFd::from(a));
        let err = PmiClient::handshake(stream, Some((0, 1))).unwrap_err();
        assert!(matches!(
            err.kind(),
            io::ErrorKind::UnexpectedEof | io::ErrorKind::BrokenPipe
        ));
    }

    #[test]
    fn rank_outside_job_is_refused() {
        let (a, _b) = UnixStream::pair().unwrap();
        let stream = File::from(OwnedFd::from(a));
        assert!(PmiClient::handshake(stream, Some((4, 4))).is_err());
    }
}
