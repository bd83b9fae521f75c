//! Collective access by two-phase I/O (ROMIO's collective buffering): the file range the
//! ranks touch together is cut into one domain per aggregator (one rank per node by default,
//! `cb_nodes` overrides; domains aligned to `striping_unit`), and each aggregator moves its
//! domain in rounds of `cb_buffer_size` bytes. In a write round every rank sends each
//! aggregator the pieces of its data that fall in the aggregator's window; the aggregator
//! fills its buffer (reading the window first only when the pieces leave holes) and writes
//! it with one call. A read round runs the other way. When the ranks' file ranges do not
//! interleave, every rank accesses its own range directly instead (`automatic` mode).

use super::access::{self, Elements, Mem, Target};
use super::datarep;
use super::errno::io_error;
use super::hints::{Hints, Switch};
use crate::core::error::MpiResult;
use crate::core::objects::team::{self, Combine, Round, Team};
use crate::core::runtime;
use crate::platform::file_lock::RangeLock;
use std::os::unix::fs::FileExt;

/// In automatic mode, collective access runs two-phase only when the ranks' pieces average
/// fewer bytes than this; larger pieces are accessed directly, one system call each.
pub const CB_SEGMENT_MAX: u64 = 16 << 10;

/// A piece of a rank's access inside one aggregator window.
#[derive(Clone, Copy, Debug)]
struct Piece {
    /// File offset.
    off: u64,
    /// Bytes.
    len: usize,
    /// Where its bytes are in the rank's packed stream.
    at: usize,
}

/// Which ranks aggregate: the first rank of every node, then the second, ..., `want` of them.
fn aggregators(nodes: &[u32], want: Option<usize>) -> Vec<i32> {
    let mut distinct: Vec<u32> = Vec::new();
    for &n in nodes {
        if !distinct.contains(&n) {
            distinct.push(n);
        }
    }
    let want = want.unwrap_or(distinct.len()).clamp(1, nodes.len());
    let mut picked = Vec::with_capacity(want);
    let mut k = 0;
    while picked.len() < want {
        for &d in &distinct {
            if let Some(r) = nodes.iter().enumerate().filter(|(_, &n)| n == d).nth(k) {
                if picked.len() < want {
                    picked.push(r.0 as i32);
                }
            }
        }
        k += 1;
    }
    picked.sort_unstable();
    picked
}

/// The pieces of `segs` (with their stream offsets `at`) inside `[lo, hi)`, advancing
/// `cursor` past segments that end at or before `hi`.
fn pieces_in(
    segs: &[(u64, usize)],
    at: &[usize],
    cursor: &mut usize,
    lo: u64,
    hi: u64,
) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut i = *cursor;
    while i < segs.len() && segs[i].0 < hi {
        let (off, len) = segs[i];
        let end = off + len as u64;
        let a = off.max(lo);
        let b = end.min(hi);
        if a < b {
            out.push(Piece {
                off: a,
                len: (b - a) as usize,
                at: at[i] + (a - off) as usize,
            });
        }
        if end <= hi {
            *cursor = i + 1;
        }
        i += 1;
    }
    out
}

fn header(p: &[Piece]) -> Vec<u8> {
    p.iter()
        .flat_map(|x| [x.off, x.len as u64])
        .flat_map(|w| w.to_ne_bytes())
        .collect()
}

fn parse_header(b: &[u8]) -> Vec<(u64, usize)> {
    team::words(b)
        .chunks_exact(2)
        .map(|w| (w[0], w[1] as usize))
        .collect()
}

/// Posts the sends and receives of one exchange and waits for all of them.
pub(super) fn exchange(
    comm: u32,
    tag: i32,
    sends: &[(i32, Vec<u8>)],
    recvs: &mut [(i32, Vec<u8>)],
) -> MpiResult<()> {
    let ids = runtime::with(|rt| {
        let mut ids = Vec::with_capacity(sends.len() + recvs.len());
        for (src, buf) in recvs.iter_mut() {
            ids.push(team::post_recv(rt, comm, *src, tag, buf)?);
        }
        for (dest, data) in sends {
            ids.push(team::post_send(rt, comm, *dest, tag, data)?);
        }
        Ok(ids)
    })?;
    runtime::wait_for(|rt| Ok(team::all_done(rt, &ids)?.then_some(())))
}

