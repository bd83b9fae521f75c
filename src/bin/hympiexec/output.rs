//! Relays a rank's stdout or stderr to the launcher's, whole lines at a time, so lines of
//! different ranks never interleave mid-line; with `--tag-output` each line gets `[rank] `.

use std::io::{self, Write};

/// A line longer than this is written out in pieces (without waiting for its newline).
const MAX_PENDING: usize = 64 * 1024;

/// Which of the launcher's streams a relay writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// The launcher's stdout.
    Stdout,
    /// The launcher's stderr.
    Stderr,
}

/// Line-buffered relay of one rank's stream.
#[derive(Debug)]
pub struct Relay {
    prefix: Option<String>,
    sink: Sink,
    pending: Vec<u8>,
    /// True when the last bytes written ended mid-line (a piece of an overlong line).
    mid_line: bool,
}

impl Relay {
    /// A relay for `rank` writing to `sink`; `tag` adds the `[rank] ` prefix.
    pub fn new(rank: usize, sink: Sink, tag: bool) -> Relay {
        Relay {
            prefix: tag.then(|| format!("[{rank}] ")),
            sink,
            pending: Vec::new(),
            mid_line: false,
        }
    }

    /// The stream this relay writes to.
    pub fn sink(&self) -> Sink {
        self.sink
    }

    /// Takes bytes read from the rank; returns the complete lines (prefixed) to write now.
    pub fn feed(&mut self, data: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(data);
        let Some(last_nl) = self.pending.iter().rposition(|&b| b == b'\n') else {
            if self.pending.len() > MAX_PENDING {
                let chunk = std::mem::take(&mut self.pending);
                return self.render(&chunk, false);
            }
            return Vec::new();
        };
        let rest = self.pending.split_off(last_nl + 1);
        let lines = std::mem::replace(&mut self.pending, rest);
        self.render(&lines, true)
    }

    /// At end of stream: returns what is left, ended with a newline.
    pub fn finish(&mut self) -> Vec<u8> {
        if self.pending.is_empty() {
            return Vec::new();
        }
        let mut rest = std::mem::take(&mut self.pending);
        rest.push(b'\n');
        self.render(&rest, true)
    }

    /// Adds prefixes to `bytes` (whole lines when `complete`, else a piece of a long line).
    fn render(&mut self, bytes: &[u8], complete: bool) -> Vec<u8> {
        let Some(prefix) = &self.prefix else {
            self.mid_line = !complete;
            return bytes.to_vec();
        };
        let mut out = Vec::with_capacity(bytes.len() + 8 * prefix.len());
        let mut at_start = !self.mid_line;
        for &b in bytes {
            if at_start {
                out.extend_from_slice(prefix.as_bytes());
            }
            out.push(b);
            at_start = b == b'\n';
        }
        self.mid_line = !complete;
        out
    }
}

/// Writes `bytes` to `sink` in one call, so that relays of other ranks cannot cut in. Returns
/// false when the reader of `sink` is gone (EPIPE, as in `hympiexec ... | head`); other errors
/// are ignored: the job must still be supervised.
pub fn write(sink: Sink, bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return true;
    }
    let r = match sink {
        Sink::Stdout => write_flush(&mut io::stdout().lock(), bytes),
        Sink::Stderr => write_flush(&mut io::stderr().lock(), bytes),
    };
    !matches!(r, Err(e) if e.kind() == io::ErrorKind::BrokenPipe)
}

/// Reads what is available on a rank's stream `file` and passes it through `relay`: the bytes
/// to write now and whether the stream ended; `None` when nothing can be read yet.
pub fn pump(file: &mut std::fs::File, relay: &mut Relay) -> Option<(Vec<u8>, bool)> {
    use std::io::Read;
    let mut buf = vec![0u8; 64 * 1024];
    match file.read(&mut buf) {
        Ok(0) => Some((relay.finish(), true)),
        Ok(n) => Some((relay.feed(&buf[..n]), false)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            None
        }
        Err(_) => Some((relay.finish(), true)),
    }
}

/// Writes `pending` to the non-blocking `file` as far as it accepts, removing what was
/// written; false when the descriptor failed (the peer is gone).
pub fn write_pending(file: &mut std::fs::File, pending: &mut Vec<u8>) -> bool {
    while !pending.is_empty() {
        match file.write(pending) {
            Ok(n) => {
                pending.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(_) => return false,
        }
    }
    true
}

fn write_flush(w: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    w.write_all(bytes)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_partial_lines_and_tags_each_line() {
        let mut r = Relay::new(3, Sink::Stdout, true);
        assert_eq!(r.feed(b"he"), b"");
        assert_eq!(r.feed(b"llo\nwor"), b"[3] hello\n");
        assert_eq!(r.feed(b"ld\n\nx\ny"), b"[3] world\n[3] \n[3] x\n");
        assert_eq!(r.finish(), b"[3] y\n");
        assert_eq!(r.finish(), b"");
    }

    #[test]
    fn untagged_passes_lines_through() {
        let mut r = Relay::new(0, Sink::Stderr, false);
        assert_eq!(r.sink(), Sink::Stderr);
        assert_eq!(r.feed(b"a\nb"), b"a\n");
        assert_eq!(r.finish(), b"b\n");
    }

    #[test]
    fn overlong_line_is_cut_with_one_prefix() {
        let mut r = Relay::new(1, Sink::Stdout, true);
        let long = vec![b'x'; MAX_PENDING + 1];
        let first = r.feed(&long);
        assert_eq!(&first[..4], b"[1] ");
        assert_eq!(first.len(), MAX_PENDING + 5);
        // The rest of the same line gets no second prefix; the next line does.
        assert_eq!(r.feed(b"yz\nnext\n"), b"yz\n[1] next\n");
    }
}
