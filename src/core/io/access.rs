//! Independent data access: moving the bytes of a user buffer to and from the file segments
//! of a view. Noncontiguous file access is done by data sieving (ROMIO's design): segments
//! close together are served by one read of their whole span, and writes by a locked
//! read-modify-write of the span, so a strided access costs a few large system calls
//! instead of one per segment. Every write holds an exclusive byte-range lock on the span it
//! touches, so a sieving write never puts back stale bytes over another rank's data.

use super::datarep;
use super::errno::io_error;
use super::view::View;
use crate::core::datatype::Layout;
use crate::core::error::MpiResult;
use crate::platform::file_lock::RangeLock;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Data sieving and buffering hints of an open file (ROMIO's names).
#[derive(Clone, Debug)]
pub struct Sieve {
    /// `romio_ds_read`: sieve noncontiguous reads.
    pub read: bool,
    /// `romio_ds_write`: sieve noncontiguous writes.
    pub write: bool,
    /// `ind_rd_buffer_size`: largest span one sieving read covers.
    pub read_buffer: usize,
    /// `ind_wr_buffer_size`: largest span one sieving write covers.
    pub write_buffer: usize,
}

impl Default for Sieve {
    fn default() -> Sieve {
        Sieve {
            read: true,
            write: true,
            read_buffer: 4 << 20,
            write_buffer: 512 << 10,
        }
    }
}

/// The memory side of an access: `count` elements of a datatype at an address.
#[derive(Clone, Debug)]
pub enum Mem {
    /// One contiguous block.
    Contig {
        /// Address of the first data byte.
        addr: usize,
        /// Bytes.
        len: usize,
    },
    /// A datatype with holes.
    Layout {
        /// The buffer address.
        base: usize,
        /// The type and count.
        layout: Layout,
    },
}

impl Mem {
    /// Data bytes.
    pub fn bytes(&self) -> usize {
        match self {
            Mem::Contig { len, .. } => *len,
            Mem::Layout { layout, .. } => layout.bytes(),
        }
    }
}

/// What an access needs of an open file.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// The open file.
    pub file: &'a File,
    /// Its path (for messages).
    pub path: &'a Path,
    /// The view.
    pub view: &'a View,
    /// Atomic mode: the whole access holds a lock on its span.
    pub atomic: bool,
    /// The file was opened for reading too (sieving writes read the span).
    pub readable: bool,
    /// Sieving hints.
    pub sieve: &'a Sieve,
    /// Writes take byte-range locks: some rank's view has holes, so a sieving write (a
    /// read-modify-write of a span) may run beside this one.
    pub lock_writes: bool,
}

pub use super::datarep::Elements;

/// Copies the packed data of `mem` out of user memory.
///
/// # Safety
/// `mem` must describe readable memory (the C caller's buffer).
pub unsafe fn gather_mem(mem: &Mem) -> Vec<u8> {
    match mem {
        Mem::Contig { addr, len } => {
            // SAFETY: caller guarantee: `len` readable bytes at `addr`.
            unsafe { std::slice::from_raw_parts(*addr as *const u8, *len) }.to_vec()
        }
        Mem::Layout { base, layout } => {
            let mut v = vec![0u8; layout.bytes()];
            // SAFETY: caller guarantee: the layout's segments at `base` are readable.
            unsafe { layout.pack(*base, 0, &mut v) };
            v
        }
    }
}

/// Stores the first `data.len()` packed bytes of `mem` into user memory.
///
/// # Safety
/// `mem` must describe writable memory (the C caller's buffer).
pub unsafe fn scatter_mem(mem: &Mem, data: &[u8]) {
    match mem {
        Mem::Contig { addr, .. } => {
            // SAFETY: caller guarantee: at least `data.len()` writable bytes at `addr`.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), *addr as *mut u8, data.len()) }
        }
        // SAFETY: caller guarantee: the layout's segments at `base` are writable.
        Mem::Layout { base, layout } => unsafe { layout.unpack(*base, 0, data) },
    }
}

/// Splits segments into runs whose span is at most `max` bytes (each run at least one
/// segment), as index ranges.
fn runs(segs: &[(u64, usize)], max: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < segs.len() {
        let start = segs[i].0;
        let mut j = i + 1;
        while j < segs.len() && segs[j].0 + segs[j].1 as u64 - start <= max as u64 {
            j += 1;
        }
        out.push(i..j);
        i = j;
    }
    out
}

