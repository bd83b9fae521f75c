//! PMI-2 client: the start-up service as Slurm (`srun --mpi=pmi2`) and Hydra serve it over the
//! socket named by `PMI_FD`.
//!
//! The exchange: a PMI-1-style `init` asking for version 2.0, then `fullinit` (our rank, the
//! job id from `PMI_JOBID`) which answers rank, size and appnum, `job-getid`, and
//! `info-getjobattr universeSize`. The key-value space is `kvs-put`, `kvs-fence` (the barrier
//! that makes puts visible) and `kvs-get`; `finalize` and `abort isworld=TRUE` end. Framing and
//! parsing live in [`super::pmi2_wire`].
//!
//! Values must be portable: printable ASCII without space, backslash or `;` (Slurm stores the
//! bytes between `value=` and the next `;` and does not read the `;;` escape).

use std::fs::File;
use std::io::{self, Read};

use super::pmi::{env_int, send_all, take_pmi_fd};
use super::pmi2_wire::{Command, LENGTH_FIELD};
use super::pmi_wire::{check_key, is_portable_value, LineBuffer, Message, MAX_VALUE_LEN};

/// A connection to the process manager's PMI-2 server.
#[derive(Debug)]
pub struct Pmi2Client {
    stream: File,
    rank: i32,
    size: i32,
    appnum: i32,
    universe_size: i32,
    jobid: String,
    barriers: u64,
    finalized: bool,
}

