//! Generates the boring layer from one table.
//!
//! Inputs: `src/abi/api/prologue.h` (types and constants of the MPI-5.0 ABI) and
//! `src/abi/api/functions.txt` (every C function, one prototype a line, grouped by chapter).
//! Outputs:
//! - `$OUT_DIR/abi_consts.rs`: every integer `#define` of the prologue as a Rust constant;
//! - `$OUT_DIR/abi_entry.rs`: `PMPI_x` (argument conversion, panic boundary, error-handler
//!   dispatch) and `MPI_x` (forwards to `PMPI_x`) for every function; the body calls
//!   `crate::abi::imp::MPI_x`, or for a function the table marks `@unsupported` returns
//!   `MPI_ERR_UNSUPPORTED_OPERATION` naming the function (the build fails when `src/abi/imp/`
//!   and the marks disagree);
//! - `$OUT_DIR/abi_profiling.rs`: the C symbols `MPI_x`, weak, jumping to `PMPI_x` (the
//!   profiling interface), and `abi_profiling.map`, which exports them from the shared library;
//! - `include/mpi.h`, `docs/coverage.md` and the coverage section of `README.md` (written only
//!   when their content changes).

#[path = "codegen/mpich_abi.rs"]
mod mpich_abi;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

struct Param {
    name: String,
    rust: String,
    /// The C type without qualifiers and stars (`MPI_Comm`, `int`, `MPI_User_function`).
    c_base: String,
    /// Pointer levels (an array parameter counts one).
    stars: usize,
    /// Declared as an array (`MPI_Request array_of_requests[]`).
    array: bool,
    /// `const`-qualified.
    is_const: bool,
}

struct Func {
    chapter: String,
    /// False for a function marked `@unsupported` in the table (its entry point returns
    /// `MPI_ERR_UNSUPPORTED_OPERATION`).
    supported: bool,
    ret: String,
    name: String,
    params: Vec<Param>,
    variadic: bool,
    proto_args: String,
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // The profile directory (target/<profile>) holds the binaries built with this library:
    // MPI_Comm_spawn's last resort for finding hympiexec (core::objects::spawn::launcher).
    if let Some(bin) = out.ancestors().nth(3) {
        println!("cargo:rustc-env=HYMPI_BUILD_BIN_DIR={}", bin.display());
    }
    let api = root.join("src/abi/api");
    println!("cargo:rerun-if-changed=src/abi/api");
    println!("cargo:rerun-if-changed=src/abi/imp");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=codegen");
    println!("cargo:rerun-if-changed=src/abi/mpich/constants.txt");
    println!("cargo:rerun-if-changed=src/core/op/ext.c");
    // libhympi.so carries the soname libhympi.so.0 (ABI major 0): programs linked against it
    // record that name, and scripts/install-prefix installs libhympi.so.0.x.y with links.
    // Built with the `mpich-abi` feature, the same library is MPICH's `libmpich.so.12`.
    let mpich_abi = std::env::var_os("CARGO_FEATURE_MPICH_ABI").is_some();
    let soname = if mpich_abi {
        "libmpich.so.12"
    } else {
        "libhympi.so.0"
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");

    cc::Build::new()
        .file(root.join("src/core/op/ext.c"))
        .opt_level(2)
        .flag_if_supported("-std=gnu11")
        .warnings(true)
        .compile("hympi_op_ext");

    // The network transport's C side (libfabric's inline calls; libfabric itself is loaded
    // with dlopen at run time). Without libfabric's headers it builds a variant whose every
    // call says so, and jobs that span nodes fail at MPI_Init with that message.
    println!("cargo:rerun-if-changed=src/transport/ofi/shim.c");
    let mut shim = cc::Build::new();
    shim.file(root.join("src/transport/ofi/shim.c"))
        .opt_level(2)
        .flag_if_supported("-std=gnu11")
        .warnings(true);
    if Path::new("/usr/include/rdma/fabric.h").exists() {
        shim.define("HYMPI_HAVE_OFI", None);
    }
    shim.compile("hympi_ofi_shim");

    let prologue = fs::read_to_string(api.join("prologue.h")).expect("prologue.h");
    let hympi_prologue = fs::read_to_string(api.join("hympi_prologue.h")).unwrap_or_default();
    fs::write(
        out.join("abi_consts.rs"),
        gen_consts(&[&prologue, &hympi_prologue]),
    )
    .unwrap();

    let funcs = parse_table(&fs::read_to_string(api.join("functions.txt")).expect("functions.txt"));
    let ext_funcs = fs::read_to_string(api.join("hympi_functions.txt"))
        .map(|t| parse_table(&t))
        .unwrap_or_default();
    // "Implemented" is what the tables declare; the sources must agree.
    let defined = scan_implemented(&root.join("src/abi/imp"));
    let implemented: BTreeSet<String> = funcs
        .iter()
        .chain(ext_funcs.iter())
        .filter(|f| f.supported)
        .map(|f| f.name.clone())
        .collect();
    for f in funcs.iter().chain(ext_funcs.iter()) {
        match (f.supported, defined.contains(&f.name)) {
            (true, false) => panic!(
                "src/abi/api: {} is declared implemented, but src/abi/imp/ defines no {}; \
                 implement it or mark its line @unsupported",
                f.name, f.name
            ),
            (false, true) => panic!(
                "src/abi/api: {} is marked @unsupported, but src/abi/imp/ defines it; \
                 remove the mark",
                f.name
            ),
            _ => {}
        }
    }

    let mut entry = String::new();
    for f in funcs.iter().chain(ext_funcs.iter()) {
        gen_entry(&mut entry, f, implemented.contains(&f.name));
    }
    fs::write(out.join("abi_entry.rs"), entry).unwrap();
    let names: Vec<&str> = funcs
        .iter()
        .chain(ext_funcs.iter())
        .map(|f| f.name.as_str())
        .collect();
    let alias = std::env::var("PROFILE").as_deref() == Ok("release")
        && std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64");
    fs::write(
        out.join("abi_profiling.rs"),
        gen_profiling_stubs(&names, alias),
    )
    .unwrap();
    if !mpich_abi {
        // The weak `MPI_x` symbols are defined in assembly, which the version script rustc
        // writes for the shared library does not list: a second script exports them.
        let map = out.join("abi_profiling.map");
        fs::write(&map, "{ global: MPI_*; MPIX_*; };\n").unwrap();
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
            map.display()
        );
    }
    let mpich_consts = fs::read_to_string(root.join("src/abi/mpich/constants.txt"))
        .expect("src/abi/mpich/constants.txt");
    let (mpich_entry, mpich_values) = mpich_abi::generate(&funcs, &prologue, &mpich_consts);
    fs::write(out.join("abi_mpich_entry.rs"), mpich_entry).unwrap();
    fs::write(out.join("abi_mpich_values.rs"), mpich_values).unwrap();

