//! Criterion micro-benchmarks of hympi's internal hot paths, through the crate's public Rust
//! API (no MPI runtime, one thread):
//!
//! - `matcher_posted/{exact,wildcard}/{1,64}`: post a receive and take it with an arriving
//!   envelope, the queue holding `depth - 1` non-matching receives (another context) in front;
//! - `matcher_unexpected/{exact,wildcard}/{1,64}`: the same for the unexpected-message queue
//!   and an arriving receive pattern;
//! - `mpsc_queue/push_pop/{1,64}`: push then pop that many cells of the shared-memory queue;
//! - `slab/insert_decode_free`: a request table's insert, handle, decode and free;
//! - `pack/{pack,unpack}/{xz_face,yz_face}`: the datatype engine packing and unpacking 64
//!   blocks of 2 KiB, 64 KiB apart (an X-Z face) and 4096 blocks of 8 B, 2 KiB apart (a Y-Z
//!   face);
//! - `reduce_kernel/sum_f64/{1024,65536}`: the `MPI_SUM` kernel on that many bytes of doubles;
//! - `lock_model/{single,vci}`: entering a VCI for a fast-path operation without a lock (thread
//!   levels below MULTIPLE) and with the VCI's lock (the `vci` model at MULTIPLE).
//!
//! Run: `cargo bench --bench hot_paths` (add `-- --quick` for a short run).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hympi::abi::consts::{MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_DOUBLE};
use hympi::core::datatype::engine::{self, Prog};
use hympi::core::objects::slab::{kind, Slab};
use hympi::core::op::{builtin_kernel, Builtin};
use hympi::core::p2p::matching::{Envelope, Matcher, Pattern, Payload, Posted, Unexpected};
use hympi::core::threads::vci::{self, Pool};
use hympi::transport::shm::queue::{AtomicU32, Links, MpscQueue, NIL};
use std::hint::black_box;

/// Queue depths measured.
const DEPTHS: [usize; 2] = [1, 64];

/// The envelope of the message every matching benchmark delivers (context 0).
const ENV: Envelope = Envelope {
    ctx: 0,
    src: 3,
    tag: 7,
};

/// A receive pattern for `ENV`: exact, or with both wildcards.
fn pattern(wildcard: bool) -> Pattern {
    if wildcard {
        Pattern {
            ctx: ENV.ctx,
            src: MPI_ANY_SOURCE,
            tag: MPI_ANY_TAG,
        }
    } else {
        Pattern {
            ctx: ENV.ctx,
            src: ENV.src,
            tag: ENV.tag,
        }
    }
}

/// A matcher whose two queues hold `n` entries of context 1, which nothing here matches.
fn filled_matcher(n: usize) -> Matcher {
    let mut m = Matcher::default();
    for i in 0..n as i32 {
        let (ctx, src, tag) = (1, i % 4, i);
        m.posted.push_back(Posted {
            pattern: Pattern { ctx, src, tag },
            req: i as u32,
        });
        m.unexpected.push_back(Unexpected {
            env: Envelope { ctx, src, tag },
            payload: Payload::Eager {
                data: Vec::new(),
                ack: None,
            },
        });
    }
    m
}