fn protocol(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl Pmi2Client {
    /// Connects over the socket named by `PMI_FD` (taken over, set close-on-exec), using
    /// `PMI_RANK` (default 0) and `PMI_JOBID` (optional) for `fullinit`. `Ok(None)` when
    /// `PMI_FD` is not set.
    pub fn from_env() -> io::Result<Option<Pmi2Client>> {
        if std::env::var_os("PMI_FD").is_none() {
            return Ok(None);
        }
        let fd = env_int("PMI_FD", None)?;
        let rank = env_int("PMI_RANK", Some(0))?;
        let jobid = std::env::var("PMI_JOBID").ok();
        let stream = take_pmi_fd(fd)?;
        Pmi2Client::handshake(stream, rank, jobid.as_deref()).map(Some)
    }

    /// Runs the start-up exchange over a connected stream for rank `rank` of job `jobid`.
    fn handshake(stream: File, rank: i32, jobid: Option<&str>) -> io::Result<Pmi2Client> {
        let mut c = Pmi2Client {
            stream,
            rank,
            size: 1,
            appnum: 0,
            universe_size: 1,
            jobid: jobid.unwrap_or_default().to_string(),
            barriers: 0,
            finalized: false,
        };
        c.version_init()?;
        let mut full = Command::new("fullinit");
        if let Some(j) = jobid {
            full = full.arg("pmijobid", j);
        }
        let full = full.arg("pmirank", rank).arg("threaded", "FALSE");
        let r = c.request(full, "fullinit-response")?;
        let int = |key: &str| {
            r.get_int(key)
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| protocol(format!("PMI-2 fullinit-response has no integer {key}")))
        };
        c.rank = int("rank")?;
        c.size = int("size")?;
        // Slurm answers appnum=-1 (it does not track application numbers): one application.
        c.appnum = int("appnum").unwrap_or(0).max(0);
        if c.size < 1 || c.rank < 0 || c.rank >= c.size {
            return Err(invalid(format!(
                "PMI-2 rank {} is not within a job of size {}",
                c.rank, c.size
            )));
        }
        let r = c.request(Command::new("job-getid"), "job-getid-response")?;
        if let Some(j) = r.get("jobid") {
            c.jobid = j.to_string();
        }
        c.universe_size = match c.job_attr("universeSize")? {
            Some(v) => v.trim().parse().unwrap_or(c.size),
            None => c.size,
        };
        Ok(c)
    }

    /// The PMI-1-style line that selects version 2.0, and its answer.
    fn version_init(&mut self) -> io::Result<()> {
        let line = Message::new("init")
            .arg("pmi_version", 2)
            .arg("pmi_subversion", 0)
            .to_line()?;
        send_all(&self.stream, line.as_bytes())?;
        let mut lines = LineBuffer::new();
        let mut byte = [0u8; 1];
        // Byte by byte: the server sends nothing after this line until asked, and nothing of
        // the framed exchange may be swallowed here.
        let answer = loop {
            if let Some(l) = lines.next_line() {
                break Message::parse(&l?)?;
            }
            match (&self.stream).read(&mut byte) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "PMI server closed the connection",
                    ))
                }
                Ok(_) => lines.extend(&byte),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        if answer.cmd() != "response_to_init" || answer.rc() != 0 {
            return Err(protocol(format!(
                "PMI server refused version 2.0: {answer}"
            )));
        }
        match answer.get_int("pmi_version") {
            Some(2) => Ok(()),
            v => Err(protocol(format!(
                "PMI server answered version {v:?} to a request for 2.0"
            ))),
        }
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// The number of ranks in the job.
    pub fn size(&self) -> i32 {
        self.size
    }

    /// The application number (0 when the server does not track it).
    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    /// The universe size (the job size when the server gives none).
    pub fn universe_size(&self) -> i32 {
        self.universe_size
    }

    /// The job id the server gave (`job-getid`).
    pub fn jobid(&self) -> &str {
        &self.jobid
    }

    /// A job attribute (`info-getjobattr`), e.g. `PMI_process_mapping`; `None` when unknown.
    pub fn job_attr(&mut self, key: &str) -> io::Result<Option<String>> {
        let r = self.request(
            Command::new("info-getjobattr").arg("key", key),
            "info-getjobattr-response",
        )?;
        Ok(match r.get_bool("found") {
            Some(true) => Some(r.get("value").unwrap_or_default().to_string()),
            _ => None,
        })
    }

    /// Stores `key=value`; visible to every rank after the next [`Self::fence`]. Keys are 1 to
    /// 64 bytes of printable ASCII without `=`, `\` or `;`; values at most 1024 bytes of
    /// printable ASCII without space, `\` or `;`.
    pub fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        check_portable_key(key)?;
        if !is_portable_value(value) || value.contains(';') {
            return Err(invalid(format!(
                "PMI-2 value for {key:?} must be at most {MAX_VALUE_LEN} bytes of printable \
                 ASCII without space, backslash or ';'"
            )));
        }
        let put = Command::new("kvs-put").arg("key", key).arg("value", value);
        self.request(put, "kvs-put-response").map(|_| ())
    }

    /// Makes the puts made before it visible to every rank after it. Slurm answers once every
    /// rank has fenced; Hydra answers at once and holds each later `kvs-get` until every rank
    /// has fenced: a fence orders data, [`Self::barrier`] waits.
    pub fn fence(&mut self) -> io::Result<()> {
        self.request(Command::new("kvs-fence"), "kvs-fence-response")
            .map(|_| ())
    }

    /// Waits until every rank has entered the barrier (and makes earlier puts visible): a
    /// marker put, a fence, and a get of the next rank's marker, which no server answers
    /// before every rank has fenced.
    pub fn barrier(&mut self) -> io::Result<()> {
        self.barriers += 1;
        let key = |r: i32, n: u64| format!("hympi-barrier-{n}-{r}");
        if self.size > 1 {
            self.put(&key(self.rank, self.barriers), "1")?;
        }
        self.fence()?;
        if self.size > 1 {
            let next = (self.rank + 1) % self.size;
            if self.get(&key(next, self.barriers))?.is_none() {
                return Err(protocol(format!(
                    "PMI-2 barrier {}: rank {next}'s marker is missing after the fence",
                    self.barriers
                )));
            }
        }
        Ok(())
    }

    /// Reads `key` from the job's key-value space; `None` when no rank put it before the last
    /// fence.
    pub fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        check_portable_key(key)?;
        let get = Command::new("kvs-get")
            .arg("jobid", &self.jobid)
            .arg("srcid", -1)
            .arg("key", key);
        let r = self.exchange(get, "kvs-get-response")?;
        let found = r.rc() == 0 && r.get_bool("found").unwrap_or(r.get("value").is_some());
        Ok(found.then(|| r.get("value").unwrap_or_default().to_string()))
    }

    /// Tells the server this rank is done; further requests fail.
    pub fn finalize(&mut self) -> io::Result<()> {
        self.request(Command::new("finalize"), "finalize-response")?;
        self.finalized = true;
        Ok(())
    }

    /// Asks the server to end the whole job with `message` (no answer comes). The PMI-2
    /// `abort` carries no exit code: the caller exits with it.
    pub fn abort(&mut self, exit_code: i32, message: &str) -> io::Result<()> {
        let text: String = format!("exit code {exit_code}: {message}")
            .chars()
            .map(|c| if c.is_control() || c == ';' { ' ' } else { c })
            .take(MAX_VALUE_LEN)
            .collect();
        let abort = Command::new("abort")
            .arg("isworld", "TRUE")
            .arg("msg", text);
        self.send(&abort)
    }

    /// Sends `cmd`, reads the answer, checks it is `expect` with `rc` 0.
    fn request(&mut self, cmd: Command, expect: &str) -> io::Result<Command> {
        let name = cmd.cmd().to_string();
        let r = self.exchange(cmd, expect)?;
        if r.rc() != 0 {
            return Err(io::Error::other(format!(
                "PMI-2 {name} failed: rc={} {}",
                r.rc(),
                r.get("errmsg").unwrap_or_default()
            )));
        }
        Ok(r)
    }

    /// Sends `cmd` and reads the answer, checking only its name.
    fn exchange(&mut self, cmd: Command, expect: &str) -> io::Result<Command> {
        self.send(&cmd)?;
        let r = self.read_command()?;
        if r.cmd() != expect {
            return Err(protocol(format!(
                "PMI-2 server answered {} to {}, expected {expect}",
                r.cmd(),
                cmd.cmd()
            )));
        }
        Ok(r)
    }

    fn send(&mut self, cmd: &Command) -> io::Result<()> {
        if self.finalized {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "PMI-2 request after finalize",
            ));
        }
        send_all(&self.stream, &cmd.frame()?)
    }

    /// Reads one framed command.
    fn read_command(&mut self) -> io::Result<Command> {
        let mut field = [0u8; LENGTH_FIELD];
        read_exact(&self.stream, &mut field)?;
        let len = Command::parse_length(&field)?;
        let mut body = vec![0u8; len];
        read_exact(&self.stream, &mut body)?;
        let body =
            String::from_utf8(body).map_err(|_| protocol("PMI-2 body is not UTF-8".into()))?;
        Command::parse(&body)
    }
}

