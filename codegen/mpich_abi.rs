//! Generates the MPICH-ABI layer (`libmpich.so.12`, cargo feature `mpich-abi`) from the same
//! signature table as the standard-ABI entry points.
//!
//! Outputs:
//! - `abi_mpich_values.rs`: MPICH's value of every shared constant (`mod c`), and per handle
//!   kind and per integer domain the maps between MPICH's values and the standard ABI's;
//! - `abi_mpich_entry.rs`: for every implemented function, `PMPI_x` / `MPI_x` with MPICH's C
//!   types (integer handles, the 5-int `MPI_Status`) that convert each argument by its type
//!   and name (a rank, a tag, a thread level, an error code...) and call the standard-ABI
//!   `PMPI_x` (`crate::abi::generated`), then convert what it wrote back.

use super::{rust_ret, Func, Param};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Handle types that are integers in MPICH's ABI (the rest are pointers in both ABIs).
const INT_KINDS: [(&str, &str); 10] = [
    ("MPI_Comm", "comm"),
    ("MPI_Datatype", "datatype"),
    ("MPI_Errhandler", "errhandler"),
    ("MPI_Group", "group"),
    ("MPI_Info", "info"),
    ("MPI_Message", "message"),
    ("MPI_Op", "op"),
    ("MPI_Request", "request"),
    ("MPI_Session", "session"),
    ("MPI_Win", "win"),
];

/// Integer domains whose special values differ: (domain, the constants' name prefixes, how
/// they combine: `false` a value, `true` bit flags).
const DOMAINS: [(&str, &[&str], bool); 25] = [
    (
        "rank",
        &["MPI_ANY_SOURCE", "MPI_PROC_NULL", "MPI_ROOT"],
        false,
    ),
    ("tag", &["MPI_ANY_TAG"], false),
    ("thread", &["MPI_THREAD_"], false),
    (
        "compare",
        &["MPI_IDENT", "MPI_CONGRUENT", "MPI_SIMILAR", "MPI_UNEQUAL"],
        false,
    ),
    ("topo", &["MPI_CART", "MPI_GRAPH", "MPI_DIST_GRAPH"], false),
    ("combiner", &["MPI_COMBINER_"], false),
    ("order", &["MPI_ORDER_"], false),
    (
        "distrib",
        &[
            "MPI_DISTRIBUTE_BLOCK",
            "MPI_DISTRIBUTE_CYCLIC",
            "MPI_DISTRIBUTE_NONE",
        ],
        false,
    ),
    ("darg", &["MPI_DISTRIBUTE_DFLT_DARG"], false),
    (
        "amode",
        &[
            "MPI_MODE_APPEND",
            "MPI_MODE_CREATE",
            "MPI_MODE_DELETE_ON_CLOSE",
            "MPI_MODE_EXCL",
            "MPI_MODE_RDONLY",
            "MPI_MODE_RDWR",
            "MPI_MODE_SEQUENTIAL",
            "MPI_MODE_UNIQUE_OPEN",
            "MPI_MODE_WRONLY",
        ],
        true,
    ),
    (
        "assert",
        &[
            "MPI_MODE_NOCHECK",
            "MPI_MODE_NOPRECEDE",
            "MPI_MODE_NOPUT",
            "MPI_MODE_NOSTORE",
            "MPI_MODE_NOSUCCEED",
        ],
        true,
    ),
    ("lock", &["MPI_LOCK_"], false),
    ("seek", &["MPI_SEEK_"], false),
    ("split", &["MPI_COMM_TYPE_"], false),
    ("typeclass", &["MPI_TYPECLASS_"], false),
    (
        "keyval",
        &[
            "MPI_KEYVAL_INVALID",
            "MPI_TAG_UB",
            "MPI_HOST",
            "MPI_IO",
            "MPI_WTIME_IS_GLOBAL",
            "MPI_UNIVERSE_SIZE",
            "MPI_LASTUSEDCODE",
            "MPI_APPNUM",
            "MPI_WIN_BASE",
            "MPI_WIN_SIZE",
            "MPI_WIN_DISP_UNIT",
            "MPI_WIN_CREATE_FLAVOR",
            "MPI_WIN_MODEL",
        ],
        false,
    ),
    ("err", &["MPI_SUCCESS", "MPI_ERR_", "MPI_T_ERR_"], false),
    ("flavor", &["MPI_WIN_FLAVOR_"], false),
    ("model", &["MPI_WIN_SEPARATE", "MPI_WIN_UNIFIED"], false),
    ("verbosity", &["MPI_T_VERBOSITY_"], false),
    ("bind", &["MPI_T_BIND_"], false),
    ("scope", &["MPI_T_SCOPE_"], false),
    ("pvarclass", &["MPI_T_PVAR_CLASS_"], false),
    ("srcorder", &["MPI_T_SOURCE_"], false),
    ("cbsafety", &["MPI_T_CB_REQUIRE_"], false),
];

