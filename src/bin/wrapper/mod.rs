//! The compiler-wrapper logic shared by `hympicc` (C) and `hympicxx` (C++), and the install
//! layout also used by `hympi-info`.
//!
//! `<wrapper> <args>` runs `<compiler> -I<include dir> <args> <lib dir>/libhympi.a -lhwloc
//! -lpthread -ldl -lm -lrt`; the link part is added only when the command links (no `-c`, `-E`,
//! `-S`, `-M`, `-MM`). `-show` prints the command instead of running it; `-compile_info` and
//! `-link_info` print its halves. Files are found relative to the executable: in an install
//! prefix `<prefix>/bin/<wrapper>` uses `<prefix>/include` and `<prefix>/lib`; in a checkout
//! `<repo>/target/<profile>/<wrapper>` uses the library next to it and `<repo>/include`.

#![allow(dead_code)] // hympi-info uses only the layout half of this module.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

/// Libraries the Rust runtime inside libhympi.a needs.
pub const SYSTEM_LIBS: [&str; 5] = ["-lhwloc", "-lpthread", "-ldl", "-lm", "-lrt"];

/// Where the header and the library are.
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    /// Directory holding `mpi.h`.
    pub include: PathBuf,
    /// Directory holding `libhympi.a`.
    pub lib: PathBuf,
    /// The install prefix, when the executable runs from one (`None` in a build tree).
    pub prefix: Option<PathBuf>,
}

/// Finds the layout from the directory holding the executable.
pub fn layout(exe_dir: &Path) -> Layout {
    // Install prefix: <prefix>/bin/<wrapper>.
    if exe_dir.file_name() == Some(OsStr::new("bin")) {
        if let Some(prefix) = exe_dir.parent() {
            if prefix.join("include/mpi.h").is_file() {
                return Layout {
                    include: prefix.join("include"),
                    lib: prefix.join("lib"),
                    prefix: Some(prefix.to_path_buf()),
                };
            }
        }
    }
    // Checkout: the library is next to the executable; the header is in the first ancestor
    // holding include/mpi.h, else in the source tree this binary was built from.
    let include = exe_dir
        .ancestors()
        .map(|d| d.join("include"))
        .find(|d| d.join("mpi.h").is_file())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("include"));
    Layout {
        include,
        lib: exe_dir.to_path_buf(),
        prefix: None,
    }
}

/// The layout of the running executable (symbolic links such as `mpicc` resolved).
pub fn own_layout(tool: &str) -> Layout {
    let exe = std::env::current_exe().unwrap_or_else(|e| {
        eprintln!("{tool}: cannot find my own executable: {e}");
        exit(1)
    });
    let exe = exe.canonicalize().unwrap_or(exe);
    layout(exe.parent().unwrap_or(Path::new(".")))
}

/// What the user asked of the wrapper.
#[derive(Debug, PartialEq, Eq)]
pub enum Mode {
    /// Run the compiler.
    Run,
    /// Print the full command.
    Show,
    /// Print the compile half.
    CompileInfo,
    /// Print the link half.
    LinkInfo,
}

/// Splits the wrapper's own options from the compiler's arguments.
pub fn split_args(args: Vec<OsString>) -> (Mode, Vec<OsString>) {
    let mut mode = Mode::Run;
    let mut rest = Vec::with_capacity(args.len());
    for a in args {
        match a.to_str() {
            Some("-show") => mode = Mode::Show,
            Some("-compile_info") => mode = Mode::CompileInfo,
            Some("-link_info") => mode = Mode::LinkInfo,
            _ => rest.push(a),
        }
    }
    (mode, rest)
}

/// True when the arguments ask the compiler to link (no `-c`, `-E`, `-S`, `-M`, `-MM`).
pub fn links(args: &[OsString]) -> bool {
    !args
        .iter()
        .any(|a| matches!(a.to_str(), Some("-c" | "-E" | "-S" | "-M" | "-MM")))
}

