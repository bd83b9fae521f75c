//! The datatype fuzz driver (`tests/datatype_fuzz/driver.rs`, also the body of the cargo-fuzz
//! target `fuzz/fuzz_targets/datatype.rs`) on stable Rust: every file of the seed and
//! regression corpus `fuzz/corpus/datatype/`, then inputs from a fixed-seed generator.

#[path = "datatype_fuzz/driver.rs"]
mod driver;

use hympi::abi::consts::*;
use hympi::abi::generated as mpi;
use hympi::abi::types::*;
use std::path::PathBuf;
use std::ptr::null_mut;

/// Pseudo-random inputs run by `random_inputs` (`HYMPI_FUZZ_CASES` overrides).
const CASES: usize = 100_000;

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/datatype");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let d = std::fs::read(&p).unwrap();
            (p, d)
        })
        .collect()
}

#[test]
fn corpus_and_random_inputs() {
    let files = corpus();
    assert!(!files.is_empty(), "the seed corpus is empty");
    for (p, d) in &files {
        eprintln!("corpus: {}", p.display());
        driver::run(d);
    }
    let cases = std::env::var("HYMPI_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for case in 0..cases {
        let len = (next() % 512) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let r = std::panic::catch_unwind(|| driver::run(&data));
        if r.is_err() {
            let out = std::env::temp_dir().join(format!("hympi-datatype-fuzz-{case}"));
            std::fs::write(&out, &data).unwrap();
            panic!("case {case} failed; its input is in {}", out.display());
        }
    }
    let s: Vec<usize> = driver::STATS
        .iter()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    eprintln!(
        "{} inputs: {} types created, {} calls failed with a valid error class, {} round trips checked against the naive type map, {} without one",
        files.len() + cases, s[0], s[1], s[2], s[3]
    );
    // The generator must reach the interesting paths, not only argument errors.
    assert!(
        s[0] > cases && s[2] > cases / 20,
        "too few types or round trips: {s:?}"
    );
}

/// A contiguous type of 2^62 bytes.
fn type_of_2_62_bytes() -> MPI_Datatype {
    let (mut a, mut b) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(
            mpi::MPI_Type_contiguous_c(1 << 31, MPI_BYTE as MPI_Datatype, &mut a),
            0
        );
        assert_eq!(mpi::MPI_Type_contiguous_c(1 << 31, a, &mut b), 0);
        assert_eq!(mpi::MPI_Type_commit(&mut b), 0);
        assert_eq!(mpi::MPI_Type_free(&mut a), 0);
    }
    b
}

/// Regression: 3 elements of 2^62 bytes overflowed the size check of MPI_Pack into a
/// negative number and were copied past a 16-byte buffer.
#[test]
fn pack_of_more_than_i64_max_bytes_is_refused() {
    driver::init();
    let mut t = type_of_2_62_bytes();
    let inb = [0u8; 16];
    let mut out = [0u8; 16];
    for unpack in [false, true] {
        let mut pos = 0i64;
        let comm = MPI_COMM_SELF as MPI_Comm;
        // SAFETY: 16-byte buffers; the call must fail before touching them.
        let rc = unsafe {
            if unpack {
                mpi::MPI_Unpack_c(
                    inb.as_ptr().cast(),
                    16,
                    &mut pos,
                    out.as_mut_ptr().cast(),
                    3,
                    t,
                    comm,
                )
            } else {
                mpi::MPI_Pack_c(
                    inb.as_ptr().cast(),
                    3,
                    t,
                    out.as_mut_ptr().cast(),
                    16,
                    &mut pos,
                    comm,
                )
            }
        };
        let mut cls = 0;
        // SAFETY: valid out-pointer.
        unsafe { mpi::MPI_Error_class(rc, &mut cls) };
        assert_eq!(cls, MPI_ERR_TRUNCATE, "unpack: {unpack}");
        assert_eq!(pos, 0);
    }
    // SAFETY: valid in/out pointer.
    assert_eq!(unsafe { mpi::MPI_Type_free(&mut t) }, 0);
}

/// Regression: external32 conversion walked every copy of a zero-size field (2^60 here).
#[test]
fn external32_skips_zero_size_fields() {
    driver::init();
    let (mut empty, mut s) = (null_mut(), null_mut());
    // SAFETY: valid pointers to local arrays of the given count.
    unsafe {
        assert_eq!(
            mpi::MPI_Type_contiguous(0, MPI_INT as MPI_Datatype, &mut empty),
            0
        );
        let bls = [1i64 << 60, 1];
        let ds = [0i64, 0];
        let ts = [empty, MPI_INT as MPI_Datatype];
        assert_eq!(
            mpi::MPI_Type_create_struct_c(2, bls.as_ptr(), ds.as_ptr(), ts.as_ptr(), &mut s),
            0
        );
        assert_eq!(mpi::MPI_Type_commit(&mut s), 0);
        let rep = c"external32".as_ptr();
        let mut size = 0i64;
        assert_eq!(mpi::MPI_Pack_external_size_c(rep, 1, s, &mut size), 0);
        assert_eq!(size, 4);
        let v = 0x0102_0304i32;
        let mut buf = [0u8; 4];
        let mut pos = 0i64;
        let rc = mpi::MPI_Pack_external_c(
            rep,
            (&v as *const i32).cast(),
            1,
            s,
            buf.as_mut_ptr().cast(),
            4,
            &mut pos,
        );
        assert_eq!((rc, pos, buf), (0, 4, [1, 2, 3, 4]));
        assert_eq!(mpi::MPI_Type_free(&mut s), 0);
        assert_eq!(mpi::MPI_Type_free(&mut empty), 0);
    }
}