/// Functions of the table that MPICH's ABI has no counterpart for (the standard ABI's own
/// chapter) or whose callbacks `src/abi/mpich/callbacks.rs` converts by hand.
fn skipped(name: &str) -> bool {
    name.ends_with("_toint")
        || name.ends_with("_fromint")
        || name.starts_with("MPI_Abi_")
        || HAND_WRITTEN.contains(&name)
}

/// Functions written by hand in `src/abi/mpich/callbacks.rs` (callbacks with handle
/// arguments, strings of different maximum lengths, Fortran status conversions).
pub const HAND_WRITTEN: [&str; 18] = [
    "MPI_Get_version",
    "MPI_Op_create",
    "MPI_Op_create_c",
    "MPI_Comm_create_keyval",
    "MPI_Win_create_keyval",
    "MPI_Type_create_keyval",
    "MPI_Keyval_create",
    "MPI_Comm_create_errhandler",
    "MPI_Win_create_errhandler",
    "MPI_File_create_errhandler",
    "MPI_Session_create_errhandler",
    "MPI_Grequest_start",
    "MPI_Register_datarep",
    "MPI_Register_datarep_c",
    "MPI_Get_processor_name",
    "MPI_Win_get_attr",
    "MPI_Comm_get_attr",
    "MPI_Group_translate_ranks",
];

struct Const {
    std: i128,
    mpich: i64,
}

/// The constants of `prologue.h` with their standard value, cast type and MPICH value.
fn constants(prologue: &str, mpich: &str) -> BTreeMap<String, (Const, String)> {
    let mut mp = BTreeMap::new();
    for line in mpich.lines() {
        if line.starts_with('#') {
            continue;
        }
        let mut it = line.split_whitespace();
        if let (Some(n), Some(v)) = (it.next(), it.next()) {
            mp.insert(n.to_string(), v.parse::<i64>().expect("mpich constant"));
        }
    }
    let mut out = BTreeMap::new();
    for line in prologue.lines() {
        let Some(rest) = line.trim().strip_prefix("#define ") else {
            continue;
        };
        let mut it = rest.splitn(2, char::is_whitespace);
        let (Some(name), Some(value)) = (it.next(), it.next()) else {
            continue;
        };
        let Some(&m) = mp.get(name) else { continue };
        let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        let (ty, num) = match compact
            .strip_prefix("((")
            .and_then(|v| v.strip_suffix(')'))
            .and_then(|inner| {
                inner
                    .find(')')
                    .map(|c| (inner[..c].to_string(), &inner[c + 1..]))
            }) {
            Some((ty, num)) => (ty, num.to_string()),
            None => (String::new(), compact.trim_matches(['(', ')']).to_string()),
        };
        let Some(v) = super::parse_int(&num) else {
            continue;
        };
        out.insert(name.to_string(), (Const { std: v, mpich: m }, ty));
    }
    out
}

/// `abi_mpich_values.rs` and `abi_mpich_entry.rs`.
pub fn generate(funcs: &[Func], prologue: &str, mpich: &str) -> (String, String) {
    let consts = constants(prologue, mpich);
    (entries(funcs), values(&consts))
}

