use super::*;

#[test]
fn hex_round_trips() {
    let b = [0u8, 1, 0x7f, 0x80, 0xff];
    assert_eq!(hex(&b), "00017f80ff");
    assert_eq!(unhex("00017f80ff").as_deref(), Some(&b[..]));
    assert_eq!(unhex("0"), None);
    assert_eq!(unhex("zz"), None);
}

/// Two engines of one process (ranks 0 and 1) on provider `prov` over loopback.
fn pair(prov: &str) -> (NetEngine, NetEngine) {
    let a = Endpoint::open(Some(prov), Some("127.0.0.1")).expect("endpoint 0");
    let b = Endpoint::open(Some(prov), Some("127.0.0.1")).expect("endpoint 1");
    let names = vec![a.name().unwrap(), b.name().unwrap()];
    let (aa, ba) = (a.insert(&names).unwrap(), b.insert(&names).unwrap());
    let (mut a, mut b) = (
        NetEngine::start(a, 0, 7, names[0].clone(), aa).unwrap(),
        NetEngine::start(b, 1, 7, names[1].clone(), ba).unwrap(),
    );
    // The tests use the direct path whatever HYMPI_OFI_DIRECT_MIN says.
    a.direct_min = 1;
    b.direct_min = 1;
    (a, b)
}

/// Polls `rx` (flushing both) until a message arrives; the sender's completed tokens
/// go to `done`.
fn next_done(tx: &mut NetEngine, rx: &mut NetEngine, done: &mut Vec<u64>) -> Incoming {
    let mut other = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        tx.flush(done);
        rx.flush(&mut other);
        if let Some(m) = rx.poll() {
            return m;
        }
    }
    panic!("no message arrived (sender failure: {:?})", tx.failure());
}

/// [`next_done`] when the sender's completions do not matter.
fn next(tx: &mut NetEngine, rx: &mut NetEngine) -> Incoming {
    next_done(tx, rx, &mut Vec::new())
}

fn eager(dest: u32, tag: i32, data: &[u8]) -> Outgoing {
    Outgoing::Msg {
        dest: NET_PEER | dest,
        kind: MsgKind::Eager,
        env: Envelope {
            ctx: 4,
            src: 0,
            tag,
        },
        sreq: 7,
        buf: data.as_ptr(),
        bytes: data.len(),
    }
}

/// Small messages, which go with a short header (and as injects where the provider's
/// inject size takes them), arrive with every field and payload byte as sent: eager
/// payloads of 0-40 bytes (across the short/full boundary), a synchronous send's token,
/// a rendezvous request's buffer address, and replies.
fn small_messages_arrive_whole(prov: &str) {
    let (mut a, mut b) = pair(prov);
    let data: Vec<u8> = (0..64u8)
        .map(|i| i.wrapping_mul(7).wrapping_add(1))
        .collect();
    for (i, n) in (0..=40).enumerate() {
        let kind = [MsgKind::Eager, MsgKind::EagerSync][i % 2];
        a.send_or_queue(Outgoing::Msg {
            dest: NET_PEER | 1,
            kind,
            env: Envelope {
                ctx: 9,
                src: 0,
                tag: 100 + n as i32,
            },
            sreq: 1000 + n as u64,
            buf: data.as_ptr(),
            bytes: n,
        });
        let r = next(&mut a, &mut b);
        assert_eq!((r.kind, r.env.ctx, r.env.tag), (kind, 9, 100 + n as i32));
        assert_eq!(
            (r.sreq, r.rreq, r.addr, r.total),
            (1000 + n as u64, 0, 0, n as u64)
        );
        assert_eq!(b.payload(&r), &data[..n], "payload of {n} bytes");
        b.release(r.cell);
    }
    // A rendezvous request keeps its full header: the buffer address arrives.
    a.send_or_queue(Outgoing::Msg {
        dest: NET_PEER | 1,
        kind: MsgKind::Rts,
        env: Envelope {
            ctx: 9,
            src: 0,
            tag: 5,
        },
        sreq: 44,
        buf: data.as_ptr(),
        bytes: 1 << 20,
    });
    let r = next(&mut a, &mut b);
    assert_eq!((r.kind, r.sreq, r.total), (MsgKind::Rts, 44, 1 << 20));
    assert_eq!(r.addr, data.as_ptr() as u64);
    b.release(r.cell);
    for (kind, rreq) in [(MsgKind::Ack, 0), (MsgKind::Cts, 12)] {
        b.send_or_queue(Outgoing::Reply {
            dest: NET_PEER,
            kind,
            sreq: 31,
            rreq,
        });
        let r = next(&mut b, &mut a);
        assert_eq!((r.kind, r.sreq, r.rreq), (kind, 31, rreq));
        a.release(r.cell);
    }
}

