use super::*;

fn q(p: i32, bytes: usize, total: usize) -> Query {
    Query::new(p, bytes, total)
}

fn default() -> Table {
    Table::parse(DEFAULT_TABLE).unwrap()
}

/// The schedule algorithm `t` picks (the shared-memory one passed over, as [`select`] does).
fn pick(t: &Table, c: Coll, q: &Query) -> (&'static str, u32) {
    let ch = t.select_skipping(c, q, &[SHM]).unwrap();
    (ch.name, ch.k)
}

const SIZES: [usize; 14] = [
    0,
    1,
    8,
    255,
    256,
    257,
    16383,
    16384,
    32768,
    32769,
    65536,
    262143,
    262144,
    8 << 20,
];

#[test]
fn default_table_covers_every_collective() {
    let t = default();
    for c in COLLS {
        assert!(t.has(c), "{c:?}");
        assert!(t.select(c, &q(1, 0, 0)).is_some(), "{c:?}");
    }
}

/// The built-in table reproduces the thresholds the algorithms used before the table.
#[test]
fn default_table_reproduces_the_previous_choices() {
    let t = default();
    for p in 1..40 {
        for &b in &SIZES {
            let total = b.saturating_mul(p as usize);
            // Bcast: scatter + allgather from 256 KiB on more than two ranks.
            let want = if p > 2 && b >= 256 * 1024 {
                ("scatter_allgather", 0)
            } else {
                ("knomial", 2)
            };
            assert_eq!(pick(&t, Coll::Bcast, &q(p, b, b)), want, "bcast {p} {b}");
            // Allgather.
            let want = if p <= 2 || total > 512 * 1024 {
                "ring"
            } else if p & (p - 1) == 0 {
                "recursive_doubling"
            } else {
                "bruck"
            };
            assert_eq!(
                pick(&t, Coll::Allgather, &q(p, b, total)).0,
                want,
                "allgather {p} {b}"
            );
            // Allreduce (commutative; the others always recursive doubling).
            let want = if b < 16 * 1024 {
                "recursive_doubling"
            } else if b >= 4 << 20 && p >= 16 {
                "ring"
            } else {
                "rabenseifner"
            };
            assert_eq!(pick(&t, Coll::Allreduce, &q(p, b, b)).0, want);
            let mut nc = q(p, b, b);
            nc.commutative = false;
            assert_eq!(pick(&t, Coll::Allreduce, &nc).0, "recursive_doubling");
            // Alltoall.
            let want = if p <= 2 || b > 32 * 1024 {
                "pairwise"
            } else if b <= 256 && p >= 8 {
                "bruck"
            } else {
                "scattered"
            };
            assert_eq!(pick(&t, Coll::Alltoall, &q(p, b, total)).0, want);
            // Gather and scatter.
            let want = if p > 2 && total <= 64 * 1024 {
                "binomial"
            } else {
                "linear"
            };
            assert_eq!(pick(&t, Coll::Gather, &q(p, b, total)).0, want);
            assert_eq!(pick(&t, Coll::Scatter, &q(p, b, total)).0, want);
            assert_eq!(pick(&t, Coll::Reduce, &q(p, b, b)), ("knomial", 2));
        }
    }
}

