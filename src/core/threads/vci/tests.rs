use super::*;

#[test]
fn spreading_moves_waiting_messages_to_their_vcis_in_order() {
    use crate::core::p2p::matching::{Envelope, Payload, Unexpected};
    use crate::core::threads::spread;
    let pool = Pool::install(4, 64, 64);
    let mut m = Matchers::new(pool);
    let id = crate::core::objects::context::MAX_IDS - 5;
    let ctx = id * CONTEXTS_PER_ID;
    let from = pool.vci_of_ctx(ctx);
    let msg = |ctx: u32, tag: i32, byte: u8| Unexpected {
        env: Envelope { ctx, src: 0, tag },
        payload: Payload::Eager {
            data: vec![byte],
            ack: None,
        },
    };
    // Tags 1, 2, 1, 2, 5 on the point-to-point context, one on the collective context.
    for (i, tag) in [1, 2, 1, 2, 5].into_iter().enumerate() {
        m.of_vci(from).unexpected.push_back(msg(ctx, tag, i as u8));
    }
    m.of_vci(from).unexpected.push_back(msg(ctx + 1, 1, 99));
    spread::set(id, spread::BY_TAG);
    m.spread_out(id, from);
    let bytes = |m: &mut Matchers, v: usize, c: u32| -> Vec<u8> {
        m.of_vci(v)
            .unexpected
            .iter()
            .filter(|u| u.env.ctx == c)
            .map(|u| match &u.payload {
                Payload::Eager { data, .. } => data[0],
                _ => unreachable!(),
            })
            .collect()
    };
    let v1 = (id as usize + 1) % 4;
    let v2 = (id as usize + 2) % 4;
    let v5 = (id as usize + 5) % 4;
    assert_eq!(pool.vci_of_msg(ctx, 0, 1), v1);
    assert_eq!(bytes(&mut m, v1, ctx)[..2], [0, 2], "tag 1 in order");
    assert_eq!(bytes(&mut m, v2, ctx)[..2], [1, 3], "tag 2 in order");
    assert!(bytes(&mut m, v5, ctx).contains(&4));
    assert_eq!(
        bytes(&mut m, from, ctx + 1),
        [99],
        "collective traffic stays"
    );
    spread::set(id, 0);
    for v in 0..4 {
        m.of_vci(v).unexpected.clear();
    }
}

#[test]
fn request_indices_carry_their_vci() {
    let pool = Pool::install(3, 64, 64);
    let mut reqs = Requests::new(pool);
    let a = reqs
        .insert(2, Request::new(crate::core::p2p::request::ReqKind::Recv, 0))
        .unwrap();
    assert_eq!(vci_of_rid(a), 2);
    let h = reqs.handle(a);
    assert_eq!(reqs.decode(h), Some(a));
    assert!(reqs.get(a).is_some());
    assert!(reqs.free(a));
    assert_eq!(reqs.decode(h), None, "stale after free");
    assert_eq!(pool.vci_of_ctx(0), 0);
    assert_eq!(pool.vci_of_ctx(CONTEXTS_PER_ID * 4 + 1), 1);
}