fn values(consts: &BTreeMap<String, (Const, String)>) -> String {
    let mut s = String::from(
        "// Generated by build.rs (codegen/mpich_abi.rs) from src/abi/mpich/constants.txt.\n\n",
    );
    s.push_str("/// MPICH's values of the constants both ABIs name.\npub mod c {\n");
    for (name, (c, _)) in consts {
        if i32::try_from(c.mpich).is_ok() {
            let _ = writeln!(
                s,
                "    /// `{name}` in MPICH's ABI.\n    pub const {name}: i32 = {};",
                c.mpich
            );
        }
    }
    s.push_str("}\n\n");
    s.push_str("/// The slot of an MPICH handle value in a table of 256 (MPICH keeps a type's index in the\n/// low byte and its family in the high one).\n#[inline(always)]\nfn predefined_hash(v: i32) -> usize {\n    ((v as u32 ^ (v as u32 >> 24)) & 255) as usize\n}\n\n");
    // Handles: MPICH value <-> standard value, per kind.
    for (ty, kind) in INT_KINDS {
        let mut to_std = BTreeMap::new();
        let mut to_mpich = BTreeMap::new();
        for (c, cty) in consts.values() {
            if cty == ty {
                to_std.entry(c.mpich as i32).or_insert(c.std as usize);
                to_mpich.entry(c.std as usize).or_insert(c.mpich as i32);
            }
        }
        if to_std.len() > 8 {
            // Many values (datatypes, operations): an open-addressed table of 256 slots.
            let mut slots = vec![(0i32, 0usize); 256];
            for (m, st) in &to_std {
                let mut h = predefined_hash(*m);
                while slots[h].0 != 0 {
                    h = (h + 1) % 256;
                }
                slots[h] = (*m, *st);
            }
            let kind_up = kind.to_uppercase();
            let _ = writeln!(s, "/// MPICH's predefined `{ty}` values and their standard ones, by `predefined_hash`.\nstatic {kind_up}_SLOTS: [(i32, u16); 256] = [");
            for (m, st) in &slots {
                let _ = writeln!(s, "    ({m}, {st:#x}),");
            }
            s.push_str("];\n");
            let _ = writeln!(
                s,
                "/// The standard-ABI predefined `{ty}` of an MPICH value, if it is one.\n#[inline]\npub fn {kind}_predefined_std(v: i32) -> Option<usize> {{\n    let mut h = predefined_hash(v);\n    loop {{\n        let (m, st) = {kind_up}_SLOTS[h];\n        if m == v {{\n            return Some(st as usize);\n        }}\n        if m == 0 {{\n            return None;\n        }}\n        h = (h + 1) % 256;\n    }}\n}}"
            );
        } else {
            let _ = writeln!(
                s,
                "/// The standard-ABI predefined `{ty}` of an MPICH value, if it is one.\n#[inline]\npub fn {kind}_predefined_std(v: i32) -> Option<usize> {{\n    match v {{"
            );
            for (m, st) in &to_std {
                let _ = writeln!(s, "        {m} => Some({st:#x}),");
            }
            s.push_str("        _ => None,\n    }\n}\n");
        }
        let _ = writeln!(
            s,
            "/// MPICH's value of a standard-ABI predefined `{ty}` (`h` < 0x1000), if MPICH has it.\n#[inline]\npub fn {kind}_predefined_mpich(h: usize) -> Option<i32> {{\n    match h {{"
        );
        for (st, m) in &to_mpich {
            let _ = writeln!(s, "        {st:#x} => Some({m}),");
        }
        s.push_str("        _ => None,\n    }\n}\n\n");
    }
    // Integer domains.
    for (domain, prefixes, bits) in DOMAINS {
        let members: Vec<(&String, &Const)> = consts
            .iter()
            .filter(|(n, (_, ty))| {
                ty.is_empty()
                    && prefixes.iter().any(|p| {
                        if p.ends_with('_') {
                            n.starts_with(p)
                        } else {
                            n.as_str() == *p
                        }
                    })
            })
            .map(|(n, (c, _))| (n, c))
            .collect();
        for (dir, from, to) in [("std", "MPICH", "standard"), ("mpich", "standard", "MPICH")] {
            let _ = writeln!(
                s,
                "/// A `{domain}` value from the {from} ABI to the {to} ABI{}.\n#[inline]\npub fn {domain}_to_{dir}(v: i32) -> i32 {{",
                if bits { " (bit flags)" } else { "" }
            );
            let pairs: Vec<(i64, i64)> = members
                .iter()
                .map(|(_, c)| {
                    if dir == "std" {
                        (c.mpich, c.std as i64)
                    } else {
                        (c.std as i64, c.mpich)
                    }
                })
                .collect();
            if bits {
                // Bits that are no flag of the source ABI pass unchanged (both ABIs use the
                // same span of bits, so an invalid bit stays invalid).
                let all: i64 = pairs.iter().map(|p| p.0).fold(0, |a, b| a | b);
                let _ = writeln!(s, "    let mut r = v & !{all};");
                for (a, b) in &pairs {
                    let _ = writeln!(s, "    if v & {a} != 0 {{\n        r |= {b};\n    }}");
                }
                s.push_str("    r\n}\n");
            } else {
                if pairs.iter().all(|p| p.0 < 0 && p.1 < 0) {
                    // Only negative values are special: the common case passes at once.
                    s.push_str("    if v >= 0 {\n        return v;\n    }\n");
                }
                if domain == "err" {
                    s.push_str("    if v == 0 {\n        return 0;\n    }\n");
                }
                s.push_str("    match v {\n");
                let mut seen = BTreeSet::new();
                for (a, b) in &pairs {
                    if seen.insert(*a) {
                        let _ = writeln!(s, "        {a} => {b},");
                    }
                }
                // A value that is special only on the other side must not turn into one.
                let targets: BTreeSet<i64> = pairs.iter().map(|p| p.1).collect();
                let sources: BTreeSet<i64> = pairs.iter().map(|p| p.0).collect();
                let clash: Vec<String> = targets
                    .difference(&sources)
                    .map(|v| v.to_string())
                    .collect();
                if !clash.is_empty() && domain != "err" {
                    let _ = writeln!(s, "        {} => i32::MIN + 1,", clash.join(" | "));
                }
                if domain == "err" && dir == "std" {
                    let _ = writeln!(
                        s,
                        "        x if x >= 0x4000_0000 => x - 0x4000_0000 + 0x4000,"
                    );
                }
                if domain == "err" && dir == "mpich" {
                    // Classes MPICH 4.0 does not have become MPI_ERR_OTHER; user codes keep
                    // their value (both above every predefined class).
                    let _ = writeln!(s, "        x if x >= 0x4000 => x - 0x4000 + 0x4000_0000,");
                    let _ = writeln!(
                        s,
                        "        x if (0..0x4000).contains(&x) => c::MPI_ERR_OTHER,"
                    );
                }
                s.push_str("        other => other,\n    }\n}\n");
            }
        }
    }
    s
}