#[test]
fn conditions_parse_and_evaluate() {
    let x = q(6, 100, 600);
    let holds = |k: &str| Cond::parse(k).unwrap().holds(&x);
    assert!(holds("any"));
    assert!(holds("comm_size=any"));
    assert!(holds("comm_type=intra"));
    assert!(!holds("comm_type=inter"));
    assert!(holds("comm_size<=6") && !holds("comm_size<6") && holds("comm_size<7"));
    assert!(holds("comm_size=6") && !holds("comm_size=5"));
    assert!(holds("comm_size>=6") && !holds("comm_size>6") && holds("comm_size>5"));
    assert!(!holds("comm_size=pow2") && !holds("comm_size_pow2"));
    assert!(Cond::parse("comm_size=pow2").unwrap().holds(&q(8, 0, 0)));
    assert!(holds("avg_msg_size<=100") && !holds("avg_msg_size<100"));
    assert!(holds("total_msg_size<=600") && !holds("total_msg_size<600"));
    assert!(holds("count<=100") && !holds("count<=99"));
    assert!(holds("is_commutative=yes") && !holds("is_commutative=no"));
    for bad in [
        "comm_size<=x",
        "comm_siz<=4",
        "nonsense",
        "avg_msg_size<=",
        "is_commutative=maybe",
    ] {
        assert!(Cond::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn first_match_wins_in_file_order() {
    // Keys out of alphabetical order: the parser must keep them as written.
    let t = Table::parse(
        r#"{"collective=bcast": {
            "comm_size<=4": {"algorithm=scatter_allgather": {}},
            "any": {"algorithm=knomial": {"k=3": {}}},
            "comm_size<=100": {"algorithm=kring": {}}
        }}"#,
    )
    .unwrap();
    assert_eq!(pick(&t, Coll::Bcast, &q(4, 1, 1)), ("scatter_allgather", 0));
    assert_eq!(pick(&t, Coll::Bcast, &q(5, 1, 1)), ("knomial", 3));
    assert!(!t.has(Coll::Allreduce));
    assert_eq!(t.select(Coll::Allreduce, &q(5, 1, 1)), None);
}

#[test]
fn a_subtree_that_selects_nothing_falls_through() {
    let t = Table::parse(
        r#"{"collective=allgather": {
            "comm_size<=8": {"avg_msg_size<=16": {"algorithm=bruck": {}}},
            "any": {"algorithm=recursive_multiplying": {"k=4": {}}}
        }}"#,
    )
    .unwrap();
    assert_eq!(pick(&t, Coll::Allgather, &q(4, 8, 32)), ("bruck", 0));
    assert_eq!(
        pick(&t, Coll::Allgather, &q(4, 64, 256)),
        ("recursive_multiplying", 4)
    );
}

#[test]
fn algorithms_defaults_and_aliases() {
    let t = Table::parse(
        r#"{"collective=allreduce": {"comm_size<3": {"algorithm=reduce_bcast": {}},
                                      "any": {"algorithm=recursive_multiplying": {}}},
            "collective=reduce": {"any": {"algorithm=binomial": {}}},
            "collective=allgather": {"any": {"algorithm=kring": {"k=4": {}}}}}"#,
    )
    .unwrap();
    assert_eq!(pick(&t, Coll::Allreduce, &q(2, 1, 1)), ("knomial", 2));
    assert_eq!(
        pick(&t, Coll::Allreduce, &q(3, 1, 1)),
        ("recursive_multiplying", 2)
    );
    assert_eq!(pick(&t, Coll::Reduce, &q(3, 1, 1)), ("knomial", 2));
    assert_eq!(pick(&t, Coll::Allgather, &q(3, 1, 3)), ("kring", 4));
}

