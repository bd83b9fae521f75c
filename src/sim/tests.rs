//! The simulator against closed forms, hand-made schedules and the model's resource rules.

use super::build::{programs, Op, OpKind, Program};
use super::model::Link;
use super::*;
use crate::coll::tuning::Coll;

const LINK: Link = Link {
    latency: 1.5e-6,
    overhead: 0.3e-6,
    gap: 0.01e-6,
    per_byte: 0.1e-9,
};

fn call(coll: Coll, algo: &str, bytes: usize) -> Call {
    Call {
        coll,
        algo: Algorithm::parse(algo).unwrap(),
        bytes,
        root: 0,
    }
}

fn time(c: &Call, m: &Machine, model: &Model) -> f64 {
    run(c, m, model, Options::default()).unwrap().time()
}

fn assert_close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs(),
        "got {got:e}, want {want:e}"
    );
}

/// One message's time on `LINK`.
fn hop(m: usize) -> f64 {
    LINK.latency + 2.0 * LINK.overhead + m as f64 * LINK.per_byte
}

#[test]
fn binomial_bcast_is_log_p_hops() {
    let model = Model::uniform(LINK);
    for k in 1..=6 {
        let p = 1 << k;
        for m in [8, 4096, 1 << 20] {
            let t = time(
                &call(Coll::Bcast, "knomial", m),
                &Machine::regular(p, 1),
                &model,
            );
            assert_close(t, k as f64 * hop(m));
        }
    }
}

#[test]
fn ring_allgather_is_p_minus_1_hops() {
    let model = Model::uniform(LINK);
    for p in [2, 3, 5, 8, 13] {
        let m = 1000;
        let t = time(
            &call(Coll::Allgather, "ring", m),
            &Machine::regular(p, 1),
            &model,
        );
        assert_close(t, (p - 1) as f64 * hop(m));
    }
}

#[test]
fn recursive_doubling_allreduce_is_log_p_exchanges_and_reductions() {
    let mut model = Model::uniform(LINK);
    model.reduce_per_byte = 0.2e-9;
    for k in 1..=5 {
        let p = 1 << k;
        let m = 8 * 1024;
        let t = time(
            &call(Coll::Allreduce, "recursive_doubling", m),
            &Machine::regular(p, 1),
            &model,
        );
        assert_close(t, k as f64 * (hop(m) + m as f64 * model.reduce_per_byte));
    }
}

/// A program of single-step rounds.
fn prog(rounds: &[(OpKind, u32, u64)]) -> Program {
    let mut p = Program::default();
    for &(kind, peer, bytes) in rounds {
        p.push_round(&[Op { kind, peer, bytes }]);
    }
    p
}

#[test]
fn a_schedule_that_deadlocks_is_reported() {
    let m = Machine::regular(2, 1);
    let progs = vec![
        prog(&[(OpKind::Recv, 1, 8), (OpKind::Send, 1, 8)]),
        prog(&[(OpKind::Recv, 0, 8), (OpKind::Send, 0, 8)]),
    ];
    let e = simulate(&Model::default(), &m, &progs, Options::default()).unwrap_err();
    assert_eq!(
        e,
        SimError::Deadlock(vec![(0, 0, vec![1]), (1, 0, vec![0])])
    );
    assert!(e.to_string().contains("deadlocks"));
    // Swapping one side's order resolves it.
    let progs = vec![
        prog(&[(OpKind::Send, 1, 8), (OpKind::Recv, 1, 8)]),
        prog(&[(OpKind::Recv, 0, 8), (OpKind::Send, 0, 8)]),
    ];
    assert!(simulate(&Model::default(), &m, &progs, Options::default()).is_ok());
}

#[test]
fn an_unreceived_message_is_reported() {
    let m = Machine::regular(2, 1);
    let progs = vec![prog(&[(OpKind::Send, 1, 8)]), prog(&[(OpKind::Copy, 0, 8)])];
    let e = simulate(&Model::default(), &m, &progs, Options::default()).unwrap_err();
    assert_eq!(e, SimError::Unreceived(0, 1));
}