    write_if_changed(
        &root.join("include/mpi.h"),
        &gen_header("MPI_H_INCLUDED", "", &prologue, &funcs, true),
    );
    if !ext_funcs.is_empty() {
        write_if_changed(
            &root.join("include/hympi_mpix.h"),
            &gen_header(
                "HYMPI_MPIX_H_INCLUDED",
                "#include \"mpi.h\"\n",
                &hympi_prologue,
                &ext_funcs,
                false,
            ),
        );
    }
    let (detail, summary) = gen_coverage(&funcs, &ext_funcs, &implemented);
    write_if_changed(&root.join("docs/coverage.md"), &detail);
    let readme = root.join("README.md");
    if let Ok(text) = fs::read_to_string(&readme) {
        let (b, e) = ("<!-- coverage:begin -->", "<!-- coverage:end -->");
        if let (Some(i), Some(j)) = (text.find(b), text.find(e)) {
            let new = format!("{}{}\n{}{}", &text[..i + b.len()], "", summary, &text[j..]);
            let new = new.replacen(b, &format!("{b}\n"), 1);
            write_if_changed(&readme, &new);
        }
    }
}

fn write_if_changed(path: &Path, content: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(content) {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).unwrap();
        }
        fs::write(path, content).unwrap();
    }
}

/// `#define NAME ((Type)0x101)`, `#define NAME (-3)`, `#define NAME 42` become Rust constants:
/// handle and pointer casts as `usize`, plain integers as `i32` (or `i64` when too large).
fn gen_consts(texts: &[&str]) -> String {
    let mut s = String::from("// Generated by build.rs from src/abi/api/*prologue.h.\n");
    let mut seen = BTreeSet::new();
    for text in texts {
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("#define ") else {
                continue;
            };
            let mut it = rest.splitn(2, char::is_whitespace);
            let (Some(name), Some(value)) = (it.next(), it.next()) else {
                continue;
            };
            if name.contains('(') || !seen.insert(name.to_string()) {
                continue;
            }
            let value = value.trim();
            let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
            // ((Type)NUMBER) or ((Type*)NUMBER)
            if let Some(inner) = compact.strip_prefix("((").and_then(|v| v.strip_suffix(')')) {
                if let Some(close) = inner.find(')') {
                    let ty = &inner[..close];
                    if let Some(n) = parse_int(&inner[close + 1..]) {
                        let rty = if ty == "int" { "i32" } else { "usize" };
                        let n = if rty == "usize" {
                            n as usize as i128
                        } else {
                            n
                        };
                        let _ = writeln!(s, "pub const {name}: {rty} = {n} as {rty}; // {ty}");
                        continue;
                    }
                }
            }
            let num = compact.trim_start_matches('(').trim_end_matches(')');
            if let Some(n) = parse_int(num) {
                let rty = if i32::try_from(n).is_ok() {
                    "i32"
                } else {
                    "i64"
                };
                let _ = writeln!(s, "pub const {name}: {rty} = {n};");
            }
        }
    }
    s
}

