//! Unit tests of the generated MPICH-ABI value maps (`abi_mpich_values.rs`), compiled into the
//! default test build (the maps are plain functions; the entry points need `mpich-abi`).
#![allow(dead_code, clippy::manual_range_patterns, clippy::unreadable_literal)]

include!(concat!(env!("OUT_DIR"), "/abi_mpich_values.rs"));

use crate::abi::consts as std_c;

#[test]
fn ranks_and_tags_map_their_special_values_both_ways() {
    assert_eq!(rank_to_std(c::MPI_ANY_SOURCE), std_c::MPI_ANY_SOURCE);
    assert_eq!(rank_to_std(c::MPI_PROC_NULL), std_c::MPI_PROC_NULL);
    assert_eq!(rank_to_std(c::MPI_ROOT), std_c::MPI_ROOT);
    assert_eq!(rank_to_mpich(std_c::MPI_PROC_NULL), c::MPI_PROC_NULL);
    assert_eq!(tag_to_std(c::MPI_ANY_TAG), std_c::MPI_ANY_TAG);
    assert_eq!(tag_to_mpich(std_c::MPI_ANY_TAG), c::MPI_ANY_TAG);
    for v in [0, 1, 7, 1 << 20, i32::MAX] {
        assert_eq!(rank_to_std(v), v);
        assert_eq!(rank_to_mpich(v), v);
        assert_eq!(tag_to_std(v), v);
    }
    // MPICH -4 is no special rank; it must not become the standard's MPI_ROOT (-4).
    assert_ne!(rank_to_std(-4), std_c::MPI_ROOT);
}

#[test]
fn error_classes_round_trip_and_user_codes_stay_above_every_class() {
    for class in 0..=std_c::MPI_ERR_LASTCODE.min(62) {
        let m = err_to_mpich(class);
        if m != c::MPI_ERR_OTHER || class == std_c::MPI_ERR_OTHER {
            assert_eq!(err_to_std(m), class, "class {class} -> {m}");
        }
    }
    assert_eq!(err_to_mpich(std_c::MPI_ERR_REQUEST), c::MPI_ERR_REQUEST);
    assert_eq!(err_to_mpich(std_c::MPI_ERR_LASTCODE), c::MPI_ERR_LASTCODE);
    let user = std_c::MPI_ERR_LASTCODE + 5;
    assert!(err_to_mpich(user) > c::MPI_ERR_LASTCODE);
    assert_eq!(err_to_std(err_to_mpich(user)), user);
}

#[test]
fn thread_levels_modes_and_flags_map() {
    assert_eq!(
        thread_to_std(c::MPI_THREAD_MULTIPLE),
        std_c::MPI_THREAD_MULTIPLE
    );
    assert_eq!(
        thread_to_mpich(std_c::MPI_THREAD_FUNNELED),
        c::MPI_THREAD_FUNNELED
    );
    let m = c::MPI_MODE_RDWR | c::MPI_MODE_CREATE;
    assert_eq!(
        amode_to_std(m),
        std_c::MPI_MODE_RDWR | std_c::MPI_MODE_CREATE
    );
    assert_eq!(amode_to_mpich(amode_to_std(m)), m);
    assert_eq!(
        assert_to_std(c::MPI_MODE_NOPRECEDE),
        std_c::MPI_MODE_NOPRECEDE
    );
    // A bit that is no assertion stays (so that the call can reject it).
    assert_eq!(assert_to_std(1), 1);
    assert_eq!(
        combiner_to_mpich(std_c::MPI_COMBINER_STRUCT),
        c::MPI_COMBINER_STRUCT
    );
    assert_eq!(keyval_to_std(c::MPI_TAG_UB), std_c::MPI_TAG_UB);
    assert_eq!(
        keyval_to_mpich(std_c::MPI_KEYVAL_INVALID),
        c::MPI_KEYVAL_INVALID
    );
}

#[test]
fn predefined_handles_map_both_ways() {
    let pairs = [
        (c::MPI_INT, std_c::MPI_INT),
        (c::MPI_DOUBLE, std_c::MPI_DOUBLE),
        (c::MPI_2INT, std_c::MPI_2INT),
        (c::MPI_FLOAT_INT, std_c::MPI_FLOAT_INT),
        (c::MPI_DATATYPE_NULL, std_c::MPI_DATATYPE_NULL),
    ];
    for (m, s) in pairs {
        assert_eq!(datatype_predefined_std(m), Some(s));
        assert_eq!(datatype_predefined_mpich(s), Some(m));
    }
    assert_eq!(
        comm_predefined_std(c::MPI_COMM_WORLD),
        Some(std_c::MPI_COMM_WORLD)
    );
    assert_eq!(op_predefined_std(c::MPI_MAXLOC), Some(std_c::MPI_MAXLOC));
    assert_eq!(
        request_predefined_mpich(std_c::MPI_REQUEST_NULL),
        Some(c::MPI_REQUEST_NULL)
    );
    // A user handle's integer (below MPICH's predefined values) is no predefined handle.
    assert_eq!(datatype_predefined_std(0x3001), None);
    assert_eq!(comm_predefined_std(0x3001), None);
}
