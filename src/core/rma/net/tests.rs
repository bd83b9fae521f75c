use super::*;

fn round_trip(c: &Call) -> Request<'_> {
    Request::parse(&c.msg).expect("a well-formed request")
}

#[test]
fn requests_read_back_as_built() {
    let t = Shape::Contig { addr: 24, len: 16 };
    let data = [7u8; 16];
    let o = Shape::Contig {
        addr: data.as_ptr() as usize,
        len: 16,
    };
    // SAFETY: `o` describes `data`.
    let put = unsafe { Call::put(1, 3, &o, &t, false) };
    let r = round_trip(&put);
    assert_eq!(r.kind, Kind::Put);
    assert_eq!(r.segs, vec![(24, 16)]);
    assert_eq!(r.data, &data[..]);
    let get = Call::get(1, 3, o.clone(), &t);
    let r = round_trip(&get);
    assert_eq!((r.kind, r.data.len(), get.answer), (Kind::Get, 0, 16));
    assert!(r.head & SPLIT == 0 && matches!(get.land, Landing::Shape(_)));
    // A large get's data comes by a receive of its own, straight into the buffer.
    let big = Shape::Contig {
        addr: 0,
        len: SPLIT_MIN,
    };
    let split = Call::get(1, 3, big.clone(), &big);
    assert!(round_trip(&split).head & SPLIT != 0);
    assert!(split.answer == 0 && matches!(split.land, Landing::Placed(_)));
    // A large put's data goes from the origin buffer by a send of its own.
    // SAFETY: the buffer is not read until the call is started (never here).
    let split = unsafe { Call::put(1, 3, &big, &big, false) };
    let r = round_trip(&split);
    assert!(r.head & SPLIT != 0 && r.data.is_empty() && r.segs == vec![(0, SPLIT_MIN)]);
    assert!(matches!(
        split.data_from,
        Some(Shape::Contig { len: SPLIT_MIN, .. })
    ));
    assert!(put.data_from.is_none() && round_trip(&put).head & SPLIT == 0);
    // So does a large accumulate's (not a `MPI_NO_OP`'s, which has none).
    // SAFETY: as above.
    let split = unsafe { Call::accumulate(1, 3, &big, &big, None, MPI_SUM, MPI_INT, false) };
    let r = round_trip(&split);
    assert!(r.head & SPLIT != 0 && r.data.is_empty() && split.data_from.is_some());
    // SAFETY: as above.
    let read = unsafe {
        Call::accumulate(
            1,
            3,
            &big,
            &big,
            Some(big.clone()),
            MPI_NO_OP,
            MPI_INT,
            false,
        )
    };
    assert!(round_trip(&read).head & SPLIT == 0 && read.data_from.is_none());
    // A large fetch's old data lands straight in the result buffer.
    let r = round_trip(&read);
    assert!(r.head & FETCH_APART != 0 && r.head & ANSWER != 0 && read.answered);
    assert!(read.answer == 0 && matches!(read.land, Landing::Placed(_)));
    // SAFETY: as above.
    let acc = unsafe { Call::accumulate(1, 2, &o, &t, Some(o.clone()), MPI_SUM, MPI_INT, false) };
    let r = round_trip(&acc);
    assert_eq!((r.kind, r.op, r.basic), (Kind::Acc, MPI_SUM, MPI_INT));
    assert!(r.head & FETCH != 0 && r.head & FETCH_APART == 0);
    // SAFETY: as above; `MPI_NO_OP` carries no data.
    let read =
        unsafe { Call::accumulate(1, 2, &o, &t, Some(o.clone()), MPI_NO_OP, MPI_INT, false) };
    assert!(round_trip(&read).data.is_empty());
    let lock = Call::sync(1, 0, Kind::Lock, Some(LockKind::Exclusive));
    let r = round_trip(&lock);
    assert_eq!(r.kind, Kind::Lock);
    assert!(r.head & EXCLUSIVE != 0);
    let unlock = Call::sync(1, 0, Kind::Unlock, Some(LockKind::Shared));
    assert_eq!(round_trip(&unlock).head & EXCLUSIVE, 0);
    // Who answers: fetching requests and locks always, puts and releases when asked,
    // epoch notices never; unanswered puts need a flush, unanswered releases one at free.
    assert!(put.unflushed_target() == Some(3) && round_trip(&put).head & ANSWER == 0);
    // SAFETY: as above.
    let asked = unsafe { Call::put(1, 3, &o, &t, true) };
    assert!(asked.answered && asked.unflushed_target().is_none());
    assert!(get.answered && acc.answered && lock.answered);
    assert!(!unlock.answered && unlock.released_target() == Some(0));
    let answered_release = Call::unlock(1, 0, LockKind::Exclusive, true);
    assert!(answered_release.answered && answered_release.released_target().is_none());
    assert!(round_trip(&answered_release).head & EXCLUSIVE != 0);
    assert!(!Call::sync(1, 0, Kind::Post, None).answered);
    assert!(Call::flush(1, 0).answered);
}

#[test]
fn malformed_requests_are_refused() {
    let c = Call::sync(1, 0, Kind::Post, None);
    assert!(Request::parse(&c.msg[..8 * WORDS - 1]).is_err());
    let mut long = c.msg.clone();
    long.push(0);
    assert!(Request::parse(&long).is_err());
    let mut unknown = c.msg.clone();
    unknown[0] = 99;
    assert!(Request::parse(&unknown).is_err());
    let mut huge = c.msg.clone();
    huge[32..40].copy_from_slice(&u64::MAX.to_ne_bytes());
    assert!(Request::parse(&huge).is_err());
}

#[test]
fn segments_are_checked_against_the_memory() {
    let fixed = Memory {
        base: 0x1000,
        size: 64,
        dynamic: false,
        atomics: false,
    };
    assert_eq!(
        place(&fixed, None, &[(0, 8), (56, 8)]),
        Ok(vec![(0x1000, 8), (0x1038, 8)])
    );
    assert_eq!(
        place(&fixed, None, &[(60, 8)]).unwrap_err().0,
        MPI_ERR_RMA_RANGE
    );
    assert_eq!(
        place(&fixed, None, &[(usize::MAX, 2)]).unwrap_err().0,
        MPI_ERR_RMA_RANGE
    );
    assert!(place(&fixed, None, &[(1000, 0)]).is_ok());
    let dynamic = Memory {
        base: 0,
        size: 0,
        dynamic: true,
        atomics: false,
    };
    let regions = [(0x5000u64, 0x100u64), (0x9000, 0x10)];
    assert_eq!(
        place(&dynamic, Some(&regions), &[(0x5080, 0x80), (0x9000, 0x10)]),
        Ok(vec![(0x5080, 0x80), (0x9000, 0x10)])
    );
    assert!(place(&dynamic, Some(&regions), &[(0x50f0, 0x20)]).is_err());
    assert!(place(&dynamic, Some(&regions), &[(0x7000, 4)]).is_err());
}

#[test]
fn answers_have_tags_of_their_own() {
    let a = tag::rma_reply(1);
    let b = tag::rma_reply(2);
    assert_ne!(a, b);
    assert!(a < tag::RMA);
    // Put data never matches an answer, whoever numbered them.
    assert!((1..1000).all(|s| tag::rma_data(s) < tag::rma_reply(u64::MAX % (1 << 24))));
    assert_ne!(tag::rma_data(1), tag::rma_data(2));
}