fn parse_int(t: &str) -> Option<i128> {
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else {
        t.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

fn parse_table(text: &str) -> Vec<Func> {
    let mut chapter = String::from("Other");
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(c) = line.strip_prefix("## ") {
            chapter = c.trim().to_string();
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (proto, supported) = match line.strip_suffix("@unsupported") {
            Some(p) => (p.trim_end(), false),
            None => (line, true),
        };
        let mut f = parse_proto(&chapter, proto);
        f.supported = supported;
        out.push(f);
    }
    out
}

fn parse_proto(chapter: &str, line: &str) -> Func {
    let line = line.trim_end_matches(';').trim();
    let open = line
        .find('(')
        .unwrap_or_else(|| panic!("bad prototype: {line}"));
    let close = line.rfind(')').unwrap();
    let head = line[..open].trim();
    let name_start = head.rfind(|c: char| c.is_whitespace() || c == '*').unwrap() + 1;
    let name = head[name_start..].to_string();
    let ret = head[..name_start].trim().to_string();
    let args = line[open + 1..close].trim();
    let mut params = Vec::new();
    let mut variadic = false;
    if args != "void" && !args.is_empty() {
        for p in args.split(',') {
            let p = p.trim();
            if p == "..." {
                variadic = true;
                continue;
            }
            params.push(parse_param(p, &name));
        }
    }
    Func {
        supported: true,
        chapter: chapter.to_string(),
        ret,
        name,
        params,
        variadic,
        proto_args: args.to_string(),
    }
}

fn parse_param(p: &str, fname: &str) -> Param {
    // Split off array suffixes: `int ranges[][3]`, `MPI_Request array_of_requests[]`.
    let (decl, arrays) = match p.find('[') {
        Some(i) => (p[..i].trim(), p[i..].matches('[').count()),
        None => (p, 0),
    };
    let name_start = decl
        .rfind(|c: char| c.is_whitespace() || c == '*')
        .unwrap_or_else(|| panic!("{fname}: {p}"))
        + 1;
    let name = decl[name_start..].to_string();
    let tpart = decl[..name_start].trim();
    let mut stars = tpart.matches('*').count() + arrays.min(1);
    let is_const = tpart.starts_with("const");
    let base = tpart.replace('*', " ").replace("const", " ");
    let base = base.split_whitespace().collect::<Vec<_>>().join(" ");
    // A parameter of function type (`MPI_T_event_cb_function event_cb_function`) is a pointer.
    if stars == 0 && (base.ends_with("_function") || base.ends_with("_function_c")) {
        stars = 1;
    }
    let rbase = rust_base(&base, stars, fname);
    let mut rust = rbase;
    for level in 0..stars {
        let ptr = if is_const && level == 0 {
            "*const "
        } else {
            "*mut "
        };
        rust = format!("{ptr}{rust}");
    }
    Param {
        name: rust_ident(&name),
        rust,
        c_base: base,
        stars,
        array: arrays > 0,
        is_const,
    }
}

fn rust_ident(name: &str) -> String {
    match name {
        "type" | "ref" | "in" | "fn" | "match" | "mod" | "loop" | "move" | "self" | "where"
        | "use" => format!("{name}_"),
        _ => name.to_string(),
    }
}

fn rust_base(base: &str, stars: usize, fname: &str) -> String {
    match base {
        "int" => "c_int".into(),
        "unsigned" | "unsigned int" => "c_uint".into(),
        "char" => "c_char".into(),
        "void" => "c_void".into(),
        "double" => "f64".into(),
        "long" => "c_long".into(),
        b if b.starts_with("MPI")
            && !(b.ends_with("_function") || b.ends_with("_function_c") || b.ends_with("_fn")) =>
        {
            b.into()
        }
        b if stars > 0 => {
            let _ = b;
            "c_void".into()
        }
        b => panic!("{fname}: unknown C type `{b}`"),
    }
}

fn rust_ret(ret: &str) -> &str {
    match ret {
        "int" => "c_int",
        "double" => "f64",
        other => other,
    }
}

/// `line` with the contents of its string literals blanked (so that a function's name in a
/// message does not count as its definition).
fn without_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_str = false;
    let mut escaped = false;
    for c in line.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
                out.push(c);
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        out.push(c);
    }
    out
}

