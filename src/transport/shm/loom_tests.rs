use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::sync::Arc;

/// Slots of the modelled ring (two, so that three messages lap it).
const SLOTS: usize = 2;

struct Slot {
    full: AtomicU32,
    seq: UnsafeCell<u32>,
}

#[test]
fn fastbox_ring_hands_each_slot_over_lap_after_lap() {
    loom::model(|| {
        let ring: Arc<Vec<Slot>> = Arc::new(
            (0..SLOTS)
                .map(|_| Slot {
                    full: AtomicU32::new(0),
                    seq: UnsafeCell::new(u32::MAX),
                })
                .collect(),
        );
        let tx = ring.clone();
        let sender = loom::thread::spawn(move || {
            for seq in 0..3u32 {
                let s = &tx[seq as usize % SLOTS];
                // A full slot: the real sender spills into a cell; here it waits.
                while s.full.load(Ordering::Acquire) != 0 {
                    loom::thread::yield_now();
                }
                // SAFETY: the slot is the sender's while `full == 0` (acquire above).
                s.seq.with_mut(|p| unsafe { *p = seq });
                s.full.store(1, Ordering::Release);
            }
        });
        for expected in 0..3u32 {
            let s = &ring[expected as usize % SLOTS];
            while s.full.load(Ordering::Acquire) == 0 {
                loom::thread::yield_now();
            }
            // SAFETY: the slot is the receiver's while `full == 1` (acquire above).
            let got = s.seq.with(|p| unsafe { *p });
            assert_eq!(got, expected, "a slot's message is seen whole and in order");
            s.full.store(0, Ordering::Release);
        }
        sender.join().unwrap();
    });
}