/// True when the arguments build a shared object (`-shared`), such as a Python extension.
pub fn shared_object(args: &[OsString]) -> bool {
    args.iter().any(|a| a.to_str() == Some("-shared"))
}

/// The full command: compiler, include flag, user arguments, then the link part if linking
/// (the shared library for a shared object, see [`shared_link_part`]).
pub fn command_line(
    cc: &OsStr,
    layout: &Layout,
    args: &[OsString],
    with_link: bool,
) -> Vec<OsString> {
    let mut cmd = vec![cc.to_os_string(), include_flag(layout)];
    cmd.extend(args.iter().cloned());
    if with_link {
        if shared_object(args) {
            cmd.extend(shared_link_part(layout));
        } else {
            cmd.extend(link_part(layout));
        }
    }
    cmd
}

/// What `-show` prints: the command the arguments would run; for a bare `-show` (no other
/// argument: how build probes such as rsmpi's `build-probe-mpi`, meson or CMake's FindMPI ask
/// how to use MPI, picking out the `-I`, `-L` and `-l` words) the link line of the shared
/// library, which a foreign toolchain can link (a Rust program cannot take the static
/// library: it carries its own copy of Rust's standard library).
pub fn show_line(cc: &OsStr, layout: &Layout, args: &[OsString]) -> Vec<OsString> {
    if args.is_empty() {
        let mut cmd = vec![cc.to_os_string(), include_flag(layout)];
        cmd.extend(shared_link_part(layout));
        return cmd;
    }
    command_line(cc, layout, args, links(args))
}

/// The libraries appended when linking a shared object: `libhympi.so` (found at run time
/// through an rpath), as MPICH's wrappers link `libmpi.so`. Linking the static library
/// into a shared object would give each such object its own private copy of MPI, and hide
/// the MPI symbols from the process (mpi4py, for one, looks them up there).
pub fn shared_link_part(layout: &Layout) -> Vec<OsString> {
    let mut dir = OsString::from("-L");
    dir.push(&layout.lib);
    let mut rpath = OsString::from("-Wl,-rpath,");
    rpath.push(&layout.lib);
    vec![dir, rpath, OsString::from("-lhympi")]
}

fn include_flag(layout: &Layout) -> OsString {
    let mut flag = OsString::from("-I");
    flag.push(&layout.include);
    flag
}

/// The libraries appended when linking: the static library, then what it needs.
pub fn link_part(layout: &Layout) -> Vec<OsString> {
    let mut part = vec![layout.lib.join("libhympi.a").into_os_string()];
    part.extend(SYSTEM_LIBS.iter().map(OsString::from));
    part
}