/// Writes the pieces `(offset, bytes)` (sorted by offset, not overlapping) of one window.
fn write_window(t: &Target, mut pieces: Vec<(u64, &[u8])>) -> std::io::Result<()> {
    if pieces.is_empty() {
        return Ok(());
    }
    pieces.sort_by_key(|p| p.0);
    let lo = pieces[0].0;
    let hi = pieces
        .iter()
        .map(|p| p.0 + p.1.len() as u64)
        .max()
        .unwrap_or(lo);
    let covered = {
        let mut end = lo;
        let mut whole = true;
        for p in &pieces {
            if p.0 > end {
                whole = false;
                break;
            }
            end = end.max(p.0 + p.1.len() as u64);
        }
        whole
    };
    let _lock = RangeLock::take(t.file, lo, hi - lo, true)?;
    if covered || t.readable {
        let mut buf = vec![0u8; (hi - lo) as usize];
        if !covered {
            let mut n = 0;
            while n < buf.len() {
                match t.file.read_at(&mut buf[n..], lo + n as u64)? {
                    0 => break,
                    k => n += k,
                }
            }
        }
        for (off, data) in &pieces {
            let k = (off - lo) as usize;
            buf[k..k + data.len()].copy_from_slice(data);
        }
        return t.file.write_all_at(&buf, lo);
    }
    // Write-only with holes: each run of adjacent pieces on its own.
    let mut i = 0;
    while i < pieces.len() {
        let start = pieces[i].0;
        let mut run = pieces[i].1.to_vec();
        let mut j = i + 1;
        while j < pieces.len() && pieces[j].0 == start + run.len() as u64 {
            run.extend_from_slice(pieces[j].1);
            j += 1;
        }
        t.file.write_all_at(&run, start)?;
        i = j;
    }
    Ok(())
}

