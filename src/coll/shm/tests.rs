use super::*;

#[test]
fn choice_keys_tell_queries_apart_and_refuse_what_does_not_fit() {
    let q = |avg, total, count, commutative| Query {
        comm_size: 4,
        avg_msg_size: avg,
        total_msg_size: total,
        count,
        commutative,
        ..Default::default()
    };
    let base = choice_key(Coll::Allreduce, &q(8, 8, 1, true)).unwrap();
    let others = [
        choice_key(Coll::Reduce, &q(8, 8, 1, true)),
        choice_key(Coll::Allreduce, &q(8, 8, 1, false)),
        choice_key(Coll::Allreduce, &q(16, 8, 1, true)),
        choice_key(Coll::Allreduce, &q(8, 8, 2, true)),
        choice_key(Coll::Allreduce, &q(8, 16, 1, true)),
    ];
    for k in others {
        let k = k.unwrap();
        assert_ne!(k, base);
        assert_eq!(k & !CHOICE_KEY, 0, "key spills into the flag bits");
    }
    assert!(choice_key(Coll::Allreduce, &q(1 << 14, 8, 1, true)).is_none());
    assert!(choice_key(Coll::Allreduce, &q(8, 1 << 27, 1, true)).is_none());
    let top = choice_key(
        Coll::Allgather,
        &q((1 << 14) - 1, (1 << 27) - 1, (1 << 14) - 1, true),
    )
    .unwrap();
    assert_eq!(top & !CHOICE_KEY, 0);

    // The cached answer is the tables' answer, first time and again.
    let a = CollState::default();
    let fresh = tuning::select_shm(Coll::Allreduce, &q(8, 8, 1, true));
    assert_eq!(selects(&a, Coll::Allreduce, &q(8, 8, 1, true)), fresh);
    assert_eq!(selects(&a, Coll::Allreduce, &q(8, 8, 1, true)), fresh);
    let big = q(1 << 13, 1 << 13, 1 << 10, true);
    assert_eq!(
        selects(&a, Coll::Allreduce, &big),
        tuning::select_shm(Coll::Allreduce, &big)
    );
}