#[test]
fn ranks_of_a_node_share_its_nic() {
    // Every rank of node 0 sends 1 MiB to its counterpart on node 1 in one round: the
    // node's NIC injects them one after another.
    let model = Model::uniform(LINK);
    let m = 1 << 20;
    let pairs = |k: u32| -> Vec<Program> {
        let mut v: Vec<Program> = (0..k).map(|i| prog(&[(OpKind::Send, k + i, m)])).collect();
        v.extend((0..k).map(|i| prog(&[(OpKind::Recv, i, m)])));
        v
    };
    let one = simulate(
        &model,
        &Machine::regular(2, 1),
        &pairs(1),
        Options::default(),
    )
    .unwrap();
    let four = simulate(
        &model,
        &Machine::regular(2, 4),
        &pairs(4),
        Options::default(),
    )
    .unwrap();
    let wire = m as f64 * LINK.per_byte;
    assert_close(one.time(), hop(m as usize));
    assert!(four.time() > one.time() + 2.9 * wire, "{}", four.time());
    assert_eq!(four.inter_messages, 4);
}

#[test]
fn concurrent_cma_reads_of_one_process_contend() {
    // A linear scatter of 1 MiB blocks on one node of 8: the others all read the root.
    let mut model = Model::default();
    let c = call(Coll::Scatter, "linear", 1 << 20);
    let node = Machine::regular(1, 8);
    let contended = time(&c, &node, &model);
    model.cma.quadratic = 0.0;
    model.cma.linear = 1.0;
    let free = time(&c, &node, &model);
    assert!(contended > free * 1.5, "{contended:e} vs {free:e}");
}

#[test]
fn the_critical_path_ends_at_the_last_rank() {
    let model = Model::default();
    let m = Machine::regular(4, 2);
    let out = run(
        &call(Coll::Bcast, "knomial", 64),
        &m,
        &model,
        Options { record: true },
    )
    .unwrap();
    let path = out.critical_path();
    let last = *path.last().unwrap();
    assert_eq!(last.0 as usize, out.last_rank());
    // It starts at the root's first round, and each step ends no later than the next.
    assert_eq!(path[0], (0, 0));
    for w in path.windows(2) {
        let a = out.rounds[w[0].0 as usize][w[0].1 as usize];
        let b = out.rounds[w[1].0 as usize][w[1].1 as usize];
        assert!(a.end <= b.end);
    }
    let trace = trace::chrome_trace(
        &m,
        &programs(&call(Coll::Bcast, "knomial", 64), &m).unwrap(),
        &out,
    );
    let v: serde_json::Value = serde_json::from_str(&trace).unwrap();
    assert!(v["traceEvents"].as_array().unwrap().len() > 8);
    assert!(trace.contains("\"critical\":true"));
}

#[test]
fn nine_thousand_ranks_simulate() {
    // The seed papers' scale: 256 nodes x 36 ranks.
    let model = Model::default();
    let m = Machine::regular(256, 36);
    for (coll, algo) in [
        (Coll::Bcast, "knomial"),
        (Coll::Allreduce, "recursive_doubling"),
        (Coll::Allreduce, "smp"),
        (Coll::Allgather, "multi_object_ring"),
    ] {
        let out = run(&call(coll, algo, 8), &m, &model, Options::default()).unwrap();
        assert_eq!(out.finish.len(), 9216);
        assert!(out.time() > 0.0);
    }
}

#[test]
fn node_aware_allreduce_relieves_the_nic() {
    // Ranks are numbered node by node, so flat recursive doubling's first rounds stay on the
    // node and at 8 B it is as good as the two levels; with 64 KiB vectors its later rounds
    // push every rank's vector through the node's one NIC, the two-level one only the
    // leader's.
    let model = Model::default();
    let m = Machine::regular(4, 8);
    let go = |algo: &str, b: usize| {
        run(
            &call(Coll::Allreduce, algo, b),
            &m,
            &model,
            Options::default(),
        )
        .unwrap()
    };
    let (flat, smp) = (go("recursive_doubling", 65536), go("smp", 65536));
    assert!(smp.inter_messages < flat.inter_messages);
    assert!(
        smp.time() < flat.time(),
        "{} vs {}",
        smp.time(),
        flat.time()
    );
}

/// Links inside a node that cost nothing, so a schedule's time is its network part.
const FREE: Link = Link {
    latency: 0.0,
    overhead: 0.0,
    gap: 0.0,
    per_byte: 0.0,
};

/// A machine whose on-node messages are free and whose network link is `inter`.
fn network_only(inter: Link) -> Model {
    let mut m = Model::uniform(inter);
    m.intra = FREE;
    m
}

/// [`network_only`] with the network's latency and overheads only (bytes free).
fn latency_only() -> Model {
    network_only(Link {
        per_byte: 0.0,
        gap: 0.0,
        ..LINK
    })
}