fn matcher(c: &mut Criterion) {
    let mut g = c.benchmark_group("matcher_posted");
    for wildcard in [false, true] {
        let name = if wildcard { "wildcard" } else { "exact" };
        for depth in DEPTHS {
            let mut m = filled_matcher(depth - 1);
            g.bench_function(BenchmarkId::new(name, depth), |b| {
                b.iter(|| {
                    m.posted.push_back(Posted {
                        pattern: pattern(wildcard),
                        req: 1000,
                    });
                    black_box(m.take_posted(black_box(&ENV)))
                })
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("matcher_unexpected");
    for wildcard in [false, true] {
        let name = if wildcard { "wildcard" } else { "exact" };
        for depth in DEPTHS {
            let mut m = filled_matcher(depth - 1);
            g.bench_function(BenchmarkId::new(name, depth), |b| {
                b.iter(|| {
                    m.unexpected.push_back(Unexpected {
                        env: ENV,
                        payload: Payload::Eager {
                            data: Vec::new(),
                            ack: None,
                        },
                    });
                    black_box(m.take_unexpected(black_box(&pattern(wildcard))))
                })
            });
        }
    }
    g.finish();
}

/// The `next` links of the queue's cells (in shared memory in hympi, a vector here).
struct Cells(Vec<AtomicU32>);

impl Links for Cells {
    fn link(&self, cell: u32) -> &AtomicU32 {
        &self.0[cell as usize]
    }
}

fn mpsc_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("mpsc_queue");
    for n in DEPTHS {
        let cells = Cells((0..n).map(|_| AtomicU32::new(NIL)).collect());
        let q = MpscQueue::new();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("push_pop", n), |b| {
            b.iter(|| {
                for cell in 0..n as u32 {
                    q.push(&cells, black_box(cell));
                }
                while let Some(cell) = q.pop(&cells) {
                    black_box(cell);
                }
            })
        });
    }
    g.finish();
}

fn slab(c: &mut Criterion) {
    let mut s: Slab<u64> = Slab::new(kind::REQUEST);
    // Some live entries, as in a program with requests in flight.
    for i in 0..64 {
        s.insert(i);
    }
    c.bench_function("slab/insert_decode_free", |b| {
        b.iter(|| {
            let i = s.insert(black_box(42)).expect("slab full");
            let h = s.handle(i);
            let j = s.decode(black_box(h)).expect("fresh handle decodes");
            s.free(j)
        })
    });
}

fn pack(c: &mut Criterion) {
    // (name, blocks, block bytes, stride bytes)
    let faces = [
        ("xz_face", 64usize, 2048usize, 65536isize),
        ("yz_face", 4096, 8, 2048),
    ];
    let mut g = c.benchmark_group("pack");
    for (name, blocks, len, stride) in faces {
        let prog = Prog::new(Prog::repeat(0, blocks, stride, &Prog::bytes(0, len)));
        let grid = vec![1u8; blocks * stride as usize];
        let mut packed = vec![0u8; prog.size];
        let mut out = vec![0u8; grid.len()];
        g.throughput(Throughput::Bytes(prog.size as u64));
        g.bench_function(BenchmarkId::new("pack", name), |b| {
            // SAFETY: every segment of the program lies inside `grid`.
            b.iter(|| unsafe {
                engine::pack(
                    &prog,
                    0,
                    1,
                    grid.as_ptr() as usize,
                    0,
                    black_box(&mut packed),
                )
            })
        });
        g.bench_function(BenchmarkId::new("unpack", name), |b| {
            // SAFETY: every segment lies inside `out`, which does not overlap `packed`.
            b.iter(|| unsafe {
                engine::unpack(
                    &prog,
                    0,
                    1,
                    out.as_mut_ptr() as usize,
                    0,
                    black_box(&packed),
                )
            })
        });
    }
    g.finish();
}

fn reduce_kernel(c: &mut Criterion) {
    let sum = builtin_kernel(Builtin::Sum, MPI_DOUBLE).expect("MPI_SUM on MPI_DOUBLE");
    let mut g = c.benchmark_group("reduce_kernel");
    for bytes in [1024usize, 65536] {
        let input: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
        let mut inout = vec![0u8; bytes];
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(BenchmarkId::new("sum_f64", bytes), |b| {
            b.iter(|| sum(black_box(&input), black_box(&mut inout)))
        });
    }
    g.finish();
}

fn lock_model(c: &mut Criterion) {
    let pool: &Pool = Pool::install(2, 64, 64);
    let mut g = c.benchmark_group("lock_model");
    for (name, locked) in [("single", false), ("vci", true)] {
        g.bench_function(name, |b| {
            b.iter(|| vci::with_vci(pool, 1, black_box(locked), |s| black_box(s.comms.len())))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    matcher,
    mpsc_queue,
    slab,
    pack,
    reduce_kernel,
    lock_model
);
criterion_main!(benches);