fn scan_implemented(dir: &Path) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return set;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            set.extend(scan_implemented(&p));
            continue;
        }
        if p.extension().map(|x| x == "rs").unwrap_or(false) {
            let text = fs::read_to_string(&p).unwrap_or_default();
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(without_strings)
                .collect::<Vec<_>>()
                .join("\n");
            // Every identifier naming an MPI function counts (plain `fn MPI_x(` definitions and
            // names handed to definition macros); a name with no definition fails to compile.
            let mut rest = code.as_str();
            while let Some(k) = rest.find("MPI") {
                let before = rest[..k].chars().last();
                let tail = &rest[k..];
                let end = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                if !before
                    .map(|c| c.is_alphanumeric() || c == '_')
                    .unwrap_or(false)
                {
                    set.insert(tail[..end].to_string());
                }
                rest = &tail[end.max(1)..];
            }
        }
    }
    set
}

fn err_object(f: &Func) -> String {
    for p in &f.params {
        match p.rust.as_str() {
            "MPI_Comm" => return format!("ErrObj::Comm({} as usize)", p.name),
            "MPI_Win" => return format!("ErrObj::Win({} as usize)", p.name),
            "MPI_File" => return format!("ErrObj::File({} as usize)", p.name),
            "MPI_Session" => return format!("ErrObj::Session({} as usize)", p.name),
            _ => {}
        }
    }
    "ErrObj::None".into()
}

/// The closure that tells a trace (`HYMPI_TRACE`) what a call's parameters say: its
/// communicator, peer, tag, count and datatype, and the request it returned, found by the
/// parameters' names and types.
fn trace_args(f: &Func) -> String {
    let find = |names: &[&str], types: &[&str]| {
        names.iter().find_map(|n| {
            f.params
                .iter()
                .find(|p| p.name == *n && types.contains(&p.rust.as_str()))
        })
    };
    let counts = ["c_int", "MPI_Count"];
    let mut fields = Vec::new();
    if let Some(p) = find(&["comm"], &["MPI_Comm"]) {
        fields.push(format!("comm: Some({} as usize)", p.name));
    }
    if let Some(p) = find(&["dest", "source", "root", "target_rank"], &["c_int"]) {
        fields.push(format!("peer: Some({})", p.name));
    }
    if let Some(p) = find(&["tag", "sendtag"], &["c_int"]) {
        fields.push(format!("tag: Some({})", p.name));
    }
    let count = find(&["count", "sendcount", "origin_count"], &counts);
    let dt = find(
        &["datatype", "sendtype", "origin_datatype"],
        &["MPI_Datatype"],
    );
    if let (Some(c), Some(d)) = (count, dt) {
        if c.rust == "MPI_Count" {
            fields.push(format!("count: Some({})", c.name));
        } else {
            fields.push(format!("count: Some(i64::from({}))", c.name));
        }
        fields.push(format!("datatype: Some({} as usize)", d.name));
    }
    if let Some(p) = find(&["request"], &["*mut MPI_Request"]) {
        fields.push(format!(
            "request: if code == 0 {{ \
             // SAFETY: a successful call wrote the request through this pointer.\n\
             unsafe {{ {}.as_ref() }}.map(|r| *r as usize) }} else {{ None }}",
            p.name
        ));
    }
    if fields.is_empty() {
        return "|_| entry::CallArgs::default()".into();
    }
    let code = if fields.iter().any(|f| f.starts_with("request")) {
        "code"
    } else {
        "_"
    };
    // All six fields named: no `..Default::default()` (clippy's `needless_update`).
    let rest = if fields.len() < 6 {
        ", ..Default::default()"
    } else {
        ""
    };
    format!("|{code}| entry::CallArgs {{ {}{rest} }}", fields.join(", "))
}