/// [`network_only`] with the network's per-byte cost only.
fn bandwidth_only() -> Model {
    network_only(Link {
        per_byte: LINK.per_byte,
        ..FREE
    })
}

/// `ceil(log_base(n))` in integers.
fn ceil_log(base: usize, n: usize) -> usize {
    let (mut r, mut x) = (0, 1);
    while x < n {
        x *= base;
        r += 1;
    }
    r
}

/// Layouts (nodes, ranks per node) with N a power of P+1 and not, N below and above P.
const MULTI_LAYOUTS: [(usize, usize); 9] = [
    (2, 2),
    (3, 2),
    (4, 2),
    (5, 2),
    (9, 2),
    (10, 3),
    (7, 4),
    (16, 3),
    (3, 5),
];

#[test]
fn multi_object_algorithms_complete_on_every_layout_and_root() {
    let model = Model::default();
    for (n, p) in MULTI_LAYOUTS {
        let m = Machine::regular(n, p);
        for (coll, algo) in [
            (Coll::Scatter, "multi_object_tree"),
            (Coll::Allgather, "multi_object_bruck"),
            (Coll::Allreduce, "multi_object_bruck"),
        ] {
            for root in [0, 1, (n * p - 1) as u32] {
                let mut c = call(coll, algo, 64);
                c.root = root;
                let out = run(&c, &m, &model, Options::default());
                assert!(out.is_ok(), "{coll:?} {algo} {n}x{p} root {root}: {out:?}");
            }
        }
    }
}

/// PiP-MColl Eq. 4.2, latency term: the (P+1)-ary scatter takes `ceil(log_{P+1} N)` network
/// hops `alpha_e = L + 2o` (on-node steps free), where the two-level scatter's binomial tree
/// over the heads takes `ceil(log2 N)`.
#[test]
fn multi_object_scatter_takes_eq_4_2_latency() {
    let alpha = hop(0);
    let model = latency_only();
    for (n, p) in MULTI_LAYOUTS {
        let m = Machine::regular(n, p);
        for root in [0, (n * p - 1) as u32] {
            let mut c = call(Coll::Scatter, "multi_object_tree", 8);
            c.root = root;
            assert_close(time(&c, &m, &model), ceil_log(p + 1, n) as f64 * alpha);
        }
    }
}

/// PiP-MColl Eq. 4.2, bandwidth term `C_b (N-1) P beta_e`: every node's blocks but the
/// root's own leave through the root node's NIC, which its P senders share (no latency,
/// on-node steps free); exact for one level (N = P+1) and two (N = (P+1)^2).
#[test]
fn multi_object_scatter_takes_eq_4_2_bandwidth() {
    let model = bandwidth_only();
    let cb = 4096;
    for p in [2, 3, 4] {
        for n in [p + 1, (p + 1) * (p + 1)] {
            let t = time(
                &call(Coll::Scatter, "multi_object_tree", cb),
                &Machine::regular(n, p),
                &model,
            );
            assert_close(t, (cb * (n - 1) * p) as f64 * LINK.per_byte);
        }
    }
}

/// PiP-MColl Eq. 4.4 and 4.9, latency terms: the multi-object Bruck allgather and allreduce
/// take `ceil(log_{P+1} N)` network hops (on-node steps and reductions free), for any N.
#[test]
fn multi_object_bruck_takes_eq_4_4_and_4_9_latency() {
    let alpha = hop(0);
    let model = latency_only();
    for (n, p) in MULTI_LAYOUTS {
        let m = Machine::regular(n, p);
        for coll in [Coll::Allgather, Coll::Allreduce] {
            let t = time(&call(coll, "multi_object_bruck", 8), &m, &model);
            assert_close(t, ceil_log(p + 1, n) as f64 * alpha);
        }
        // The two-level allreduce's heads need ceil(log2 N) rounds at least.
        let smp = time(&call(Coll::Allreduce, "smp", 8), &m, &model);
        assert!(
            smp >= ceil_log(2, n) as f64 * alpha * 0.999,
            "{n}x{p}: {smp:e}"
        );
    }
}

