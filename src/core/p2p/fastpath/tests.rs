use super::*;

#[test]
fn contiguous_bytes_accepts_only_plain_predefined_types() {
    let b = [0u8; 16];
    assert_eq!(contiguous_bytes(b.as_ptr(), 2, MPI_INT), Some(8));
    assert_eq!(contiguous_bytes(b.as_ptr(), -1, MPI_INT), None);
    assert_eq!(contiguous_bytes(std::ptr::null(), 1, MPI_INT), None);
    assert_eq!(contiguous_bytes(std::ptr::null(), 0, MPI_INT), Some(0));
    assert_eq!(
        contiguous_bytes(b.as_ptr(), 1, MPI_DOUBLE_INT),
        None,
        "has holes"
    );
    assert_eq!(
        contiguous_bytes(b.as_ptr(), 1, 0x1234_5000),
        None,
        "user type"
    );
}

#[test]
fn contiguous_size_table_agrees_with_the_type_table() {
    for h in 0..0x400usize {
        let want = datatype::predefined(h)
            .filter(|t| t.size == t.extent)
            .map(|t| t.size);
        assert_eq!(datatype::contiguous_size(h), want, "handle {h:#x}");
    }
}

#[test]
fn plain_receives_only() {
    let mut r = Request::new(ReqKind::Recv, 0);
    assert!(plain_recv(&r));
    // A part of a compound operation is internal.
    r.parent = 3;
    r.set_internal(true);
    assert!(!plain_recv(&r));
    for f in [
        flag::DONE,
        flag::USER_FREED,
        flag::PERSISTENT,
        flag::NONCONTIG,
    ] {
        let mut q = Request::new(ReqKind::Recv, 0);
        q.flags |= f;
        assert!(!plain_recv(&q), "flag {f:#x}");
    }
    let mut q = Request::new(ReqKind::Recv, 0);
    q.set_active(false);
    assert!(!plain_recv(&q), "inactive");
    assert!(!plain_recv(&Request::new(ReqKind::Send, 0)), "a send");
    let mut s = Request::new(ReqKind::Recv, 0);
    s.extra();
    assert!(!plain_recv(&s));
}

#[test]
fn finish_status_prefix_stops_at_the_first_unfinished_request() {
    status_pass_stops_at_the_first_unfinished_request(|s, reqs, st| {
        // SAFETY: the pass gets as many statuses as requests.
        unsafe { finish_status_prefix(s, reqs, st, 0) }
    });
}

#[test]
fn finish_status_run_stops_at_the_first_unfinished_request() {
    status_pass_stops_at_the_first_unfinished_request(|s, reqs, st| {
        let n = reqs.len();
        let p = reqs.as_mut_ptr();
        // SAFETY: `p..end` is the array and `st` has as many statuses.
        unsafe {
            let (stop, at) = finish_status_run(s, p, st, p.add(n));
            let done = stop.offset_from(p) as usize;
            assert_eq!(at, st.add(done), "the status pointer pairs with the stop");
            done
        }
    });
}

/// A status pass (`pass` over requests and as many statuses, returning how many it
/// finished from the front) finishes null, shared and complete requests in order, writes
/// their statuses and stops at the first it cannot finish.
fn status_pass_stops_at_the_first_unfinished_request(
    pass: impl Fn(&mut VciState, &mut [MPI_Request], *mut MPI_Status) -> usize,
) {
    let mut s = VciState {
        reqs: Slab::tagged(kind::REQUEST, 0),
        matcher: Default::default(),
        comms: Vec::new(),
        peer_tables: Vec::new(),
    };
    let done = |kind, src| {
        let mut r = Request::new(kind, 0);
        r.set_done(true);
        r.status.source = src;
        r.status.tag = 7;
        r.status.bytes = 12;
        r
    };
    let (_, shared) = s.reqs.insert_handle(done(ReqKind::Send, 0)).unwrap();
    assert_eq!(shared, DONE_SEND_HANDLE);
    let (_, a) = s.reqs.insert_handle(done(ReqKind::Recv, 3)).unwrap();
    let (_, b) = s
        .reqs
        .insert_handle(Request::new(ReqKind::Recv, 0))
        .unwrap();
    let (ci, c) = s.reqs.insert_handle(done(ReqKind::Recv, 5)).unwrap();
    let null = MPI_REQUEST_NULL as MPI_Request;
    // SAFETY: an all-zero MPI_Status is a valid value of the plain C struct.
    let mut st: [MPI_Status; 4] = unsafe { std::mem::zeroed() };
    st[0].MPI_ERROR = 99;
    for x in st.iter_mut().skip(1) {
        x.MPI_internal = [-1; 5];
    }
    // `b` is not complete: `a` before it is finished, `b` and `c` are left alone.
    let mut reqs = [a as MPI_Request, b as MPI_Request, c as MPI_Request, null];
    assert_eq!(pass(&mut s, &mut reqs, st.as_mut_ptr()), 1);
    assert_eq!(reqs, [null, b as MPI_Request, c as MPI_Request, null]);
    assert_eq!(s.reqs.decode(a), None, "freed");
    assert_eq!((st[0].MPI_SOURCE, st[0].MPI_TAG), (3, 7));
    assert_eq!(st[0].MPI_ERROR, 99, "MPI_ERROR untouched on success");
    assert_eq!(s.reqs.decode(c), Some(ci), "after the stop: untouched");
    assert_eq!(st[2].MPI_SOURCE, 0, "after the stop: no status written");
    let bi = s.reqs.decode(b).unwrap();
    s.reqs.get_mut(bi).unwrap().set_done(true);
    let mut rest = [
        b as MPI_Request,
        DONE_SEND_HANDLE as MPI_Request,
        c as MPI_Request,
        null,
    ];
    assert_eq!(pass(&mut s, &mut rest, st.as_mut_ptr()), 4);
    assert_eq!(rest, [null, null, null, null]);
    assert_eq!(
        (st[1].MPI_SOURCE, st[1].MPI_TAG),
        (MPI_ANY_SOURCE, MPI_ANY_TAG)
    );
    assert_eq!((st[2].MPI_SOURCE, st[2].MPI_TAG), (5, 7));
    assert_eq!(
        (st[3].MPI_SOURCE, st[3].MPI_TAG),
        (MPI_ANY_SOURCE, MPI_ANY_TAG)
    );
    for x in [&st[1], &st[3]] {
        assert_eq!(
            crate::core::p2p::request::get_bytes(x),
            0,
            "empty: no bytes"
        );
        assert_eq!(x.MPI_internal[2], 0, "empty: not cancelled");
    }
    // The same request twice: the second entry stops the pass.
    let (_, d) = s.reqs.insert_handle(done(ReqKind::Recv, 1)).unwrap();
    let mut twice = [d as MPI_Request, d as MPI_Request];
    assert_eq!(pass(&mut s, &mut twice, st.as_mut_ptr()), 1);
    assert_eq!(twice, [null, d as MPI_Request]);
}

