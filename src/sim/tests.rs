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