/// Two one-rank jobs on provider `prov`: a connects to a port of b with a `Hello`; then
/// messages both ways name the sender by its index in the receiver's table.
fn connects_two_jobs(prov: &str) {
    let one = |job| {
        let ep = Endpoint::open(Some(prov), Some("127.0.0.1")).expect("endpoint");
        let name = ep.name().unwrap();
        NetEngine::start(ep, 0, job, name, vec![NO_ADDR]).unwrap()
    };
    let (mut a, mut b) = (one(11), one(22));
    let b_at_a = a.add_peer(22, 0, b.address()).unwrap();
    assert_eq!(
        b_at_a, 1,
        "the first process of another job follows the world"
    );
    assert_eq!(a.add_peer(22, 0, b.address()), Ok(1), "registered once");
    assert!(
        a.add_peer(11, 3, &[0; 4]).is_err(),
        "rank 3 of a 1-rank job"
    );
    b.open_port(5);
    // (The provider may refuse a send while it connects: flush and try again.)
    for (port, nonce) in [(5, 99), (6, 98)] {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !a.send_hello(b_at_a, port, nonce) {
            a.flush(&mut Vec::new());
            b.flush(&mut Vec::new());
            assert!(std::time::Instant::now() < deadline, "hello not sent");
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut answers = (None, None);
    let mut hello = None;
    while hello.is_none() || answers.0.is_none() || answers.1.is_none() {
        a.flush(&mut Vec::new());
        b.flush(&mut Vec::new());
        hello = hello.or_else(|| b.take_hello(5));
        answers.0 = answers.0.or_else(|| a.take_answer(1, 99));
        answers.1 = answers.1.or_else(|| a.take_answer(1, 98));
        assert!(std::time::Instant::now() < deadline, "no hello or answer");
    }
    assert_eq!(
        hello,
        Some(Hello {
            port: 5,
            nonce: 99,
            peer: 1
        })
    );
    assert_eq!(answers, (Some(true), Some(false)), "welcomed, refused");
    assert_eq!(b.take_hello(5), None);
    assert_eq!(
        b.take_hello(6),
        None,
        "a request to a closed port is not kept"
    );
    let hello = hello.unwrap();
    assert_eq!(b.process_count(), 2);
    b.send_or_queue(eager(hello.peer, 3, b"to a"));
    let r = next(&mut b, &mut a);
    assert_eq!((r.src_local, a.payload(&r)), (NET_PEER | 1, &b"to a"[..]));
    a.release(r.cell);
    a.send_or_queue(eager(b_at_a, 4, b"to b"));
    let r = next(&mut a, &mut b);
    assert_eq!((r.src_local, b.payload(&r)), (NET_PEER | 1, &b"to b"[..]));
    b.release(r.cell);
}

/// Many eager messages, more than there are send and receive buffers, arrive whole and
/// in order; a stream arrives whole; replies carry their tokens.
fn carries_messages_in_order(prov: &str) {
    let (mut a, mut b) = pair(prov);
    let n = 4 * (TX_SLOTS + RX_SLOTS);
    let msgs: Vec<Vec<u8>> = (0..n)
        .map(|i| (0..(i * 37) % 3000).map(|j| (i + j) as u8).collect())
        .collect();
    let mut got = 0;
    for (i, m) in msgs.iter().enumerate() {
        a.send_or_queue(eager(1, i as i32, m));
        // Drain now and then so the sender's queue both fills and empties.
        if i % 100 == 99 {
            while got < i / 2 {
                let r = next(&mut a, &mut b);
                assert_eq!(r.env.tag, got as i32, "order");
                assert_eq!(b.payload(&r), &msgs[got][..]);
                assert_eq!(r.src_local, NET_PEER);
                b.release(r.cell);
                got += 1;
            }
        }
    }
    while got < n {
        let r = next(&mut a, &mut b);
        assert_eq!(r.kind, MsgKind::Eager);
        assert_eq!(r.env.tag, got as i32, "order");
        assert_eq!(b.payload(&r), &msgs[got][..]);
        b.release(r.cell);
        got += 1;
    }
    // A stream of 5.5 chunks, from b to a.
    let big: Vec<u8> = (0..PAYLOAD_CAP * 11 / 2).map(|i| (i % 251) as u8).collect();
    b.start_stream(NET_PEER, 3, 9, big.as_ptr(), big.len(), None);
    let mut back = vec![0u8; big.len()];
    let mut have = 0;
    while have < big.len() {
        let r = next(&mut b, &mut a);
        assert_eq!((r.kind, r.sreq, r.rreq), (MsgKind::Data, 3, 9));
        let off = r.addr as usize;
        let p = a.payload(&r);
        back[off..off + p.len()].copy_from_slice(p);
        have += p.len();
        a.release(r.cell);
    }
    assert!(back == big, "stream content");
    // The same message straight between the two buffers: a posts its buffer, flags its
    // Cts, and b sends the whole in one piece.
    let mut direct = vec![0u8; big.len()];
    // SAFETY: `direct` outlives the transfer (released below).
    assert!(unsafe { a.recv_into(NET_PEER | 1, 77, direct.as_mut_ptr(), direct.len()) });
    a.send_or_queue(Outgoing::Reply {
        dest: NET_PEER | 1,
        kind: MsgKind::Cts,
        sreq: 5,
        rreq: 77,
    });
    let cts = next(&mut a, &mut b);
    assert_eq!(
        (cts.kind, cts.sreq, cts.rreq, cts.addr),
        (MsgKind::Cts, 5, 77, CTS_DIRECT)
    );
    b.release(cts.cell);
    b.start_stream(NET_PEER, 5, 77, big.as_ptr(), big.len(), None);
    let mut sent = Vec::new();
    let r = next_done(&mut b, &mut a, &mut sent);
    assert_eq!(
        (r.kind, r.rreq, r.len, r.addr),
        (MsgKind::Data, 77, big.len(), 0)
    );
    assert!(
        std::ptr::eq(a.payload(&r).as_ptr(), direct.as_ptr()),
        "received in place"
    );
    a.release(r.cell);
    assert!(direct == big, "direct content");
    // (The receiver's provider may still have to acknowledge: both sides progress.)
    let mut other = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        b.flush(&mut sent);
        a.flush(&mut other);
        if sent.contains(&5) {
            break;
        }
    }
    assert_eq!(
        sent,
        vec![5],
        "the direct send completes its request (failures: {:?} {:?})",
        a.failure(),
        b.failure()
    );
    b.send_or_queue(Outgoing::Reply {
        dest: NET_PEER,
        kind: MsgKind::Fin,
        sreq: 11,
        rreq: 12,
    });
    let r = next(&mut b, &mut a);
    assert_eq!(
        (r.kind, r.sreq, r.rreq, r.src_local),
        (MsgKind::Fin, 11, 12, NET_PEER | 1)
    );
    a.release(r.cell);
    let mut done = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        a.flush(&mut done);
        b.flush(&mut done);
        if a.idle() && b.idle() {
            break;
        }
    }
    assert!(a.idle() && b.idle(), "every send completed");
    assert!(a.failure().is_none() && b.failure().is_none());
}