/// Runs a collective access of `mem` at view data byte `start`; returns the bytes moved.
///
/// # Safety
/// As `access::write` / `access::read`: `mem` is the caller's buffer.
#[allow(clippy::too_many_arguments)]
pub unsafe fn run(
    t: &Target,
    team: &Team,
    nodes: &[u32],
    h: &Hints,
    start: u64,
    mem: &Mem,
    el: &Elements,
    write: bool,
) -> MpiResult<u64> {
    let n = mem.bytes();
    let segs = t.view.segments(start, start + n as u64);
    let mut at = Vec::with_capacity(segs.len());
    let mut acc = 0usize;
    for s in &segs {
        at.push(acc);
        acc += s.1;
    }
    let (lo, hi) = match (segs.first(), segs.iter().map(|s| s.0 + s.1 as u64).max()) {
        (Some(f), Some(e)) => (f.0, e),
        _ => (u64::MAX, 0),
    };
    let mode = if write { h.cb_write } else { h.cb_read };
    let mode_word = match mode {
        Switch::Disable => 0u64,
        Switch::Enable => 1,
        Switch::Automatic => 2,
    };
    let all = Round::new(
        team.clone(),
        None,
        Combine::Concat,
        team::bytes(&[lo, hi, mode_word, segs.len() as u64, n as u64]),
    )
    .run()?;
    let all = team::words(&all);
    let (nsegs, bytes) = all
        .chunks_exact(5)
        .fold((0u64, 0u64), |a, w| (a.0 + w[3], a.1 + w[4]));
    let ranges: Vec<(u64, u64)> = all
        .chunks_exact(5)
        .map(|w| (w[0], w[1]))
        .filter(|r| r.0 < r.1)
        .collect();
    // The leader's mode decides, so that every rank takes the same path.
    let mode = all[2];
    let interleaved = {
        let mut r = ranges.clone();
        r.sort_unstable();
        r.windows(2).any(|w| w[1].0 < w[0].1)
    };
    let glo = ranges.iter().map(|r| r.0).min();
    let ghi = ranges.iter().map(|r| r.1).max();
    // Automatic: two-phase when the ranks' ranges interleave in pieces small enough that
    // one call per piece would cost more than moving them to an aggregator.
    let small = nsegs > 0 && bytes / nsegs < CB_SEGMENT_MAX;
    let direct = mode == 0 || (mode == 2 && !(interleaved && small));
    if direct || glo.is_none() {
        // SAFETY: forwarded caller guarantee.
        return unsafe {
            if write {
                access::write(t, start, mem, el)
            } else {
                access::read(t, start, mem, el)
            }
        };
    }
    let (glo, ghi) = (glo.unwrap(), ghi.unwrap());
    let aggs = aggregators(nodes, h.cb_nodes);
    let unit = h.striping_unit.max(1) as u64;
    let dsize = (ghi - glo)
        .div_ceil(aggs.len() as u64)
        .next_multiple_of(unit)
        .max(unit);
    let cb = h.cb_buffer as u64;
    let rounds = dsize.div_ceil(cb);
    let me = team.me as i32;
    let my_agg = aggs.iter().position(|&a| a == me);
    let comm = team.comm;
    let tag = team.tag;

    let mut data = if write {
        // SAFETY: forwarded caller guarantee.
        unsafe { datarep::to_file(t.view.datarep, mem, el)? }
    } else {
        vec![0u8; datarep::file_bytes(t.view.datarep, el)?]
    };
    let mut cursors = vec![0usize; aggs.len()];
    // An aggregator's error is reported by every rank once the rounds are over (the others
    // keep exchanging so that nobody hangs); the final agreement also makes each rank's data
    // visible to its own later reads before it returns.
    let mut failed = None;
    for r in 0..rounds {
        let window = |k: usize| {
            let d0 = glo + k as u64 * dsize;
            let d1 = (d0 + dsize).min(ghi);
            let w0 = d0 + r * cb;
            (w0.min(d1), (w0 + cb).min(d1))
        };
        let mine: Vec<Vec<Piece>> = (0..aggs.len())
            .map(|k| {
                let (w0, w1) = window(k);
                pieces_in(&segs, &at, &mut cursors[k], w0, w1)
            })
            .collect();
        let counts: Vec<u64> = mine
            .iter()
            .flat_map(|p| [p.len() as u64, p.iter().map(|x| x.len as u64).sum()])
            .collect();
        let matrix = team::words(
            &Round::new(team.clone(), None, Combine::Concat, team::bytes(&counts)).run()?,
        );
        // (pieces, bytes) that rank `src` has for aggregator `k`.
        let cell = |src: usize, k: usize| {
            let b = src * 2 * aggs.len() + 2 * k;
            (matrix[b] as usize, matrix[b + 1] as usize)
        };
        let ranks = team.ranks.len();
        if write {
            let mut sends = Vec::new();
            let mut own: Option<Vec<u8>> = None;
            for (k, p) in mine.iter().enumerate() {
                if p.is_empty() {
                    continue;
                }
                let mut msg = header(p);
                for x in p {
                    msg.extend_from_slice(&data[x.at..x.at + x.len]);
                }
                if aggs[k] == me {
                    own = Some(msg);
                } else {
                    sends.push((aggs[k], msg));
                }
            }
            let mut recvs = Vec::new();
            if let Some(k) = my_agg {
                for src in 0..ranks {
                    let (np, nb) = cell(src, k);
                    if np > 0 && src as i32 != me {
                        recvs.push((src as i32, vec![0u8; 16 * np + nb]));
                    }
                }
            }
            exchange(comm, tag, &sends, &mut recvs)?;
            if let Some(k) = my_agg {
                let mut msgs: Vec<(usize, &[u8])> = Vec::new();
                if let Some(o) = &own {
                    msgs.push((cell(me as usize, k).0, o));
                }
                for (src, b) in &recvs {
                    msgs.push((cell(*src as usize, k).0, b));
                }
                let mut pieces = Vec::new();
                for (np, b) in msgs {
                    let (head, body) = b.split_at(16 * np);
                    let mut p = 0;
                    for (off, len) in parse_header(head) {
                        pieces.push((off, &body[p..p + len]));
                        p += len;
                    }
                }
                if let Err(e) = write_window(t, pieces) {
                    failed.get_or_insert(io_error(&e, "collective write failed", t.path));
                }
            }
        } else {
            // Requests out, data back.
            let mut sends = Vec::new();
            for (k, p) in mine.iter().enumerate() {
                if !p.is_empty() && aggs[k] != me {
                    sends.push((aggs[k], header(p)));
                }
            }
            let mut lists = Vec::new();
            if let Some(k) = my_agg {
                for src in 0..ranks {
                    let (np, _) = cell(src, k);
                    if np > 0 && src as i32 != me {
                        lists.push((src as i32, vec![0u8; 16 * np]));
                    }
                }
            }
            exchange(comm, tag, &sends, &mut lists)?;
            let mut replies = Vec::new();
            if let Some(k) = my_agg {
                let mut wanted: Vec<(i32, Vec<(u64, usize)>)> = lists
                    .iter()
                    .map(|(src, b)| (*src, parse_header(b)))
                    .collect();
                if !mine[k].is_empty() {
                    wanted.push((me, mine[k].iter().map(|p| (p.off, p.len)).collect()));
                }
                let lo = wanted.iter().flat_map(|w| w.1.iter().map(|p| p.0)).min();
                let hi = wanted
                    .iter()
                    .flat_map(|w| w.1.iter().map(|p| p.0 + p.1 as u64))
                    .max();
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    let mut buf = vec![0u8; (hi - lo) as usize];
                    let mut got = 0;
                    let rd = (|| -> std::io::Result<()> {
                        let _lock = if t.atomic {
                            Some(RangeLock::take(t.file, lo, hi - lo, false)?)
                        } else {
                            None
                        };
                        while got < buf.len() {
                            match t.file.read_at(&mut buf[got..], lo + got as u64)? {
                                0 => break,
                                k => got += k,
                            }
                        }
                        Ok(())
                    })();
                    if let Err(e) = rd {
                        failed.get_or_insert(io_error(&e, "collective read failed", t.path));
                    }
                    for (src, list) in wanted {
                        let mut reply = Vec::new();
                        for (off, len) in list {
                            let k = (off - lo) as usize;
                            reply.extend_from_slice(&buf[k..k + len]);
                        }
                        if src == me {
                            let mut p = 0;
                            for x in &mine[my_agg.unwrap()] {
                                data[x.at..x.at + x.len].copy_from_slice(&reply[p..p + x.len]);
                                p += x.len;
                            }
                        } else {
                            replies.push((src, reply));
                        }
                    }
                }
            }
            let mut incoming: Vec<(i32, Vec<u8>)> = Vec::new();
            let mut which = Vec::new();
            for (k, p) in mine.iter().enumerate() {
                if !p.is_empty() && aggs[k] != me {
                    incoming.push((aggs[k], vec![0u8; p.iter().map(|x| x.len).sum()]));
                    which.push(k);
                }
            }
            exchange(comm, tag, &replies, &mut incoming)?;
            for ((_, b), k) in incoming.iter().zip(which) {
                let mut p = 0;
                for x in &mine[k] {
                    data[x.at..x.at + x.len].copy_from_slice(&b[p..p + x.len]);
                    p += x.len;
                }
            }
        }
    }
    let outcome = match failed {
        Some(e) => Err(e),
        None => Ok(()),
    };
    super::agree(team, outcome)?;
    if write {
        return Ok(n as u64);
    }
    // The stream up to the end of the file was read.
    let end = t
        .file
        .metadata()
        .map_err(|e| io_error(&e, "cannot read the size of", t.path))?
        .len();
    let mut got = 0usize;
    for &(off, len) in &segs {
        if off + len as u64 <= end {
            got += len;
        } else {
            got += end.saturating_sub(off) as usize;
            break;
        }
    }
    data.truncate(got);
    // SAFETY: forwarded caller guarantee.
    Ok(unsafe { datarep::from_file(t.view.datarep, &mut data, mem, el)? } as u64)
}

/// Whether a collective access may run two-phase (the ranks agree on the final choice).
pub fn wanted(h: &Hints, write: bool, ranks: usize) -> bool {
    let _ = (h, write);
    ranks > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_aggregator_per_node_then_more() {
        assert_eq!(aggregators(&[0, 0, 2, 2, 2], None), vec![0, 2]);
        assert_eq!(aggregators(&[0, 0, 2, 2, 2], Some(3)), vec![0, 1, 2]);
        assert_eq!(aggregators(&[0, 0, 0], Some(9)), vec![0, 1, 2]);
    }

    #[test]
    fn pieces_split_at_windows() {
        let segs = [(0u64, 10usize), (20, 10)];
        let at = [0usize, 10];
        let mut c = 0;
        let p = pieces_in(&segs, &at, &mut c, 5, 25);
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].off, p[0].len, p[0].at), (5, 5, 5));
        assert_eq!((p[1].off, p[1].len, p[1].at), (20, 5, 10));
        assert_eq!(c, 1, "the first segment is done, the second continues");
        let p = pieces_in(&segs, &at, &mut c, 25, 40);
        assert_eq!((p[0].off, p[0].len, p[0].at), (25, 5, 15));
    }
}