/// The calls whose leaf fast paths record them in the trace themselves
/// (`src/abi/imp/p2p/send_recv.rs`, `wait.rs`: the `*_traced_entry` functions).
const LEAF_TRACED: [&str; 5] = [
    "MPI_Isend",
    "MPI_Irecv",
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Test",
];

fn gen_entry(s: &mut String, f: &Func, implemented: bool) {
    let sig: Vec<String> = f
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.rust))
        .collect();
    let args: Vec<String> = f.params.iter().map(|p| p.name.clone()).collect();
    let (sig, args) = (sig.join(", "), args.join(", "));
    let ret = rust_ret(&f.ret);
    let pname = format!("P{}", f.name);
    let name = &f.name;
    let _ = writeln!(
        s,
        "/// `{}({})`{}",
        name,
        f.proto_args,
        if implemented {
            ""
        } else {
            ": not implemented yet (returns `MPI_ERR_UNSUPPORTED_OPERATION`)"
        }
    );
    let _ = writeln!(
        s,
        "#[cfg_attr(not(feature = \"mpich-abi\"), no_mangle)]\npub unsafe extern \"C\" fn {pname}({sig}) -> {ret} {{"
    );
    let call = if implemented {
        format!("imp::{name}({args})")
    } else {
        format!("{{ let _ = ({args}); Err(MpiError::unsupported(\"{name}\")) }}")
    };
    // `MPI_<Handle>_toint` returns a value, not an error code.
    if ret == "c_int" && !name.ends_with("_toint") {
        // Traced calls run a cold copy of the entry point, so that the body stays inlined
        // (called once) in the hot one, which gains one test of the flag. The calls with
        // leaf fast paths test it only where their leaves find the ways closed (as tracing
        // keeps them), so that open ways pay nothing.
        if !LEAF_TRACED.contains(&name.as_str()) {
            let _ = writeln!(
                s,
                "    if crate::core::diag::trace_on() {{\n        return traced_{pname}({args});\n    }}"
            );
        }
        let _ = writeln!(
            s,
            "    entry::call(\"{name}\", {}, || {call})\n}}",
            err_object(f)
        );
        if !LEAF_TRACED.contains(&name.as_str()) {
            let _ = writeln!(
                s,
                "/// `{pname}` recorded in the trace (`HYMPI_TRACE`).\n#[cold]\n#[inline(never)]\nunsafe fn traced_{pname}({sig}) -> {ret} {{"
            );
            let _ = writeln!(
                s,
                "    entry::call_recorded(\"{name}\", {}, {}, || {call})\n}}",
                err_object(f),
                trace_args(f)
            );
        }
        let _ = writeln!(s);
    } else {
        let _ = writeln!(s, "    entry::call_value(\"{name}\", || {call})\n}}");
    }
    let _ = writeln!(
        s,
        "/// `{name}`: forwards to `{pname}`. For Rust callers: C programs call the weak `{name}`\n/// symbol of the profiling stubs (`abi_profiling.rs`), which a tool's own `{name}` replaces."
    );
    let _ = writeln!(s, "#[cfg_attr(all(not(feature = \"mpich-abi\"), not(target_arch = \"x86_64\")), no_mangle)]\npub unsafe extern \"C\" fn {name}({sig}) -> {ret} {{\n    {pname}({args})\n}}\n");
    let _ = f.variadic;
}

