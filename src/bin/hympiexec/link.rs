//! A non-blocking, line-oriented TCP connection between the launcher and a proxy, with the
//! times of the last bytes heard and sent (for heartbeats).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Longest accepted line (a start message carries the whole environment).
const MAX_LINE: usize = 16 << 20;

/// One end of a launcher-proxy connection.
pub struct Link {
    stream: TcpStream,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    /// When bytes last arrived.
    pub heard: Instant,
    /// When bytes were last queued.
    pub sent: Instant,
}

/// What one read brought.
pub struct Received {
    /// Complete lines, without their newlines.
    pub lines: Vec<String>,
    /// The other side closed the connection (or it failed).
    pub closed: bool,
}

impl Link {
    /// Wraps a connected stream (made non-blocking, Nagle off).
    pub fn new(stream: TcpStream) -> io::Result<Link> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        let now = Instant::now();
        Ok(Link {
            stream,
            inbuf: Vec::new(),
            out: Vec::new(),
            heard: now,
            sent: now,
        })
    }

    /// The descriptor to poll.
    pub fn fd(&self) -> i32 {
        self.stream.as_raw_fd()
    }

    /// True when queued bytes wait for the socket.
    pub fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// Queues one encoded line.
    pub fn queue(&mut self, line: &str) {
        self.out.extend_from_slice(line.as_bytes());
        self.sent = Instant::now();
    }

    /// Reads what is available.
    pub fn receive(&mut self) -> Received {
        let mut closed = false;
        let mut buf = [0u8; 64 * 1024];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    self.heard = Instant::now();
                    self.inbuf.extend_from_slice(&buf[..n]);
                    if self.inbuf.len() > MAX_LINE && !self.inbuf.contains(&b'\n') {
                        closed = true;
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        let mut lines = Vec::new();
        while let Some(nl) = self.inbuf.iter().position(|&b| b == b'\n') {
            let rest = self.inbuf.split_off(nl + 1);
            let mut line = std::mem::replace(&mut self.inbuf, rest);
            line.pop();
            lines.push(String::from_utf8_lossy(&line).into_owned());
        }
        Received { lines, closed }
    }

    /// Writes queued bytes as far as the socket takes them; an error means the link is gone.
    pub fn flush(&mut self) -> io::Result<()> {
        while !self.out.is_empty() {
            match self.stream.write(&self.out) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes everything queued, waiting up to `limit` (at the end of a proxy's life).
    pub fn flush_all(&mut self, limit: std::time::Duration) {
        let until = Instant::now() + limit;
        while self.wants_write() && Instant::now() < until {
            if self.flush().is_err() {
                return;
            }
            if self.wants_write() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}