#[test]
fn bad_tables_are_rejected_with_their_path() {
    let err = |s: &str| Table::parse(s).unwrap_err();
    assert!(err("{").contains("EOF"), "{}", err("{"));
    assert!(err(r#"{"collective=bcast": 3}"#).contains("object"));
    assert!(err(r#"{"bcast": {}}"#).contains("collective=<name>"));
    assert!(err(r#"{"collective=frobnicate": {}}"#).contains("unknown collective"));
    let e = err(r#"{"collective=bcast": {"comm_size<=4": {"algorithm=magic": {}}}}"#);
    assert!(
        e.contains("unknown algorithm \"magic\"") && e.contains("comm_size<=4"),
        "{e}"
    );
    let e = err(r#"{"collective=bcast": {"any": {"algorithm=knomial": {"k=1": {}}}}}"#);
    assert!(e.contains("k must be an integer >= 2"), "{e}");
    let e = err(r#"{"collective=bcast": {"any": {"algorithm=knomial": {"r=3": {}}}}}"#);
    assert!(e.contains("no parameter"), "{e}");
    let e = err(r#"{"collective=allgather": {"any": {"algorithm=ring": {"k=3": {}}}}}"#);
    assert!(e.contains("no parameter"), "{e}");
    let e = err(r#"{"collective=bcast": {"comm_size~4": {"algorithm=knomial": {}}}}"#);
    assert!(e.contains("unknown condition"), "{e}");
}

#[test]
fn overrides() {
    let f = |c, v| parse_forced(c, v).unwrap().map(|c| (c.name, c.k));
    assert_eq!(f(Coll::Bcast, ""), None);
    assert_eq!(f(Coll::Bcast, "auto"), None);
    assert_eq!(f(Coll::Bcast, "knomial"), Some(("knomial", 2)));
    assert_eq!(f(Coll::Bcast, " knomial:k=4 "), Some(("knomial", 4)));
    assert_eq!(f(Coll::Bcast, "binomial"), Some(("knomial", 2)));
    assert_eq!(f(Coll::Allreduce, "ring"), Some(("ring", 0)));
    assert_eq!(f(Coll::Allreduce, "reduce_bcast"), Some(("knomial", 2)));
    assert_eq!(
        f(Coll::Allreduce, "recursive_multiplying:k=3"),
        Some(("recursive_multiplying", 3))
    );
    assert_eq!(f(Coll::Allgather, "kring:k=1"), Some(("kring", 1)));
    assert_eq!(f(Coll::Allreduce, "kring:k=3"), Some(("kring", 3)));
    assert!(parse_forced(Coll::Allreduce, "ringg").is_err());
    assert!(parse_forced(Coll::Allreduce, "knomial:k=0").is_err());
    assert!(parse_forced(Coll::Allreduce, "knomial:k").is_err());
    assert!(parse_forced(Coll::Allreduce, "reduce_bcast:k=3").is_err());
    assert!(parse_forced(Coll::Gather, "knomial").is_err());
}

/// The built-in table sends small calls on small communicators to the shared-memory path,
/// and the schedule builders never see that algorithm: its rules fall through.
#[test]
fn default_table_picks_shm_for_small_calls_on_small_communicators() {
    let t = default();
    let shm_colls = [
        Coll::Barrier,
        Coll::Bcast,
        Coll::Reduce,
        Coll::Allreduce,
        Coll::Allgather,
        Coll::Alltoall,
        Coll::ReduceScatter,
    ];
    for c in shm_colls {
        for p in 2..=8 {
            assert_eq!(
                t.select(c, &q(p, 8, 8 * p as usize)).unwrap().name,
                SHM,
                "{c:?} {p}"
            );
            assert_ne!(pick(&t, c, &q(p, 8, 8 * p as usize)).0, SHM, "{c:?} {p}");
        }
        assert_ne!(t.select(c, &q(64, 8, 512)).unwrap().name, SHM, "{c:?}");
        if c != Coll::Barrier {
            assert_ne!(
                t.select(c, &q(2, 1 << 20, 2 << 20)).unwrap().name,
                SHM,
                "{c:?}"
            );
        }
    }
}

/// The single-copy on-node collectives (`coll::cma`) where they were measured to win over
/// the message schedules (benches/README.md, "Contention-aware single-copy collectives"):
/// Scatter from 256 KiB on 3-8 ranks, Gather from 256 KiB on 4-8, Allgather and Alltoall
/// from 8 KiB (above a slot area) to 128 KiB on two ranks and further on more (Allgather
/// to 1 MiB; Alltoall to 128 KiB, and again from 1 MiB on 4-8 ranks).
#[test]
fn default_table_picks_single_copy_collectives_where_measured() {
    let t = default();
    let shm =
        |c: Coll, p: i32, b: usize| t.select(c, &q(p, b, b * p as usize)).unwrap().name == SHM;
    for p in 2..=8 {
        assert_eq!(shm(Coll::Scatter, p, 256 << 10), p > 2, "scatter {p}");
        assert!(!shm(Coll::Scatter, p, (256 << 10) - 1), "scatter {p}");
        assert_eq!(shm(Coll::Gather, p, 8 << 20), p > 3, "gather {p}");
        assert!(!shm(Coll::Gather, p, 64 << 10), "gather {p}");
        for c in [Coll::Allgather, Coll::Alltoall] {
            assert!(!shm(c, p, 8191), "{c:?} {p}");
            assert!(shm(c, p, 8192), "{c:?} {p}");
            assert!(shm(c, p, 128 << 10), "{c:?} {p}");
        }
        assert_eq!(shm(Coll::Allgather, p, 1 << 20), p > 2, "allgather {p}");
        assert!(!shm(Coll::Alltoall, p, 256 << 10), "alltoall {p}");
        assert_eq!(shm(Coll::Alltoall, p, 1 << 20), p > 3, "alltoall {p}");
    }
    for c in [Coll::Scatter, Coll::Gather, Coll::Allgather, Coll::Alltoall] {
        assert!(!shm(c, 9, 1 << 20), "{c:?} 9");
    }
}

/// The shared-memory path's size limits in the built-in table: up to 4 KiB per block for
/// reduce, allreduce and allgather, 2 KiB for alltoall and reduce_scatter (each rank's data
/// must also fit its slot area, which `coll::shm::offer` checks), message schedules above.
/// Broadcast goes further, since above the slot size it copies straight from the root's
/// buffer with CMA: 256 KiB on two ranks (where the split halves lose to the pipelined
/// message path above that), 4 MiB on three to eight.
#[test]
fn default_table_shm_size_limits() {
    let t = default();
    let limits = [
        (Coll::Reduce, 4096),
        (Coll::Allreduce, 4096),
        (Coll::Allgather, 4096),
        (Coll::Alltoall, 2048),
        (Coll::ReduceScatter, 2048),
    ];
    for (c, max) in limits {
        for p in 2..=8 {
            let shm = |b: usize| t.select(c, &q(p, b, b * p as usize)).unwrap().name == SHM;
            assert!(shm(max), "{c:?} {p} {max}");
            assert!(!shm(max + 1), "{c:?} {p} {}", max + 1);
        }
    }
    for p in 2..=8 {
        let max = if p == 2 { 256 << 10 } else { 4 << 20 };
        let shm = |b: usize| t.select(Coll::Bcast, &q(p, b, b)).unwrap().name == SHM;
        assert!(shm(max), "bcast {p} {max}");
        assert!(!shm(max + 1), "bcast {p} {}", max + 1);
    }
}

#[test]
fn shm_leaves_fall_through_for_the_schedule_builders() {
    let t = Table::parse(
        r#"{"collective=allreduce": {
              "comm_size<=4": { "algorithm=shm": {} },
              "any": { "algorithm=ring": {} } }}"#,
    )
    .unwrap();
    assert_eq!(t.select(Coll::Allreduce, &q(2, 8, 8)).unwrap().name, SHM);
    assert_eq!(
        t.select_skipping(Coll::Allreduce, &q(2, 8, 8), &[SHM])
            .unwrap()
            .name,
        "ring"
    );
    assert_eq!(
        parse_forced(Coll::Barrier, "shm").unwrap().unwrap().name,
        SHM
    );
    assert_eq!(
        parse_forced(Coll::Gather, "shm").unwrap().unwrap().name,
        SHM
    );
    assert!(parse_forced(Coll::Gather, "multi_object_bruck").is_err());
}

#[test]
fn every_collective_has_its_own_name_and_knob() {
    for (i, c) in COLLS.iter().enumerate() {
        assert_eq!(*c as usize, i, "COLLS in declaration order");
    }
    assert_eq!(Coll::Bcast.name(), "bcast");
    assert_eq!(Coll::Allreduce.env_var(), "HYMPI_ALLREDUCE_ALGORITHM");
    assert_eq!(Coll::ReduceScatter.name(), "reduce_scatter");
    assert_eq!(Coll::Barrier.env_var(), "HYMPI_BARRIER_ALGORITHM");
    for c in COLLS {
        assert_eq!(
            c.env_var(),
            format!("HYMPI_{}_ALGORITHM", c.name().to_uppercase()),
            "the knob of {}",
            c.name()
        );
    }
}

/// The node-aware algorithms: picked by the built-in table only for queries that describe
/// several nodes with several ranks each, for the collectives that have them, at the sizes
/// benches/node-aware measured them faster (docs/collectives.md).
#[test]
fn default_table_picks_node_aware_algorithms_only_across_nodes() {
    let t = default();
    let nodes = |p: i32, nodes: usize, b: usize| Query {
        node_count: nodes,
        comm_avg_ppn: p as usize / nodes.max(1),
        ..q(p, b, b)
    };
    let colls = [
        Coll::Bcast,
        Coll::Reduce,
        Coll::Allreduce,
        Coll::Allgather,
        Coll::Barrier,
        Coll::Gather,
        Coll::Scatter,
    ];
    for c in colls {
        for &b in &SIZES {
            let want = match c {
                Coll::Allgather if b > 128 * 1024 => MULTI_OBJECT_RING,
                Coll::Gather | Coll::Scatter if b > 32 * 1024 => "(flat)",
                _ => SMP,
            };
            let got = pick(&t, c, &nodes(4, 2, b)).0;
            let got = if NODE_AWARE.contains(&got) {
                got
            } else {
                "(flat)"
            };
            assert_eq!(got, want, "{c:?} {b} on 2 x 2");
            // Reductions on more nodes: two levels up to 16 KiB only.
            if matches!(c, Coll::Reduce | Coll::Allreduce) {
                let three = pick(&t, c, &nodes(6, 3, b)).0;
                assert_eq!(three == SMP, b <= 16384, "{c:?} {b} on 3 x 2");
            }
            for (what, q) in [
                ("1 rank per node", nodes(4, 4, b)),
                ("one node", nodes(4, 1, b)),
                ("no layout", q(4, b, b)),
            ] {
                let got = pick(&t, c, &q).0;
                assert!(!NODE_AWARE.contains(&got), "{c:?} {b}: {what}: {got}");
            }
        }
    }
    for c in [Coll::Alltoall, Coll::ReduceScatter] {
        assert!(
            !NODE_AWARE.contains(&pick(&t, c, &nodes(4, 2, 8)).0),
            "{c:?}"
        );
    }
}

/// PiP-MColl's small-message multi-object algorithms: from 8 nodes on at 8 bytes (the
/// simulator's predictions, docs/collectives.md), allgather and allreduce only up to 18
/// ranks per node; the two-level ones below 8 nodes and above 8 bytes.
#[test]
fn default_table_picks_multi_object_algorithms_on_many_nodes() {
    let t = default();
    let at = |nodes: usize, ppn: usize, b: usize| Query {
        node_count: nodes,
        comm_avg_ppn: ppn,
        node_aware: true,
        ..q((nodes * ppn) as i32, b, b * nodes * ppn)
    };
    for (c, multi) in [
        (Coll::Allgather, MULTI_OBJECT_BRUCK),
        (Coll::Allreduce, MULTI_OBJECT_BRUCK),
        (Coll::Scatter, MULTI_OBJECT_TREE),
    ] {
        assert_eq!(pick(&t, c, &at(16, 18, 8)).0, multi, "{c:?} 16 x 18");
        assert_eq!(pick(&t, c, &at(8, 2, 1)).0, multi, "{c:?} 8 x 2");
        assert_eq!(pick(&t, c, &at(4, 18, 8)).0, SMP, "{c:?} 4 x 18");
        assert_eq!(pick(&t, c, &at(16, 18, 64)).0, SMP, "{c:?} 16 x 18, 64 B");
        let wide = pick(&t, c, &at(16, 36, 8)).0;
        assert_eq!(wide == multi, c == Coll::Scatter, "{c:?} 16 x 36: {wide}");
    }
}

#[test]
fn node_conditions_parse_and_compare() {
    let t = Table::parse(
        r#"{"collective=bcast": {
            "node_count>=3": { "algorithm=ring_never": {} },
            "any": { "algorithm=knomial": {} } }}"#,
    );
    assert!(t.is_err(), "unknown algorithm names are refused");
    let t = Table::parse(
        r#"{"collective=bcast": {
            "node_count>=3": { "algorithm=scatter_allgather": {} },
            "comm_avg_ppn<2": { "algorithm=kring": {} },
            "any": { "algorithm=knomial": {} } }}"#,
    )
    .unwrap();
    let with = |p: i32, n: usize, ppn: usize| Query {
        node_count: n,
        comm_avg_ppn: ppn,
        ..q(p, 8, 8)
    };
    assert_eq!(pick(&t, Coll::Bcast, &with(6, 3, 2)).0, "scatter_allgather");
    assert_eq!(pick(&t, Coll::Bcast, &with(2, 2, 1)).0, "kring");
    assert_eq!(pick(&t, Coll::Bcast, &with(4, 2, 2)).0, "knomial");
    // Unset layout fields: one node holding every rank.
    assert_eq!(pick(&t, Coll::Bcast, &q(1, 8, 8)).0, "kring");
    assert_eq!(pick(&t, Coll::Bcast, &q(5, 8, 8)).0, "knomial");
}