/// The multi-object allgather's bytes: each node's NIC carries `(N-1) P C_b` (every other
/// node's run once), so with no latency the time is `(N-1) P C_b beta_e` whatever the
/// number of rounds (Eq. 4.4's bandwidth term read as the per-node run `P C_b` times the
/// `N-1` runs a node lacks).
#[test]
fn multi_object_bruck_allgather_moves_each_run_once() {
    let model = bandwidth_only();
    let cb = 4096;
    for (n, p) in MULTI_LAYOUTS {
        let t = time(
            &call(Coll::Allgather, "multi_object_bruck", cb),
            &Machine::regular(n, p),
            &model,
        );
        assert_close(t, (cb * (n - 1) * p) as f64 * LINK.per_byte);
    }
}

/// The CMA paper's Table II model (its parallel-read scatter, §IV-A-1): the p-1 non-roots of
/// a node reading their blocks from the root at once take `alpha + eta beta + l gamma_{p-1}
/// ceil(eta/s)`, `gamma_c = a c^2 + b c` (Table IV's Broadwell row: a 0.18, b 0.83), with
/// messages otherwise free; one reader alone takes the uncontended `alpha + eta beta +
/// l ceil(eta/s)` only when `gamma_1 = 1`.
#[test]
fn parallel_cma_reads_take_the_table_ii_time() {
    let mut model = Model::uniform(FREE);
    model.cma = super::model::Cma {
        threshold: 16384,
        startup: 3.4e-6,
        per_byte: 1e-9 / 34.0,
        lock_per_page: 0.25e-6,
        page: 4096,
        quadratic: 0.18,
        linear: 0.83,
    };
    for p in [2, 4, 8] {
        for eta in [65536, (1 << 20) + 1] {
            let t = time(
                &call(Coll::Scatter, "linear", eta),
                &Machine::regular(1, p),
                &model,
            );
            let c = (p - 1) as f64;
            let gamma = 0.18 * c * c + 0.83 * c;
            let want = 3.4e-6
                + eta as f64 * model.cma.per_byte
                + 0.25e-6 * gamma * eta.div_ceil(4096) as f64;
            assert_close(t, want);
        }
    }
}

/// The software cost per call and per round: with one rank per node a binomial broadcast
/// over `2^k` ranks takes `call + k (round + L + 2o + mG)` (each level's receiver starts its
/// next round after the message, its first round's costs overlap the wait).
#[test]
fn call_and_round_overheads_add_along_the_chain() {
    let mut model = Model::uniform(LINK);
    model.call_overhead = 0.7e-6;
    model.round_overhead = 0.2e-6;
    for k in 1..=5 {
        let m = 64;
        let t = time(
            &call(Coll::Bcast, "knomial", m),
            &Machine::regular(1 << k, 1),
            &model,
        );
        assert_close(t, 0.7e-6 + k as f64 * (0.2e-6 + hop(m)));
    }
    let back = Model::from_json(&model.to_json()).unwrap();
    assert!((back.round_overhead - 0.2e-6).abs() < 1e-15);
    assert!((back.call_overhead - 0.7e-6).abs() < 1e-15);
}

#[test]
fn a_links_bidirectional_factor_stretches_an_exchange_but_not_a_one_way_message() {
    let m = 1 << 20;
    let w = m as f64 * LINK.per_byte;
    let exchange = call(Coll::Allgather, "ring", m);
    let one_way = call(Coll::Bcast, "knomial", m);
    // An exchange takes (1 + h) one-way transfers, h = 2 / bidirectional - 1.
    let cases = [(2.0, 1.0), (1.0, 2.0), (1.6, 1.25), (0.8, 2.5)];
    // Between nodes: the NIC's receive side.
    let nodes = Machine::regular(2, 1);
    for (bi, stretch) in cases {
        let model = Model {
            inter_bidirectional: bi,
            ..bandwidth_only()
        };
        assert_close(time(&exchange, &nodes, &model), stretch * w);
        assert_close(time(&one_way, &nodes, &model), w);
    }
    // On the node, below the CMA threshold (the receiver's copy port) and above it.
    let node = Machine::regular(1, 2);
    let eager = Model::uniform(Link {
        per_byte: LINK.per_byte,
        ..FREE
    });
    let mut single_copy = eager.clone();
    single_copy.cma.threshold = 0;
    single_copy.cma.per_byte = LINK.per_byte;
    for base in [eager, single_copy] {
        for (bi, stretch) in cases {
            let model = Model {
                intra_bidirectional: bi,
                ..base.clone()
            };
            assert_close(time(&exchange, &node, &model), stretch * w);
            assert_close(time(&one_way, &node, &model), w);
        }
    }
}