fn span(segs: &[(u64, usize)]) -> (u64, u64) {
    let lo = segs.first().map_or(0, |s| s.0);
    let hi = segs.iter().map(|s| s.0 + s.1 as u64).max().unwrap_or(lo);
    (lo, hi)
}

/// Segments at least this long (on average) are written and read one system call each:
/// sieving them would move the holes too for little saving in calls.
pub const SIEVE_SEGMENT_MAX: usize = 8 << 10;

/// Whether an access of `segs` is worth sieving.
fn worth_sieving(segs: &[(u64, usize)]) -> bool {
    segs.len() > 1 && segs.iter().map(|s| s.1).sum::<usize>() / segs.len() < SIEVE_SEGMENT_MAX
}

/// Writes `data` (packed, in view order) to segments `segs`.
fn write_segments(t: &Target, segs: &[(u64, usize)], data: &[u8]) -> std::io::Result<()> {
    let sieve = t.sieve.write && t.readable && worth_sieving(segs);
    let max = if sieve { t.sieve.write_buffer } else { 0 };
    let mut at = 0usize;
    let mut buf = Vec::new();
    for run in runs(segs, max) {
        let s = &segs[run];
        let (lo, hi) = span(s);
        let _lock = if t.atomic || !t.lock_writes {
            None
        } else {
            Some(RangeLock::take(t.file, lo, hi - lo, true)?)
        };
        if s.len() == 1 {
            t.file.write_all_at(&data[at..at + s[0].1], s[0].0)?;
            at += s[0].1;
            continue;
        }
        buf.clear();
        buf.resize((hi - lo) as usize, 0);
        // Bytes past the end of the file stay zero; the holes below the last segment are
        // written back as they were.
        read_full(t.file, &mut buf, lo)?;
        for &(off, len) in s {
            let k = (off - lo) as usize;
            buf[k..k + len].copy_from_slice(&data[at..at + len]);
            at += len;
        }
        t.file.write_all_at(&buf, lo)?;
    }
    Ok(())
}

/// Reads into `buf` from `off` until it is full or the file ends; returns bytes read.
fn read_full(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], off + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads segments `segs` into `out` (packed, in view order); returns how many bytes of the
/// stream were read before the end of the file.
fn read_segments(t: &Target, segs: &[(u64, usize)], out: &mut [u8]) -> std::io::Result<usize> {
    let max = if t.sieve.read && worth_sieving(segs) {
        t.sieve.read_buffer
    } else {
        0
    };
    let mut at = 0usize;
    let mut buf = Vec::new();
    for run in runs(segs, max) {
        let s = &segs[run];
        if s.len() == 1 {
            let (off, len) = s[0];
            let n = read_full(t.file, &mut out[at..at + len], off)?;
            at += n;
            if n < len {
                return Ok(at);
            }
            continue;
        }
        let (lo, hi) = span(s);
        buf.resize((hi - lo) as usize, 0);
        let n = read_full(t.file, &mut buf, lo)? as u64;
        for &(off, len) in s {
            let k = off - lo;
            let avail = n.saturating_sub(k).min(len as u64) as usize;
            out[at..at + avail].copy_from_slice(&buf[k as usize..k as usize + avail]);
            at += avail;
            if avail < len {
                return Ok(at);
            }
        }
    }
    Ok(at)
}

/// Writes the buffer `mem` at view data byte `pos`; returns the bytes written.
///
/// # Safety
/// `mem` must describe readable memory (the C caller's buffer).
pub unsafe fn write(t: &Target, pos: u64, mem: &Mem, el: &Elements) -> MpiResult<u64> {
    let n = mem.bytes();
    if n == 0 {
        return Ok(0);
    }
    let rep = t.view.datarep;
    let owned;
    let data: &[u8] = match mem {
        // SAFETY: caller guarantee: `len` readable bytes at `addr`, unchanged meanwhile.
        Mem::Contig { addr, len } if !rep.converts() => unsafe {
            std::slice::from_raw_parts(*addr as *const u8, *len)
        },
        _ => {
            // SAFETY: forwarded caller guarantee.
            owned = unsafe { datarep::to_file(rep, mem, el)? };
            &owned
        }
    };
    let segs = t.view.segments(pos, pos + n as u64);
    let (lo, hi) = span(&segs);
    let go = || -> std::io::Result<()> {
        let _lock = if t.atomic {
            Some(RangeLock::take(t.file, lo, hi - lo, true)?)
        } else {
            None
        };
        write_segments(t, &segs, data)
    };
    go().map_err(|e| io_error(&e, "write failed", t.path))?;
    Ok(n as u64)
}

