use super::*;

#[test]
fn queue_is_fifo_and_frees_its_nodes() {
    let q = Queue::new();
    for i in 0..5 {
        q.push(vec![i]);
    }
    // SAFETY: one consumer (this thread).
    unsafe {
        assert!(!q.is_empty());
        for i in 0..3 {
            assert_eq!(q.pop(), Some(vec![i]));
        }
    }
    q.push(vec![9]);
    // SAFETY: as above.
    unsafe {
        assert_eq!(q.pop(), Some(vec![3]));
        assert_eq!(q.pop(), Some(vec![4]));
        assert_eq!(q.pop(), Some(vec![9]));
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }
    q.push(vec![7]); // dropped with the queue
}

#[test]
fn reserve_hands_out_each_handle_once() {
    let r = Reserve::new(4);
    assert!(r.wants_refill());
    assert_eq!(r.take(0), None);
    let mut next = 0x1000;
    r.refill(|| {
        next += 0x1000;
        Some(next)
    });
    assert!(!r.wants_refill());
    let mut got: Vec<usize> = (0..4).map(|k| r.take(k).unwrap()).collect();
    assert_eq!(r.take(0), None);
    assert!(r.wants_refill());
    got.sort();
    assert_eq!(got, vec![0x2000, 0x3000, 0x4000, 0x5000]);
}

#[test]
fn facts_need_the_exact_handle() {
    let c = FastComm {
        handle: (7 << 38) | (4000 << 12) | 1,
        idx: 3999,
        ctx: 40,
        rank: 2,
        size: 5,
        peers: crate::core::threads::vci::NO_PEERS,
    };
    publish(&c);
    let got = facts(c.handle).unwrap();
    assert_eq!((got.ctx, got.rank, got.size), (40, 2, 5));
    assert!(facts(c.handle + (1 << 38)).is_none(), "other generation");
    retract(c.idx);
    assert!(facts(c.handle).is_none());
}