/// The profiling interface's `MPI_x` symbols (MPI-5.0, chapter 15): for each function a weak
/// `MPI_x` that jumps to `PMPI_x`, each in a section of its own. Weak, so that a program or
/// tool defining its own `MPI_x` (and calling `PMPI_x`) links against the static library
/// instead of meeting a duplicate symbol; a jump, so that arguments (variadic ones too) pass
/// through untouched. Rust cannot declare a weak function on stable, hence the assembly.
///
/// In a release build (one codegen unit: `PMPI_x` and this assembly share an object) each
/// `MPI_x` is instead a weak alias of `PMPI_x`, as MPICH's `#pragma weak MPI_x = PMPI_x`:
/// the same address, so a call costs no jump. Other builds split the crate into several
/// objects, where an alias could not name a symbol of another one.
fn gen_profiling_stubs(names: &[&str], alias: bool) -> String {
    let mut s = String::from(
        "// Generated by hympi's build.rs: weak MPI_x symbols for PMPI_x.\ncore::arch::global_asm!(\n",
    );
    for name in names {
        let lines = if alias {
            vec![
                format!(".weak {name}"),
                format!(".type {name},@function"),
                format!(".set {name}, P{name}"),
            ]
        } else {
            vec![
                format!(".pushsection .text.{name},\"ax\",@progbits"),
                format!(".weak {name}"),
                format!(".type {name},@function"),
                format!("{name}:"),
                format!("jmp P{name}@PLT"),
                format!(".size {name}, .-{name}"),
                ".popsection".to_string(),
            ]
        };
        for line in lines {
            let _ = writeln!(s, "    {:?},", line);
        }
    }
    s.push_str(");\n");
    s
}

fn gen_header(
    guard: &str,
    include: &str,
    prologue: &str,
    funcs: &[Func],
    close_extern_c: bool,
) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "/* Generated by hympi's build.rs from src/abi/api/: do not edit. */"
    );
    let _ = writeln!(h, "#ifndef {guard}\n#define {guard}\n{include}");
    h.push_str(prologue);
    if !close_extern_c {
        h.push_str("\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
    }
    let mut chapter = "";
    for f in funcs {
        if f.chapter != chapter {
            chapter = &f.chapter;
            let _ = writeln!(h, "\n/* ---- {chapter} ---- */");
        }
        let _ = writeln!(h, "{} {}({});", f.ret, f.name, f.proto_args);
    }
    let _ = writeln!(h, "\n/* ---- profiling interface ---- */");
    for f in funcs {
        let _ = writeln!(h, "{} P{}({});", f.ret, f.name, f.proto_args);
    }
    h.push_str("\n#ifdef __cplusplus\n}\n#endif\n");
    let _ = writeln!(h, "#endif /* {guard} */");
    h
}

fn gen_coverage(funcs: &[Func], ext: &[Func], implemented: &BTreeSet<String>) -> (String, String) {
    let mut detail = String::from(
        "# Coverage of the MPI-5.0 C interface\n\nGenerated by build.rs from `src/abi/api/functions.txt`: do not edit. \
         A function marked `no` returns `MPI_ERR_UNSUPPORTED_OPERATION` through the error handler, naming itself.\n",
    );
    let mut summary = String::from("| chapter | implemented | functions |\n|---|---:|---:|\n");
    let mut chapters: Vec<(String, usize, usize)> = Vec::new();
    let (mut ti, mut tt) = (0, 0);
    for (title, list) in [("MPI-5.0", funcs), ("hympi extensions (MPIX_)", ext)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(detail, "\n## {title}\n");
        let mut chapter = "";
        for f in list {
            if f.chapter != chapter {
                chapter = &f.chapter;
                let _ = writeln!(
                    detail,
                    "\n### {chapter}\n\n| function | implemented |\n|---|---|"
                );
                chapters.push((chapter.to_string(), 0, 0));
            }
            let yes = implemented.contains(&f.name);
            let _ = writeln!(
                detail,
                "| `{}` | {} |",
                f.name,
                if yes { "yes" } else { "no" }
            );
            let c = chapters.last_mut().unwrap();
            c.2 += 1;
            tt += 1;
            if yes {
                c.1 += 1;
                ti += 1;
            }
        }
    }
    for (c, i, t) in &chapters {
        let _ = writeln!(summary, "| {c} | {i} | {t} |");
    }
    let _ = writeln!(summary, "| **total** | **{ti}** | **{tt}** |");
    (detail, summary)
}