#[test]
fn finishable_needs_done_active_plain_and_successful() {
    let mut r = Request::new(ReqKind::Recv, 0);
    assert!(!finishable(&r), "not done");
    r.set_done(true);
    assert!(finishable(&r));
    r.status.error = MPI_ERR_TRUNCATE;
    assert!(!finishable(&r), "failed");
    r.status.error = MPI_SUCCESS;
    r.set_user_freed(true);
    assert!(!finishable(&r), "freed");
    r.set_user_freed(false);
    r.set_persistent(true);
    assert!(!finishable(&r), "persistent");
    r.set_persistent(false);
    r.extra();
    assert!(!finishable(&r), "out-of-line state");
}

#[test]
fn generalized_requests_stay_off_the_fast_paths() {
    // MPI_Grequest_start makes such a request; only the general path runs its callbacks.
    let mut g = Request::new(ReqKind::Generalized, 0);
    g.extra().grequest = Some(crate::core::p2p::request::Grequest {
        query: 0,
        free: 0,
        cancel: 0,
        extra_state: 0,
    });
    assert!(!plain_recv(&g));
    assert!(!finishable(&g), "incomplete");
    g.set_done(true);
    assert!(!finishable(&g), "complete");
}

#[test]
fn finish_each_frees_complete_requests_and_stops_at_the_first_other() {
    let mut s = VciState {
        reqs: Slab::tagged(kind::REQUEST, 0),
        matcher: Default::default(),
        comms: Vec::new(),
        peer_tables: Vec::new(),
    };
    let done = |kind| {
        let mut r = Request::new(kind, 0);
        r.set_done(true);
        r
    };
    // Index 0 holds the shared complete send request (`DONE_SEND_HANDLE`).
    let (_, shared) = s.reqs.insert_handle(done(ReqKind::Send)).unwrap();
    assert_eq!(shared, DONE_SEND_HANDLE);
    let (_, a) = s.reqs.insert_handle(done(ReqKind::Recv)).unwrap();
    let (_, b) = s
        .reqs
        .insert_handle(Request::new(ReqKind::Recv, 0))
        .unwrap();
    let (ci, c) = s.reqs.insert_handle(done(ReqKind::Recv)).unwrap();
    let null = MPI_REQUEST_NULL as MPI_Request;
    let mut reqs = [
        a as MPI_Request,
        DONE_SEND_HANDLE as MPI_Request,
        b as MPI_Request,
        c as MPI_Request,
        null,
    ];
    // `b` is not complete: those before it are finished, it and those after it stay.
    assert!(!finish_each(&mut s, &mut reqs));
    assert_eq!(reqs[..2], [null, null]);
    assert_eq!(reqs[2..4], [b as MPI_Request, c as MPI_Request]);
    assert_eq!(s.reqs.decode(a), None, "freed");
    assert_eq!(s.reqs.decode(c), Some(ci), "untouched");
    // The same request listed twice: the second entry is left to the slow path.
    s.reqs
        .get_mut(s.reqs.decode(b).unwrap())
        .unwrap()
        .set_done(true);
    let mut twice = [b as MPI_Request, b as MPI_Request];
    assert!(!finish_each(&mut s, &mut twice));
    assert_eq!(twice, [null, b as MPI_Request]);
    let mut rest = [c as MPI_Request, null, DONE_SEND_HANDLE as MPI_Request];
    assert!(finish_each(&mut s, &mut rest));
    assert_eq!(rest, [null; 3]);
    assert_eq!(s.reqs.len(), 1, "the shared request stays");
}

#[test]
fn deliver_truncates_and_reports() {
    let mut out = [0u8; 4];
    let mut r = Request::new(ReqKind::Recv, 0);
    r.buf = out.as_mut_ptr();
    r.cap = 4;
    let env = Envelope {
        ctx: 0,
        src: 2,
        tag: 9,
    };
    let data = [1u8, 2, 3, 4, 5, 6];
    deliver(&mut r, &env, data.as_ptr(), data.len());
    assert!(r.done());
    assert_eq!(out, [1, 2, 3, 4]);
    assert_eq!(r.status.error, MPI_ERR_TRUNCATE);
    assert_eq!((r.status.source, r.status.tag, r.status.bytes), (2, 9, 4));
}
