use super::*;
use std::collections::HashMap;
use std::sync::{Arc, Barrier, Mutex};

/// A bootstrap for ranks that are threads of one process (stands in for PMI in tests).
struct ThreadBoot {
    rank: i32,
    kvs: Arc<Mutex<HashMap<String, String>>>,
    barrier: Arc<Barrier>,
}

impl Bootstrap for ThreadBoot {
    fn rank(&self) -> i32 {
        self.rank
    }
    fn size(&self) -> i32 {
        2
    }
    fn put(&mut self, key: &str, value: &str) -> std::io::Result<()> {
        self.kvs.lock().unwrap().insert(key.into(), value.into());
        Ok(())
    }
    fn barrier(&mut self) -> std::io::Result<()> {
        self.barrier.wait();
        Ok(())
    }
    fn get(&mut self, key: &str) -> std::io::Result<Option<String>> {
        Ok(self.kvs.lock().unwrap().get(key).cloned())
    }
    fn finalize(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn abort(&mut self, _: i32, _: &str) -> std::io::Result<()> {
        Ok(())
    }
    fn job_name(&self) -> String {
        "threads".into()
    }
}

/// Two engines of one node, set up concurrently by two threads.
fn pair() -> (ShmEngine, ShmEngine) {
    pair_n(2)
}

/// The first two engines of a node sized for `nlocal` local ranks (the ring size and
/// segment layout follow `nlocal`).
fn pair_n(nlocal: u32) -> (ShmEngine, ShmEngine) {
    let mut e = engines_n(2, nlocal);
    let b = e.pop().unwrap();
    (e.pop().unwrap(), b)
}

/// `k` engines (local ranks 0..k) of a node sized for `nlocal` local ranks, set up
/// concurrently by `k` threads.
fn engines_n(k: u32, nlocal: u32) -> Vec<ShmEngine> {
    let kvs = Arc::new(Mutex::new(HashMap::new()));
    let barrier = Arc::new(Barrier::new(k as usize));
    let threads: Vec<_> = (0..k)
        .map(|r| {
            let mut boot = ThreadBoot {
                rank: r as i32,
                kvs: kvs.clone(),
                barrier: barrier.clone(),
            };
            std::thread::spawn(move || {
                let host = format!("testhost{k}-{nlocal}");
                ShmEngine::setup_among(&mut boot, &host, r, nlocal, 0, k)
                    .map_err(|e| e.message().to_string())
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect()
}

/// A random mix of ring and queue sends, give-backs, slots held beyond a lap and
/// out-of-order releases loses, duplicates and reorders nothing, at every ring size and
/// across the counters' wrap-around.
#[test]
fn random_ring_and_queue_mix_keeps_order_at_every_ring_size() {
    for (nlocal, wrap) in [
        (2u32, false),
        (9, false),
        (33, false),
        (65, false),
        (129, false),
        (300, false),
        (2, true),
        (129, true),
    ] {
        let (mut a, mut b) = pair_n(nlocal);
        if wrap {
            a.send_seq[1] = u32::MAX - 3000;
            b.recv_seq[0] = u32::MAX - 3000;
            a.fb_send[1] = u32::MAX - 2998;
            b.fb_recv[0] = u32::MAX - 2998;
        }
        let slots = a.seg.fb_slots();
        let mut rng = 0x1234_5678_9abc_def0u64 ^ nlocal as u64;
        let mut rnd = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let small = [1u8; 8];
        let big = vec![2u8; 1000];
        let env = |tag| Envelope {
            ctx: 0,
            src: 0,
            tag,
        };
        let mut done = Vec::new();
        let (mut sent, mut got, mut held) = (0i32, Vec::new(), Vec::<u32>::new());
        for _ in 0..20000 {
            match rnd(6) {
                0 | 1 => {
                    let data: &[u8] = if rnd(4) == 0 { &big } else { &small };
                    if !a.send_eager_now(1, env(sent), data.as_ptr(), data.len()) {
                        a.send_or_queue(msg(sent, data));
                    }
                    sent += 1;
                }
                2 => {
                    a.send_or_queue(msg(sent, &small));
                    sent += 1;
                }
                3 => {
                    a.flush(&mut done);
                }
                _ => {
                    if let Some(m) = b.poll() {
                        if rnd(3) == 0 {
                            b.unpoll(m);
                            continue;
                        }
                        got.push(m.env.tag);
                        if rnd(2) == 0 && held.len() < 2 * slots as usize + 3 {
                            held.push(m.cell);
                        } else {
                            b.release(m.cell);
                        }
                    }
                    if rnd(4) == 0 && !held.is_empty() {
                        let i = rnd(held.len() as u64) as usize;
                        b.release(held.swap_remove(i));
                    }
                }
            }
        }
        for c in held.drain(..) {
            b.release(c);
        }
        for _ in 0..1_000_000 {
            if got.len() == sent as usize {
                break;
            }
            a.flush(&mut done);
            if let Some(m) = b.poll() {
                got.push(m.env.tag);
                b.release(m.cell);
            }
        }
        assert_eq!(
            got,
            (0..sent).collect::<Vec<_>>(),
            "nlocal {nlocal}: lost or reordered"
        );
        assert!(b.poll().is_none());
    }
}

/// Two concurrent senders and a receiver that holds and gives back messages: each
/// sender's messages arrive once and in order.
#[test]
fn two_concurrent_senders_keep_their_order() {
    for nlocal in [3u32, 129, 300] {
        let mut es = engines_n(3, nlocal);
        let mut r = es.remove(0);
        const N: i32 = 200_000;
        let senders: Vec<_> = es
            .into_iter()
            .enumerate()
            .map(|(i, mut e)| {
                std::thread::spawn(move || {
                    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
                    let mut rnd = move |n: u64| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        rng % n
                    };
                    let small = [1u8; 8];
                    let big = vec![2u8; 1000];
                    let mut done = Vec::new();
                    for t in 0..N {
                        let data: &[u8] = if rnd(5) == 0 { &big } else { &small };
                        let env = Envelope {
                            ctx: 0,
                            src: i as i32 + 1,
                            tag: t,
                        };
                        let kind = if rnd(50) == 0 {
                            MsgKind::EagerSync
                        } else {
                            MsgKind::Eager
                        };
                        if kind == MsgKind::Eager
                            && rnd(2) == 0
                            && e.send_eager_now(0, env, data.as_ptr(), data.len())
                        {
                            continue;
                        }
                        e.send_or_queue(Outgoing::Msg {
                            dest: 0,
                            kind,
                            env,
                            sreq: 0,
                            buf: data.as_ptr(),
                            bytes: data.len(),
                        });
                        if rnd(3) == 0 {
                            e.flush(&mut done);
                        }
                    }
                    while e.has_outgoing() {
                        e.flush(&mut done);
                        std::hint::spin_loop();
                    }
                    e
                })
            })
            .collect();
        let mut next = [0i32; 2];
        let mut held: Vec<u32> = Vec::new();
        let mut rng = 77u64;
        let mut rnd = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        while next[0] < N || next[1] < N {
            let Some(m) = r.poll() else {
                std::hint::spin_loop();
                continue;
            };
            if rnd(4) == 0 {
                r.unpoll(m);
                continue;
            }
            let s = (m.env.src - 1) as usize;
            assert_eq!(
                m.env.tag, next[s],
                "nlocal {nlocal}: sender {s} out of order"
            );
            assert_eq!(m.src_local as usize, s + 1);
            next[s] += 1;
            if rnd(3) == 0 && held.len() < 20 {
                held.push(m.cell)
            } else {
                r.release(m.cell)
            }
            if rnd(3) == 0 {
                while let Some(c) = held.pop() {
                    r.release(c)
                }
            }
        }
        while let Some(c) = held.pop() {
            r.release(c)
        }
        for t in senders {
            t.join().unwrap();
        }
    }
}

fn msg(tag: i32, data: &[u8]) -> Outgoing {
    Outgoing::Msg {
        dest: 1,
        kind: MsgKind::Eager,
        env: Envelope {
            ctx: 0,
            src: 0,
            tag,
        },
        sreq: tag as u64,
        buf: data.as_ptr(),
        bytes: data.len(),
    }
}

/// A sleeping receiver is rung by a message through its fastbox and by one through a
/// cell, and a sender whose cell comes back is rung too; nobody rings when nothing is
/// sent (the sleep then lasts its timeout).
#[test]
fn sends_and_returned_cells_ring_the_doorbell() {
    use std::time::{Duration, Instant};
    let (mut a, mut b) = pair();
    // Whether a sleep armed before `act` ends long before its 20 s timeout.
    let rung = |bell: &crate::platform::doorbell::Doorbell, act: &mut dyn FnMut()| {
        let armed = bell.arm();
        act();
        let t = Instant::now();
        bell.sleep(armed, Duration::from_secs(20));
        bell.disarm();
        t.elapsed() < Duration::from_secs(10)
    };
    let small = [1u8; 8];
    let big = vec![2u8; 4000];
    let mut done = Vec::new();
    assert!(rung(b.own_bell(), &mut || {
        a.send_or_queue(msg(0, &small));
        a.flush(&mut done);
    }));
    assert!(rung(b.own_bell(), &mut || {
        a.send_or_queue(msg(1, &big));
        a.flush(&mut done);
    }));
    let first = b.poll().expect("fastbox message");
    b.release(first.cell);
    let second = b.poll().expect("cell message");
    assert_eq!(second.len, 4000);
    assert!(rung(a.own_bell(), &mut || b.release(second.cell)));
    let armed = b.own_bell().arm();
    let t = Instant::now();
    b.own_bell().sleep(armed, Duration::from_millis(30));
    b.own_bell().disarm();
    assert!(
        t.elapsed() >= Duration::from_millis(29),
        "rung with nothing sent"
    );
}

/// Small messages go through the fastbox while it is free and through the queue while it
/// is full; the receiver still sees them in send order, whatever the mix.
#[test]
fn fastbox_and_queue_keep_send_order() {
    let (mut a, mut b) = pair();
    let small = [7u8; 16];
    let big = vec![9u8; 4000];
    let mut sent = 0;
    let mut got = Vec::new();
    let mut done = Vec::new();
    for round in 0..200 {
        // Bursts of 1..5 messages, mixed sizes, before the receiver looks.
        for k in 0..(round % 5 + 1) {
            let data: &[u8] = if (round + k) % 3 == 0 { &big } else { &small };
            a.send_or_queue(msg(sent, data));
            sent += 1;
        }
        a.flush(&mut done);
        while let Some(m) = b.poll() {
            assert_eq!(b.payload(&m).len(), if m.len == 4000 { 4000 } else { 16 });
            got.push(m.env.tag);
            b.release(m.cell);
        }
    }
    while got.len() < sent as usize {
        a.flush(&mut done);
        if let Some(m) = b.poll() {
            got.push(m.env.tag);
            b.release(m.cell);
        }
    }
    assert_eq!(got, (0..sent).collect::<Vec<_>>(), "messages reordered");
    assert!(a.idle());
}

/// A burst of small messages fills the sender's fastbox ring before it spills into cells;
/// the receiver sees send order even when it keeps messages unreleased for more than a
/// lap of the ring (meeting its own held message in the slot it expects next) and
/// releases them out of order.
#[test]
fn fastbox_ring_laps_and_held_slots_keep_order() {
    // The largest rings (two local ranks) and rings of 8 slots (33 local ranks).
    for (nlocal, want) in [(2u32, FB_SLOTS), (33, 8)] {
        laps_and_held_slots_keep_order(nlocal, want as i32);
    }
}

fn laps_and_held_slots_keep_order(nlocal: u32, want: i32) {
    let (mut a, mut b) = pair_n(nlocal);
    let small = [5u8; 8];
    let big = vec![6u8; 3000];
    let mut done = Vec::new();
    // An empty ring takes a whole burst of small messages.
    let slots = a.seg.fb_slots() as i32;
    assert_eq!(slots, want, "{nlocal} local ranks");
    // Held messages at most: more than a lap of the ring.
    let hold = slots as usize + 4;
    for t in 0..slots {
        a.send_or_queue(msg(t, &small));
    }
    let mut sent = slots;
    let mut got = Vec::new();
    while let Some(m) = b.poll() {
        assert!(m.cell >= FB_TAG, "message {} not in the ring", m.env.tag);
        got.push(m.env.tag);
        b.release(m.cell);
    }
    assert_eq!(got.len(), slots as usize);
    let mut held: Vec<u32> = Vec::new();
    for round in 0..400 {
        for k in 0..(round % 19 + 1) {
            let data: &[u8] = if (round + k) % 7 == 3 { &big } else { &small };
            a.send_or_queue(msg(sent, data));
            sent += 1;
        }
        a.flush(&mut done);
        for _ in 0..(round % 5 + 1) {
            let Some(m) = b.poll() else { break };
            got.push(m.env.tag);
            // Hold up to `hold` messages, and give them back newest first.
            held.push(m.cell);
            if held.len() > hold || (round as usize).is_multiple_of(hold + 1) {
                while let Some(c) = held.pop() {
                    b.release(c);
                }
            }
        }
    }
    while let Some(c) = held.pop() {
        b.release(c);
    }
    for _ in 0..100_000 {
        if got.len() == sent as usize {
            break;
        }
        a.flush(&mut done);
        if let Some(m) = b.poll() {
            got.push(m.env.tag);
            b.release(m.cell);
        }
    }
    assert_eq!(
        got,
        (0..sent).collect::<Vec<_>>(),
        "{nlocal} local ranks: messages lost or reordered"
    );
    assert!(b.poll().is_none());
}

/// A peer that keeps its ring full does not hold back the queue: a control reply queued
/// behind ring messages (no sequence number, so nothing orders it after them) is taken
/// within a bounded number of polls.
#[test]
fn full_rings_do_not_starve_the_queue() {
    let (mut a, mut b) = pair();
    let mut done = Vec::new();
    let small = [1u8; 8];
    let env = |tag| Envelope {
        ctx: 0,
        src: 0,
        tag,
    };
    // Ring-only sends (`send_eager_now` would spill into cells once the ring is full).
    let mut sent = 0;
    while a.fastbox_put(1, MsgKind::Eager, env(sent), 0, small.as_ptr(), small.len()) {
        sent += 1;
    }
    a.send_or_queue(Outgoing::Reply {
        dest: 1,
        kind: MsgKind::Ack,
        sreq: 77,
        rreq: 0,
    });
    a.flush(&mut done);
    let mut polls = 0;
    loop {
        let m = b.poll().expect("the ring is kept full");
        polls += 1;
        b.release(m.cell);
        if m.kind == MsgKind::Ack {
            assert_eq!(m.sreq, 77);
            break;
        }
        assert!(
            polls <= 2 * FB_STREAK,
            "the reply waited behind {polls} ring messages"
        );
        // Refill the slot just released.
        while a.fastbox_put(1, MsgKind::Eager, env(sent), 0, small.as_ptr(), small.len()) {
            sent += 1;
        }
    }
}

/// The race the sequence numbers exist for: the receiver takes a queued cell before it
/// noticed the sender's earlier fastbox message. The fastbox message must come out first.
#[test]
fn queued_cell_waits_for_earlier_fastbox_message() {
    let (mut a, mut b) = pair();
    let mut done = Vec::new();
    let small = [1u8; 8];
    let big = vec![2u8; 1000];
    a.send_or_queue(msg(0, &small)); // fastbox
    a.send_or_queue(msg(1, &big)); // queue
    a.flush(&mut done);
    let cell = b.poll_queue().expect("queued cell");
    assert_eq!(cell.env.tag, 1);
    let first = b.in_sequence(cell);
    assert_eq!(
        first.env.tag, 0,
        "the fastbox message precedes the queued one"
    );
    b.release(first.cell);
    let second = b.poll().unwrap();
    assert_eq!(second.env.tag, 1);
    b.release(second.cell);
    assert!(b.poll().is_none());
}

/// The same race with several messages in the ring ahead of the queued cell: all of them
/// come out, in order, before the cell.
#[test]
fn queued_cell_waits_for_every_earlier_ring_message() {
    let (mut a, mut b) = pair();
    let mut done = Vec::new();
    let small = [1u8; 8];
    let big = vec![2u8; 1000];
    for t in 0..3 {
        a.send_or_queue(msg(t, &small)); // ring
    }
    a.send_or_queue(msg(3, &big)); // queue
    a.flush(&mut done);
    let cell = b.poll_queue().expect("queued cell");
    assert_eq!(cell.env.tag, 3);
    let mut got = vec![b.in_sequence(cell).env.tag];
    while let Some(m) = b.poll() {
        got.push(m.env.tag);
        b.release(m.cell);
    }
    assert_eq!(got, [0, 1, 2, 3], "ring messages precede the queued one");
}

/// Eager sends of the fast path, mixed with queued sends: a fast send never overtakes a
/// queued one, and a message given back with `unpoll` comes out next, before a stashed
/// cell, so the receiver still sees send order.
#[test]
fn fast_sends_and_given_back_messages_keep_order() {
    let (mut a, mut b) = pair();
    let env = |tag| Envelope {
        ctx: 0,
        src: 0,
        tag,
    };
    let small = [3u8; 8];
    let big = vec![4u8; 2000];
    let mut done = Vec::new();
    let mut sent = 0;
    let mut got = Vec::new();
    for round in 0..300 {
        for k in 0..(round % 4 + 1) {
            let data: &[u8] = if (round + k) % 3 == 0 { &big } else { &small };
            if round % 7 == 0 || !a.send_eager_now(1, env(sent), data.as_ptr(), data.len()) {
                a.send_or_queue(msg(sent, data));
            }
            sent += 1;
        }
        if round % 2 == 0 {
            a.flush(&mut done);
        }
        // Take a message, give it back, take it again.
        if let Some(m) = b.poll() {
            b.unpoll(m);
            assert!(!b.idle(), "a given-back message is work");
            let again = b.poll().unwrap();
            assert_eq!((again.env.tag, again.cell), (m.env.tag, m.cell));
            got.push(again.env.tag);
            b.release(again.cell);
        }
    }
    while got.len() < sent as usize {
        a.flush(&mut done);
        if let Some(m) = b.poll() {
            got.push(m.env.tag);
            b.release(m.cell);
        }
    }
    assert_eq!(got, (0..sent).collect::<Vec<_>>(), "messages reordered");
    assert!(!a.has_outgoing());
    assert!(
        !a.send_eager_now(1, env(0), big.as_ptr(), a.payload_cap() + 1),
        "larger than a cell"
    );
}