/// Quotes a word for display when a shell would split or expand it.
pub fn shell_word(w: &OsStr) -> String {
    let s = w.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+,:@%".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A command as a shell would read it.
pub fn show(words: &[OsString]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The whole wrapper: `tool` names it in messages, the compiler is `$env_var` when set and
/// not empty, else `default_compiler`. Never returns.
pub fn run(tool: &str, env_var: &str, default_compiler: &str) -> ! {
    let layout = own_layout(tool);
    let cc = std::env::var_os(env_var)
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| default_compiler.into());
    let (mode, args) = split_args(std::env::args_os().skip(1).collect());
    match mode {
        Mode::CompileInfo => println!("{}", show(&command_line(&cc, &layout, &[], false))),
        Mode::LinkInfo => {
            let mut words = vec![cc.clone()];
            words.extend(link_part(&layout));
            println!("{}", show(&words));
        }
        Mode::Show => println!("{}", show(&show_line(&cc, &layout, &args))),
        Mode::Run => {
            let words = command_line(&cc, &layout, &args, links(&args));
            let status = Command::new(&words[0]).args(&words[1..]).status();
            match status {
                Ok(st) => exit(st.code().unwrap_or(1)),
                Err(e) => {
                    eprintln!("{tool}: cannot run {}: {e}", cc.to_string_lossy());
                    exit(127)
                }
            }
        }
    }
    exit(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn wrapper_options_are_taken_out() {
        let (mode, rest) = split_args(os(&["-O2", "-show", "x.c", "-o", "x"]));
        assert_eq!(mode, Mode::Show);
        assert_eq!(rest, os(&["-O2", "x.c", "-o", "x"]));
        assert_eq!(split_args(os(&["-link_info"])).0, Mode::LinkInfo);
        assert_eq!(split_args(os(&["-compile_info"])).0, Mode::CompileInfo);
        assert_eq!(split_args(os(&["x.c"])).0, Mode::Run);
    }

    #[test]
    fn link_part_only_when_linking() {
        assert!(links(&os(&["-O2", "x.c", "-o", "x"])));
        for flag in ["-c", "-E", "-S", "-M", "-MM"] {
            assert!(!links(&os(&["x.c", flag])), "{flag}");
        }
        let l = Layout {
            include: "/p/include".into(),
            lib: "/p/lib".into(),
            prefix: Some("/p".into()),
        };
        let full = command_line(OsStr::new("cc"), &l, &os(&["x.c"]), true);
        assert_eq!(
            show(&full),
            "cc -I/p/include x.c /p/lib/libhympi.a -lhwloc -lpthread -ldl -lm -lrt"
        );
        let so = command_line(OsStr::new("cc"), &l, &os(&["-shared", "x.o"]), true);
        assert_eq!(
            show(&so),
            "cc -I/p/include -shared x.o -L/p/lib -Wl,-rpath,/p/lib -lhympi"
        );
        let compile = command_line(OsStr::new("g++"), &l, &os(&["-c", "x.cpp"]), false);
        assert_eq!(show(&compile), "g++ -I/p/include -c x.cpp");
    }

    #[test]
    fn a_bare_show_gives_the_shared_link_line() {
        let l = Layout {
            include: "/p/include".into(),
            lib: "/p/lib".into(),
            prefix: Some("/p".into()),
        };
        assert_eq!(
            show(&show_line(OsStr::new("cc"), &l, &[])),
            "cc -I/p/include -L/p/lib -Wl,-rpath,/p/lib -lhympi"
        );
        assert_eq!(
            show(&show_line(OsStr::new("cc"), &l, &os(&["x.c"]))),
            show(&command_line(OsStr::new("cc"), &l, &os(&["x.c"]), true))
        );
    }

    #[test]
    fn quoting_for_show() {
        assert_eq!(
            shell_word(OsStr::new("-DNAME=\"a b\"")),
            r#"'-DNAME="a b"'"#
        );
        assert_eq!(shell_word(OsStr::new("it's")), r"'it'\''s'");
        assert_eq!(shell_word(OsStr::new("")), "''");
    }

    #[test]
    fn finds_prefix_and_checkout_layouts() {
        let tmp = std::env::temp_dir().join(format!(
            "hympi-wrapper-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let prefix = tmp.join("prefix");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        std::fs::create_dir_all(prefix.join("include")).unwrap();
        std::fs::write(prefix.join("include/mpi.h"), "").unwrap();
        assert_eq!(
            layout(&prefix.join("bin")),
            Layout {
                include: prefix.join("include"),
                lib: prefix.join("lib"),
                prefix: Some(prefix.clone()),
            }
        );
        let repo = tmp.join("repo");
        std::fs::create_dir_all(repo.join("target/debug")).unwrap();
        std::fs::create_dir_all(repo.join("include")).unwrap();
        std::fs::write(repo.join("include/mpi.h"), "").unwrap();
        assert_eq!(
            layout(&repo.join("target/debug")),
            Layout {
                include: repo.join("include"),
                lib: repo.join("target/debug"),
                prefix: None,
            }
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