/// Reads into the buffer `mem` from view data byte `pos`; returns the bytes read (fewer than
/// the buffer holds at the end of the file).
///
/// # Safety
/// `mem` must describe writable memory (the C caller's buffer).
pub unsafe fn read(t: &Target, pos: u64, mem: &Mem, el: &Elements) -> MpiResult<u64> {
    let n = mem.bytes();
    if n == 0 {
        return Ok(0);
    }
    let segs = t.view.segments(pos, pos + n as u64);
    let (lo, hi) = span(&segs);
    let go = |data: &mut [u8]| -> std::io::Result<usize> {
        let _lock = if t.atomic {
            Some(RangeLock::take(t.file, lo, hi - lo, false)?)
        } else {
            None
        };
        read_segments(t, &segs, data)
    };
    let rep = t.view.datarep;
    if let (Mem::Contig { addr, len }, false) = (mem, rep.converts()) {
        // SAFETY: caller guarantee: `len` writable bytes at `addr`, untouched meanwhile.
        let user = unsafe { std::slice::from_raw_parts_mut(*addr as *mut u8, *len) };
        let got = go(user).map_err(|e| io_error(&e, "read failed", t.path))?;
        return Ok(got as u64);
    }
    let mut data = vec![0u8; datarep::file_bytes(rep, el)?];
    let got = go(&mut data).map_err(|e| io_error(&e, "read failed", t.path))?;
    data.truncate(got);
    // SAFETY: forwarded caller guarantee.
    Ok(unsafe { datarep::from_file(rep, &mut data, mem, el)? } as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_respect_the_span_limit() {
        let segs = [(0, 4), (8, 4), (100, 4), (104, 4), (1000, 8)];
        assert_eq!(runs(&segs, 16), vec![0..2, 2..4, 4..5]);
        assert_eq!(runs(&segs, 0), vec![0..1, 1..2, 2..3, 3..4, 4..5]);
        assert_eq!(runs(&segs, 1 << 20), vec![0..5]);
    }

    #[test]
    fn sieved_and_plain_paths_agree() {
        let path = std::env::temp_dir().join(format!("hympi-sieve-{}", std::process::id()));
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all_at(&[0xEEu8; 64], 0).unwrap();
        let view = View::default();
        let segs = [(2u64, 3usize), (10, 2), (40, 4), (70, 2)];
        let data: Vec<u8> = (1..=11).collect();
        for sieve in [
            Sieve::default(),
            Sieve {
                read: false,
                write: false,
                ..Sieve::default()
            },
        ] {
            let t = Target {
                file: &f,
                path: &path,
                view: &view,
                atomic: false,
                readable: true,
                sieve: &sieve,
                lock_writes: true,
            };
            write_segments(&t, &segs, &data).unwrap();
            let mut back = vec![0u8; 11];
            let got = read_segments(&t, &segs, &mut back).unwrap();
            // The last segment is past the old end (64): written, so the file grew.
            assert_eq!((got, &back), (11, &data));
            let mut all = vec![0u8; 72];
            assert_eq!(read_full(&f, &mut all, 0).unwrap(), 72);
            assert_eq!(all[0..2], [0xEE, 0xEE], "holes keep their bytes");
            assert_eq!(all[5..10], [0xEE; 5]);
            assert_eq!(all[64..70], [0; 6], "a gap past the old end reads as zeros");
            f.set_len(64).unwrap();
        }
        // A read past the end of the file stops at the end.
        let sieve = Sieve::default();
        let t = Target {
            file: &f,
            path: &path,
            view: &view,
            atomic: false,
            readable: true,
            sieve: &sieve,
            lock_writes: true,
        };
        let mut back = vec![0u8; 11];
        assert_eq!(read_segments(&t, &segs, &mut back).unwrap(), 9);
        std::fs::remove_file(&path).unwrap();
    }
}