/// What one parameter needs on its way to the standard ABI.
enum Conv {
    /// Same type and value in both ABIs.
    Plain,
    /// An integer handle by value.
    HandleIn(&'static str),
    /// A pointer to one integer handle (read before, written after).
    HandleRef(&'static str),
    /// An array of integer handles, its length an expression.
    HandleArray(&'static str, String),
    /// `MPI_File` (a pointer in both; only the null handle differs).
    File,
    /// A pointer to one `MPI_File`.
    FileRef,
    /// A pointer to one status.
    Status,
    /// An array of statuses: length to allocate, length written back.
    StatusArray(String, String),
    /// An integer of a domain, by value.
    IntIn(&'static str),
    /// A pointer to one integer of a domain (read before, written after).
    IntRef(&'static str),
    /// An array of integers of a domain (input), its length an expression.
    IntArrayIn(&'static str, String),
    /// A collective's send or receive buffer (`MPI_IN_PLACE` differs).
    Buffer,
    /// A weights array (`MPI_UNWEIGHTED`, `MPI_WEIGHTS_EMPTY` differ).
    Weights,
}

fn int_kind(base: &str) -> Option<&'static str> {
    INT_KINDS.iter().find(|(t, _)| *t == base).map(|(_, k)| *k)
}

fn has(f: &Func, name: &str) -> bool {
    f.params.iter().any(|p| p.name == name)
}

/// Whether the call reports through `int *flag` whether it did anything (the tests).
fn has_out_flag(f: &Func) -> bool {
    f.params.iter().any(|p| p.name == "flag" && p.stars == 1)
}

/// The number of elements of an array of handles or statuses before the call.
fn array_len(f: &Func, p: &Param) -> String {
    let n = f.name.as_str();
    if p.name == "sendtypes" || p.name == "recvtypes" {
        let neighbor = n.contains("eighbor");
        return format!(
            "cv::alltoallw_len(comm, {}, {neighbor})",
            p.name == "sendtypes"
        );
    }
    if p.name == "array_of_datatypes" && n == "MPI_T_event_get_info" {
        return "if num_elements.is_null() { 0 } else { *num_elements }".into();
    }
    if p.name == "array_of_datatypes" {
        return "max_datatypes".into();
    }
    for c in ["count", "incount"] {
        if has(f, c) {
            return c.into();
        }
    }
    panic!("{n}: no length for the array {}", p.name)
}

fn conv(f: &Func, p: &Param) -> Conv {
    let n = f.name.as_str();
    let name = p.name.as_str();
    let base = p.c_base.as_str();
    if let Some(kind) = int_kind(base) {
        return match (p.stars, p.array) {
            (0, _) => Conv::HandleIn(kind),
            (1, false) => Conv::HandleRef(kind),
            (1, true) => Conv::HandleArray(kind, array_len(f, p)),
            _ => panic!("{n}: {name}"),
        };
    }
    if base == "MPI_File" {
        return if p.stars == 0 {
            Conv::File
        } else {
            Conv::FileRef
        };
    }
    if base == "MPI_Status" {
        if p.array {
            let before = array_len(f, p);
            let after = if has(f, "outcount") {
                "cv::some_count(outcount)".to_string()
            } else if has_out_flag(f) {
                format!("if *flag != 0 {{ {before} }} else {{ 0 }}")
            } else {
                before.clone()
            };
            return Conv::StatusArray(before, after);
        }
        return Conv::Status;
    }
    if base == "void" && p.stars == 1 && name.ends_with("buf") {
        return Conv::Buffer;
    }
    let typed = match base {
        "MPI_T_source_order" => Some("srcorder"),
        "MPI_T_cb_safety" => Some("cbsafety"),
        _ => None,
    };
    if let Some(d) = typed {
        return if p.stars == 0 {
            Conv::IntIn(d)
        } else {
            Conv::IntRef(d)
        };
    }
    if base != "int" {
        return Conv::Plain;
    }
    if p.array {
        return match name {
            "sourceweights" | "destweights" | "weights" => Conv::Weights,
            "array_of_distribs" => Conv::IntArrayIn("distrib", "ndims".into()),
            "array_of_dargs" => Conv::IntArrayIn("darg", "ndims".into()),
            _ => Conv::Plain,
        };
    }
    let domain = match name {
        "source" | "dest" | "root" | "target_rank" | "rank_source" | "rank_dest" => "rank",
        "rank" if p.stars == 0 => "rank",
        "tag" | "sendtag" | "recvtag" => "tag",
        "required" | "provided" => "thread",
        "result" if n.ends_with("_compare") => "compare",
        "status" if n == "MPI_Topo_test" => "topo",
        "combiner" => "combiner",
        "order" => "order",
        "amode" => "amode",
        "assert" => "assert",
        "lock_type" => "lock",
        "whence" => "seek",
        "split_type" => "split",
        "typeclass" => "typeclass",
        "comm_keyval" | "win_keyval" | "type_keyval" | "keyval" => "keyval",
        "errorcode" if n != "MPI_Abort" => "err",
        "errorclass" | "error" => "err",
        "verbosity" => "verbosity",
        "bind" => "bind",
        "scope" => "scope",
        "var_class" => "pvarclass",
        _ => return Conv::Plain,
    };
    if p.stars == 0 {
        Conv::IntIn(domain)
    } else {
        Conv::IntRef(domain)
    }
}

/// The MPICH-side Rust type of a parameter.
fn mpich_type(p: &Param) -> String {
    let Some(_) = int_kind(&p.c_base) else {
        if p.c_base == "MPI_Status" {
            return if p.is_const {
                "*const MpichStatus".into()
            } else {
                "*mut MpichStatus".into()
            };
        }
        return p.rust.clone();
    };
    match p.stars {
        0 => "c_int".into(),
        _ if p.is_const => "*const c_int".into(),
        _ => "*mut c_int".into(),
    }
}

fn entries(funcs: &[Func]) -> String {
    let mut s = String::from(
        "// Generated by build.rs (codegen/mpich_abi.rs) from src/abi/api/functions.txt.\n\n",
    );
    for f in funcs {
        if !f.supported || skipped(&f.name) {
            continue;
        }
        let name = &f.name;
        let pname = format!("P{name}");
        let ret = rust_ret(&f.ret);
        let sig: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, mpich_type(p)))
            .collect();
        let sig = sig.join(", ");
        let names: Vec<String> = f.params.iter().map(|p| p.name.clone()).collect();
        let names = names.join(", ");
        let _ = writeln!(
            s,
            "/// `{name}` in MPICH's ABI: converts its arguments and calls the standard-ABI `{pname}`."
        );
        let _ = writeln!(
            s,
            "#[no_mangle]\npub unsafe extern \"C\" fn {pname}({sig}) -> {mret} {{",
            mret = mpich_ret(f)
        );
        // Value-returning conversions: c2f / f2c are the identity on MPICH's integers.
        if name == "MPI_File_c2f" {
            let _ = writeln!(
                s,
                "    crate::abi::generated::PMPI_File_c2f(cv::file_in(file))\n}}"
            );
        } else if name == "MPI_File_f2c" {
            let _ = writeln!(
                s,
                "    cv::file_out(crate::abi::generated::PMPI_File_f2c(file))\n}}"
            );
        } else if name.ends_with("_c2f") || name.ends_with("_f2c") {
            let _ = writeln!(s, "    {}\n}}", f.params[0].name);
        } else {
            let mut pre = String::new();
            let mut args = Vec::new();
            let mut post = String::new();
            for p in &f.params {
                let a = &p.name;
                let cast = if p.is_const {
                    ".cast_const().cast()"
                } else {
                    ".cast()"
                };
                match conv(f, p) {
                    Conv::Plain => args.push(a.clone()),
                    Conv::HandleIn(k) => args.push(format!("cv::{k}_in({a}) as {}", p.rust)),
                    Conv::HandleRef(k) => {
                        let _ = writeln!(pre, "    let mut {a}_ = cv::HandleRef::new({a} as *mut c_int, cv::Kind::{});", camel(k));
                        args.push(format!("{a}_.ptr(){cast}"));
                        let _ = writeln!(post, "    {a}_.finish();");
                    }
                    Conv::HandleArray(k, len) => {
                        let k = camel(k);
                        let _ = writeln!(pre, "    let mut {a}_room = cv::Room::<usize>::new();\n    let {a}_n = if {a}.is_null() {{ 0 }} else {{ cv::len({len}) }};\n    let {a}_ = cv::handles_in({a} as *const c_int, {a}_n, cv::Kind::{k}, &mut {a}_room);");
                        args.push(format!("{a}_{cast}"));
                        if !p.is_const {
                            let _ = writeln!(post, "    cv::handles_out({a} as *mut c_int, {a}_n, cv::Kind::{k}, {a}_);");
                        }
                    }
                    Conv::File => args.push(format!("cv::file_in({a})")),
                    Conv::FileRef => {
                        let _ = writeln!(pre, "    let mut {a}_ = cv::FileRef::new({a});");
                        args.push(format!("{a}_.ptr()"));
                        let _ = writeln!(post, "    {a}_.finish();");
                    }
                    Conv::Status => {
                        let _ = writeln!(
                            pre,
                            "    let mut {a}_ = cv::StatusRef::new({a} as *mut MpichStatus, {});",
                            p.is_const || name.starts_with("MPI_Status_set")
                        );
                        args.push(format!("{a}_.ptr(){cast}"));
                        if !p.is_const && has_out_flag(f) {
                            // A test that finds nothing leaves the status as it was.
                            let _ = writeln!(post, "    if !flag.is_null() && *flag != 0 {{\n        {a}_.finish();\n    }}");
                        } else if !p.is_const {
                            let _ = writeln!(post, "    {a}_.finish();");
                        }
                    }
                    Conv::StatusArray(before, after) => {
                        let _ = writeln!(
                            pre,
                            "    let mut {a}_room = cv::Room::<MPI_Status>::new();\n    let {a}_ = cv::statuses_room({a}, cv::len({before}), &mut {a}_room);"
                        );
                        args.push(format!("{a}_"));
                        let _ = writeln!(post, "    if rc == 0 || rc == crate::abi::consts::MPI_ERR_IN_STATUS {{\n        cv::statuses_out({a}, {a}_, cv::len({after}));\n    }}");
                    }
                    Conv::IntIn(d) => args.push(format!("cv::{d}_to_std({a})")),
                    Conv::IntRef(d) => {
                        let _ = writeln!(pre, "    let mut {a}_ = cv::IntRef::new({a} as *mut c_int, cv::{d}_to_std, cv::{d}_to_mpich);");
                        args.push(format!("{a}_.ptr(){cast}"));
                        if !p.is_const {
                            let _ = writeln!(post, "    {a}_.finish();");
                        }
                    }
                    Conv::IntArrayIn(d, len) => {
                        let _ = writeln!(
                            pre,
                            "    let {a}_ = cv::IntArray::new({a}, {len}, cv::{d}_to_std);"
                        );
                        args.push(format!("{a}_.ptr()"));
                    }
                    Conv::Buffer => args.push(format!("cv::buffer({a})")),
                    Conv::Weights => args.push(format!("cv::weights({a})")),
                }
            }
            if name.starts_with("MPI_Type_get_contents") {
                let _ = writeln!(post, "    if rc == 0 {{\n        cv::contents_ints_out(datatype, array_of_integers, cv::len(max_integers));\n    }}");
            }
            let call = format!("crate::abi::generated::{pname}({})", args.join(", "));
            if ret == "c_int" {
                let _ = write!(
                    s,
                    "{pre}    let rc = {call};\n{post}    cv::err_out(rc)\n}}\n"
                );
            } else {
                let _ = write!(s, "{pre}    let r = {call};\n{post}    r\n}}\n");
            }
        }
        let _ = writeln!(
            s,
            "/// `{name}` in MPICH's ABI: forwards to `{pname}` (profiling interface).\n#[no_mangle]\npub unsafe extern \"C\" fn {name}({sig}) -> {mret} {{\n    {pname}({names})\n}}\n",
            mret = mpich_ret(f)
        );
    }
    s
}

/// The generator's copy of the generated `predefined_hash`.
fn predefined_hash(v: i32) -> usize {
    ((v as u32 ^ (v as u32 >> 24)) & 255) as usize
}

fn mpich_ret(f: &Func) -> String {
    if int_kind(&f.ret).is_some() {
        "c_int".into()
    } else {
        rust_ret(&f.ret).into()
    }
}

fn camel(k: &str) -> String {
    let mut c = k.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
