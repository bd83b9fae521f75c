//! Runs the real `hympicc`: the command it builds, an install-prefix layout with a stand-in
//! library, and (when the real `libhympi.a` has been built) a link against it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HYMPICC: &str = env!("CARGO_BIN_EXE_hympicc");

fn hympicc(dir_exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(dir_exe);
    cmd.args(args).env_remove("HYMPI_CC");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run hympicc")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn have_cc() -> bool {
    Command::new("cc").arg("--version").output().is_ok()
}

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("hympicc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn show_and_info_in_the_checkout() {
    let exe = Path::new(HYMPICC);
    let dir = exe.parent().unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let out = hympicc(exe, &["-show", "-O2", "x.c", "-o", "x"], &[]);
    assert!(out.status.success());
    let want = format!(
        "cc -I{} -O2 x.c -o x {}/libhympi.a -lhwloc -lpthread -ldl -lm -lrt\n",
        include.display(),
        dir.display()
    );
    assert_eq!(text(&out.stdout), want);
    let out = hympicc(exe, &["-show", "-c", "x.c"], &[("HYMPI_CC", "clang")]);
    assert_eq!(
        text(&out.stdout),
        format!("clang -I{} -c x.c\n", include.display())
    );
    let out = hympicc(exe, &["-compile_info"], &[]);
    assert_eq!(text(&out.stdout), format!("cc -I{}\n", include.display()));
    let out = hympicc(exe, &["-link_info"], &[]);
    assert!(text(&out.stdout).ends_with("/libhympi.a -lhwloc -lpthread -ldl -lm -lrt\n"));
}

#[test]
fn compiler_status_is_passed_on() {
    let exe = Path::new(HYMPICC);
    let out = hympicc(exe, &["x.c"], &[("HYMPI_CC", "false")]);
    assert_eq!(out.status.code(), Some(1));
    let out = hympicc(exe, &["x.c"], &[("HYMPI_CC", "/nonexistent/cc")]);
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out.stderr).contains("cannot run"));
}

#[test]
fn install_prefix_layout_compiles_and_links() {
    if !have_cc() {
        eprintln!("skipped: no C compiler `cc`");
        return;
    }
    let s = Scratch::new("prefix");
    let prefix = s.0.join("prefix");
    for d in ["bin", "include", "lib"] {
        std::fs::create_dir_all(prefix.join(d)).unwrap();
    }
    let exe = prefix.join("bin/hympicc");
    std::fs::copy(HYMPICC, &exe).unwrap();
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/mpi.h");
    std::fs::copy(&header, prefix.join("include/mpi.h")).unwrap();
    // A stand-in libhympi.a with one function.
    std::fs::write(s.0.join("fake.c"), "int hympi_fake(void) { return 42; }\n").unwrap();
    let st = Command::new("cc")
        .args(["-c", "fake.c", "-o", "fake.o"])
        .current_dir(&s.0)
        .status()
        .unwrap();
    assert!(st.success());
    let st = Command::new("ar")
        .arg("rcs")
        .arg(prefix.join("lib/libhympi.a"))
        .arg("fake.o")
        .current_dir(&s.0)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(
        s.0.join("prog.c"),
        "#include <mpi.h>\nint hympi_fake(void);\nint main(void) { return hympi_fake(); }\n",
    )
    .unwrap();
    let out = Command::new(&exe)
        .args(["-O1", "prog.c", "-o", "prog"])
        .current_dir(&s.0)
        .env_remove("HYMPI_CC")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let show = hympicc(&exe, &["-show", "prog.c"], &[]);
    let prefix_s = prefix.display().to_string();
    assert!(
        text(&show.stdout).contains(&format!("-I{prefix_s}/include"))
            && text(&show.stdout).contains(&format!("{prefix_s}/lib/libhympi.a")),
        "{}",
        text(&show.stdout)
    );
    let st = Command::new(s.0.join("prog")).status().unwrap();
    assert_eq!(st.code(), Some(42));
    // -c compiles without the library.
    let out = Command::new(&exe)
        .args(["-c", "prog.c", "-o", "prog.o"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn links_against_the_real_library_when_built() {
    let lib = Path::new(HYMPICC).parent().unwrap().join("libhympi.a");
    if !lib.is_file() || !have_cc() {
        eprintln!(
            "skipped: {} not built (run `cargo build` first) or no `cc`",
            lib.display()
        );
        return;
    }
    let s = Scratch::new("real");
    std::fs::write(
        s.0.join("prog.c"),
        "#include <mpi.h>\nint main(int argc, char **argv) {\n  int flag = 0;\n  \
         if (argc > 5) MPI_Init(&argc, &argv);\n  return flag;\n}\n",
    )
    .unwrap();
    let out = Command::new(HYMPICC)
        .args(["prog.c", "-o", "prog"])
        .current_dir(&s.0)
        .env_remove("HYMPI_CC")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let st = Command::new(s.0.join("prog")).status().unwrap();
    assert_eq!(st.code(), Some(0));
}