/// Keys as the PMI-1 check takes them, and without `;`.
fn check_portable_key(key: &str) -> io::Result<()> {
    check_key(key).map_err(|e| invalid(e.to_string()))?;
    if key.contains(';') {
        return Err(invalid(format!("PMI-2 key {key:?} holds ';'")));
    }
    Ok(())
}

/// `read_exact` that names a closed server.
fn read_exact(mut stream: &File, buf: &mut [u8]) -> io::Result<()> {
    stream.read_exact(buf).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            io::Error::new(e.kind(), "PMI server closed the connection")
        } else {
            e
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io::Write;
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    use std::thread;

    /// A one-client PMI-2 server answering like Slurm's `mpi/pmi2` plugin.
    fn fake_server(mut sock: UnixStream) -> thread::JoinHandle<Vec<String>> {
        thread::spawn(move || {
            let mut seen = Vec::new();
            let mut line = Vec::new();
            let mut b = [0u8; 1];
            while b[0] != b'\n' {
                sock.read_exact(&mut b).unwrap();
                line.push(b[0]);
            }
            seen.push(String::from_utf8(line).unwrap());
            sock.write_all(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n")
                .unwrap();
            let mut kvs = HashMap::new();
            loop {
                let mut field = [0u8; LENGTH_FIELD];
                if sock.read_exact(&mut field).is_err() {
                    break;
                }
                let mut body = vec![0u8; Command::parse_length(&field).unwrap()];
                sock.read_exact(&mut body).unwrap();
                let body = String::from_utf8(body).unwrap();
                seen.push(body.clone());
                let c = Command::parse(&body).unwrap();
                let reply = match c.cmd() {
                    "fullinit" => Command::new("fullinit-response")
                        .arg("rc", 0)
                        .arg("pmi-version", 2)
                        .arg("pmi-subversion", 0)
                        .arg("rank", c.get("pmirank").unwrap())
                        .arg("size", 4)
                        .arg("appnum", -1)
                        .arg("debugged", "FALSE")
                        .arg("pmiverbose", "FALSE"),
                    "job-getid" => Command::new("job-getid-response")
                        .arg("rc", 0)
                        .arg("jobid", "7.0"),
                    "info-getjobattr" => Command::new("info-getjobattr-response")
                        .arg("rc", 0)
                        .arg("found", "TRUE")
                        .arg("value", 6),
                    "kvs-put" => {
                        kvs.insert(
                            c.get("key").unwrap().to_string(),
                            c.get("value").unwrap().to_string(),
                        );
                        Command::new("kvs-put-response").arg("rc", 0)
                    }
                    "kvs-fence" => Command::new("kvs-fence-response").arg("rc", 0),
                    // The other ranks' barrier markers, as if they had put them.
                    "kvs-get" if c.get("key").unwrap().starts_with("hympi-barrier-") => {
                        Command::new("kvs-get-response")
                            .arg("rc", 0)
                            .arg("found", "TRUE")
                            .arg("value", 1)
                    }
                    "kvs-get" => match kvs.get(c.get("key").unwrap()) {
                        Some(v) => Command::new("kvs-get-response")
                            .arg("rc", 0)
                            .arg("found", "TRUE")
                            .arg("value", v),
                        None => Command::new("kvs-get-response")
                            .arg("rc", 0)
                            .arg("found", "FALSE"),
                    },
                    "finalize" => Command::new("finalize-response").arg("rc", 0),
                    "abort" => continue,
                    other => panic!("unexpected {other}"),
                };
                sock.write_all(&reply.frame().unwrap()).unwrap();
            }
            seen
        })
    }

    #[test]
    fn slurm_style_session() {
        let (a, b) = UnixStream::pair().unwrap();
        let server = fake_server(b);
        let stream = File::from(OwnedFd::from(a));
        let mut c = Pmi2Client::handshake(stream, 2, Some("7.0")).unwrap();
        assert_eq!((c.rank(), c.size(), c.appnum()), (2, 4, 0));
        assert_eq!((c.universe_size(), c.jobid()), (6, "7.0"));
        c.put("addr-2", "tcp://127.0.0.1:99").unwrap();
        c.fence().unwrap();
        c.barrier().unwrap();
        assert_eq!(
            c.get("addr-2").unwrap().as_deref(),
            Some("tcp://127.0.0.1:99")
        );
        assert_eq!(c.get("nokey").unwrap(), None);
        assert!(c.put("k", "a;b").is_err());
        assert!(c.put("k", "a b").is_err());
        c.abort(3, "it\nbroke; badly").unwrap();
        c.finalize().unwrap();
        assert!(c.fence().is_err());
        drop(c);
        let seen = server.join().unwrap();
        assert_eq!(seen[0], "cmd=init pmi_version=2 pmi_subversion=0\n");
        assert_eq!(
            seen[1],
            "cmd=fullinit;pmijobid=7.0;pmirank=2;threaded=FALSE;"
        );
        assert!(seen.contains(&"cmd=kvs-get;jobid=7.0;srcid=-1;key=nokey;".to_string()));
        assert!(seen.contains(&"cmd=kvs-put;key=hympi-barrier-1-2;value=1;".to_string()));
        assert!(seen.contains(&"cmd=kvs-get;jobid=7.0;srcid=-1;key=hympi-barrier-1-3;".to_string()));
        assert!(
            seen.contains(&"cmd=abort;isworld=TRUE;msg=exit code 3: it broke  badly;".to_string())
        );
        assert_eq!(seen.last().unwrap(), "cmd=finalize;");
    }

    #[test]
    fn version_refusal_is_an_error() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let server = thread::spawn(move || {
            let mut buf = [0u8; 64];
            let _ = b.read(&mut buf).unwrap();
            b.write_all(b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")
                .unwrap();
        });
        let stream = File::from(OwnedFd::from(a));
        let err = Pmi2Client::handshake(stream, 0, None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        server.join().unwrap();
    }

    #[test]
    fn server_closing_is_an_error() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        let stream = File::from(OwnedFd::from(a));
        let err = Pmi2Client::handshake(stream, 0, None).unwrap_err();
        assert!(matches!(
            err.kind(),
            io::ErrorKind::UnexpectedEof | io::ErrorKind::BrokenPipe
        ));
    }
}