/// The fast paths' calls: a direct eager send goes out only when nothing is queued
/// before it (so it never overtakes a queued send of the same pair), a message given
/// back is polled again first, and sends to other jobs' processes or above one buffer
/// decline.
fn fast_sends_keep_the_order(prov: &str) {
    let (mut a, mut b) = pair(prov);
    let env = |tag| Envelope {
        ctx: 4,
        src: 0,
        tag,
    };
    let data: Vec<u8> = (0..100u8).collect();
    let big = vec![1u8; PAYLOAD_CAP + 1];
    let fast = |e: &mut NetEngine, dest: u32, tag: i32, buf: &[u8]| {
        // SAFETY: `buf` is a live slice of `buf.len()` bytes.
        unsafe { e.send_eager_now(dest, env(tag), buf.as_ptr(), buf.len()) }
    };
    assert!(!fast(&mut a, 1, 0, &big));
    assert!(!fast(&mut a, 5, 0, &data[..1]), "not a world rank");
    for tag in 0..10 {
        // (The provider may refuse a send while it connects: progress and try again.)
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !fast(&mut a, 1, tag, &data) {
            assert!(!a.has_outgoing() && a.failure().is_none());
            a.flush(&mut Vec::new());
            b.flush(&mut Vec::new());
            assert!(
                std::time::Instant::now() < deadline,
                "fast send {tag} refused"
            );
        }
    }
    // A send queued (as when every buffer was in flight) holds later fast sends back.
    a.pending.push_back(eager(1, 10, &data));
    assert!(a.has_outgoing());
    assert!(!fast(&mut a, 1, 11, &data));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while a.has_outgoing() {
        a.flush(&mut Vec::new());
        b.flush(&mut Vec::new());
        assert!(
            std::time::Instant::now() < deadline,
            "the queued send never left"
        );
    }
    assert!(fast(&mut a, 1, 11, &data[..8]));
    for want in 0..12 {
        let m = next(&mut a, &mut b);
        assert_eq!(m.env.tag, want, "order");
        let len = if want == 11 { 8 } else { data.len() };
        assert_eq!(b.payload(&m), &data[..len]);
        if want == 3 {
            b.unpoll(m);
            let again = b.poll().expect("given back");
            assert_eq!(again.env.tag, 3, "the message given back comes first");
            b.release(again.cell);
        } else {
            b.release(m.cell);
        }
    }
}

#[test]
fn tcp_rxm_fast_sends_keep_the_order() {
    fast_sends_keep_the_order("tcp;ofi_rxm");
}

#[test]
fn sockets_fast_sends_keep_the_order() {
    fast_sends_keep_the_order("sockets");
}

#[test]
fn tcp_rxm_carries_messages_in_order() {
    carries_messages_in_order("tcp;ofi_rxm");
}

#[test]
fn sockets_carries_messages_in_order() {
    carries_messages_in_order("sockets");
}

#[test]
fn tcp_rxm_small_messages_arrive_whole() {
    small_messages_arrive_whole("tcp;ofi_rxm");
}

#[test]
fn sockets_small_messages_arrive_whole() {
    small_messages_arrive_whole("sockets");
}

#[test]
fn tcp_rxm_connects_two_jobs() {
    connects_two_jobs("tcp;ofi_rxm");
}

#[test]
fn sockets_connects_two_jobs() {
    connects_two_jobs("sockets");
}

#[test]
fn an_unknown_provider_is_refused_with_its_name() {
    let e = Endpoint::open(Some("no-such-provider"), Some("127.0.0.1")).unwrap_err();
    assert!(e.contains("no-such-provider"), "{e}");
}
