//! Command-line parsing for `hympiexec`.

use std::ffi::OsString;

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
Usage: hympiexec [options] program [args...]
       hympiexec [options] [-n N] [-wdir DIR] program [args...] : [-n N] [-wdir DIR] program2 ...

Runs N copies (ranks) of program on this node, or on several hosts, and serves
them the PMI-1 protocol (PMI_FD, PMI_RANK, PMI_SIZE), so an MPI program built
with hympi (or MPICH) finds its peers.

Options:
  -n N, -np N            number of ranks (default 1)
  --bind-to core|l3cache|numa|socket|none
                         bind each rank to its domain of cores (core, the default),
                         or to the L3 caches, NUMA nodes or sockets its domain
                         touches; none binds nothing. Domains: the cores split
                         among the ranks in contiguous blocks (1 rank of 2 cores
                         gets both), unbound when oversubscribed (an explicit
                         core binding then puts one core per rank, round-robin).
                         Each bound rank gets OMP_NUM_THREADS (its cores),
                         OMP_PLACES (one place per core) and OMP_PROC_BIND=close
                         unless they are set.
  --cpus-per-rank M      domains of M cores (also --cpus-per-proc)
  --map-by ppr:N:node[:pe=M]
                         N ranks per (virtual) node, as -ppn N; pe=M as
                         --cpus-per-rank M
  --report-bindings      print the CPUs each rank is bound to
  --tag-output           prefix each line of output with [rank]
  --nodes K              split the ranks into K virtual nodes of this machine, in
                         blocks (ranks 0..N/K on the first): ranks of one node talk
                         through shared memory, ranks of different nodes only
                         through the network transport (libfabric, on 127.0.0.1)
  -ppn P, --ppn P        virtual nodes of P ranks each (the last may have fewer)
  --hosts H1[:S],H2[:S]  run on these hosts, S ranks per host in turn (default 1),
                         starting over when every slot is taken
  -f FILE, --hostfile FILE
                         hosts from FILE: one per line, name, name:S or
                         name slots=S; '#' starts a comment
  --launcher-exec CMD    how to start the proxy on a host (default: ssh {host});
                         {host} is replaced by the host's name, or the name is
                         appended, e.g. 'ip netns exec {host}'
  -wdir DIR              run the ranks in directory DIR (before a program: for it)
  A standalone ':' starts another program (MPMD): its ranks follow the previous
  ones in MPI_COMM_WORLD, with -n and -wdir of their own and MPI_APPNUM one more.
  -x VAR                 pass VAR with its current value
  -x VAR=value           set VAR for the ranks
  -h, --help             print this help
  -V, --version          print the version

The whole environment is passed to the ranks, plus HYMPI_LOCAL_RANK and
HYMPI_LOCAL_SIZE. If a rank dies before MPI_Finalize or calls MPI_Abort, the
other ranks are killed (SIGTERM, then SIGKILL after 0.5 s). SIGINT and SIGTERM
are forwarded to the ranks; a second one kills them.

On several hosts, a proxy (hympiexec itself, at the same path) runs each host's
ranks and connects back over TCP with a per-job token; a host whose proxy is
lost (exits, disconnects, or is silent for 4 s) ends the job. Rank 0's stdin is
/dev/null there.

Exit status: that of the first rank to fail (128+N for death by signal N), the
MPI_Abort code, or 0 when every rank exits 0.";

/// Where ranks are pinned (see `binding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindTo {
    /// The cores of the rank's domain.
    Core,
    /// The L3 caches the domain touches.
    L3Cache,
    /// The NUMA nodes the domain touches.
    Numa,
    /// The sockets (packages) the domain touches.
    Socket,
    /// No pinning.
    None,
}

impl BindTo {
    /// The `--bind-to` word.
    pub fn word(self) -> &'static str {
        match self {
            BindTo::Core => "core",
            BindTo::L3Cache => "l3cache",
            BindTo::Numa => "numa",
            BindTo::Socket => "socket",
            BindTo::None => "none",
        }
    }
}

/// One `-x` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvSpec {
    /// `-x VAR`: pass the launcher's current value.
    Pass(String),
    /// `-x VAR=value`: set the variable.
    Set(String, String),
}

/// What to run and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Number of ranks.
    pub np: usize,
    /// Binding asked for; `None` means the default policy.
    pub bind_to: Option<BindTo>,
    /// Cores per rank (`--cpus-per-rank`, `--map-by ...:pe=M`); `None`: the cores shared out.
    pub cpus_per_rank: Option<usize>,
    /// Print each rank's CPU set.
    pub report_bindings: bool,
    /// Prefix output lines with `[rank] `.
    pub tag_output: bool,
    /// `-x` options, in order.
    pub env: Vec<EnvSpec>,
    /// Virtual nodes: ranks per node (`--nodes`, `-ppn`); `None`: one node.
    pub nodes: Option<NodeSplit>,
    /// Hosts of a multi-host job (`--hosts`, `--hostfile`); `None`: this host only.
    pub hosts: Option<Vec<Host>>,
    /// The command that starts a proxy on a host (`--launcher-exec`).
    pub launcher_exec: Option<String>,
    /// The program to run (the first, when there are several).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Every program with its ranks, in rank order (one unless `:` separates several).
    pub apps: Vec<App>,
}

/// One program of a job and its ranks (MPMD: programs separated by `:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct App {
    /// Its ranks.
    pub np: usize,
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its working directory (`-wdir`); `None`: hympiexec's.
    pub wdir: Option<OsString>,
}

/// How ranks are split into virtual nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeSplit {
    /// `--nodes K`: K nodes.
    Nodes(usize),
    /// `-ppn P`: P ranks per node.
    PerNode(usize),
}

impl NodeSplit {
    /// Ranks per node for a job of `np` ranks (blocks; the last node may have fewer).
    pub fn per_node(self, np: usize) -> usize {
        match self {
            NodeSplit::Nodes(k) => np.div_ceil(k.min(np)),
            NodeSplit::PerNode(p) => p.min(np),
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Launch a job.
    Run(Options),
    /// Print the usage.
    Help,
    /// Print the version.
    Version,
    /// Serve as the proxy of host `host` for the launcher at `front` (internal).
    Proxy {
        /// The host's index in the launcher's list.
        host: usize,
        /// The launcher's addresses and port, `a1,a2:port`.
        front: String,
    },
}

/// Largest accepted `-n`: each rank takes three descriptors in the launcher.
pub const MAX_RANKS: usize = 4096;

use crate::hosts::{self, Host};

fn utf8(arg: OsString) -> Result<String, String> {
    arg.into_string()
        .map_err(|a| format!("argument {a:?} is not UTF-8"))
}

fn parse_np(v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if (1..=MAX_RANKS).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid number of ranks {v:?} (expected 1 to {MAX_RANKS})"
        )),
    }
}

fn parse_count(what: &str, v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if (1..=MAX_RANKS).contains(&n) => Ok(n),
        _ => Err(format!("invalid {what} {v:?} (expected 1 to {MAX_RANKS})")),
    }
}

/// Parses a `--bind-to` value.
pub fn parse_bind(v: &str) -> Result<BindTo, String> {
    match v {
        "core" | "cores" => Ok(BindTo::Core),
        "l3cache" | "l3" => Ok(BindTo::L3Cache),
        "numa" => Ok(BindTo::Numa),
        "socket" | "package" => Ok(BindTo::Socket),
        "none" => Ok(BindTo::None),
        _ => Err(format!(
            "invalid --bind-to value {v:?} (expected core, l3cache, numa, socket or none)"
        )),
    }
}

/// Parses a `--map-by` value: `ppr:N:node[:pe=M]` gives (N, M).
fn parse_map_by(v: &str) -> Result<(usize, Option<usize>), String> {
    let bad = || format!("invalid --map-by value {v:?} (expected ppr:N:node or ppr:N:node:pe=M)");
    let parts: Vec<&str> = v.split(':').collect();
    match parts.as_slice() {
        ["ppr", n, "node", rest @ ..] if rest.len() <= 1 => {
            let n = parse_count("ranks per node", n).map_err(|_| bad())?;
            let pe = match rest {
                [] => None,
                [pe] => Some(
                    pe.strip_prefix("pe=")
                        .ok_or_else(bad)
                        .and_then(|m| parse_count("pe", m).map_err(|_| bad()))?,
                ),
                _ => unreachable!("at most one modifier"),
            };
            Ok((n, pe))
        }
        _ => Err(bad()),
    }
}

fn parse_env(v: &str) -> Result<EnvSpec, String> {
    let (name, value) = match v.split_once('=') {
        Some((n, val)) => (n, Some(val)),
        None => (v, None),
    };
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!("invalid environment variable name {name:?} in -x"));
    }
    Ok(match value {
        Some(val) => EnvSpec::Set(name.to_string(), val.to_string()),
        None => EnvSpec::Pass(name.to_string()),
    })
}

/// Parses the arguments after the program name. Options stop at the first non-option (the
/// program) or at `--`; everything after belongs to the program.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut it = args.into_iter();
    let mut opts = Options {
        np: 1,
        bind_to: None,
        cpus_per_rank: None,
        report_bindings: false,
        tag_output: false,
        env: Vec::new(),
        nodes: None,
        hosts: None,
        launcher_exec: None,
        program: OsString::new(),
        args: Vec::new(),
        apps: Vec::new(),
    };
    let mut wdir: Option<OsString> = None;
    let program = loop {
        let Some(arg) = it.next() else {
            return Err("no program given".to_string());
        };
        let Some(s) = arg.to_str() else {
            break arg;
        };
        if !s.starts_with('-') || s == "-" {
            break arg;
        }
        // Accept `--opt=value` and `-opt=value` for options that take a value.
        let (name, inline) = match s.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (s, None),
        };
        let mut value = || match &inline {
            Some(v) => Ok(v.clone()),
            None => it
                .next()
                .ok_or_else(|| format!("option {name} needs a value"))
                .and_then(utf8),
        };
        let flag = |set: &mut bool| match inline {
            Some(_) => Err(format!("option {name} takes no value")),
            None => {
                *set = true;
                Ok(())
            }
        };
        match name {
            "--" => match it.next() {
                Some(p) => break p,
                None => return Err("no program given after --".to_string()),
            },
            "-h" | "--help" | "-help" => return Ok(Command::Help),
            "-V" | "--version" | "-version" => return Ok(Command::Version),
            "--proxy" => {
                let host = value()?
                    .parse()
                    .map_err(|_| "--proxy needs a host index".to_string())?;
                return match (it.next().as_ref().and_then(|a| a.to_str()), it.next()) {
                    (Some("--front"), Some(f)) => Ok(Command::Proxy {
                        host,
                        front: utf8(f)?,
                    }),
                    _ => Err("--proxy needs --front ADDRS:PORT".to_string()),
                };
            }
            "--hosts" | "-hosts" | "--host" | "-host" => {
                opts.hosts = Some(hosts::parse_list(&value()?)?)
            }
            "-f" | "--hostfile" | "-hostfile" | "--machinefile" | "-machinefile" => {
                let path = value()?;
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read host file {path}: {e}"))?;
                opts.hosts = Some(hosts::parse_file(&text, &path)?);
            }
            "--launcher-exec" | "-launcher-exec" => opts.launcher_exec = Some(value()?),
            "-n" | "-np" | "--np" | "--n" => opts.np = parse_np(&value()?)?,
            "--bind-to" | "-bind-to" => opts.bind_to = Some(parse_bind(&value()?)?),
            "--cpus-per-rank" | "-cpus-per-rank" | "--cpus-per-proc" | "-cpus-per-proc" => {
                opts.cpus_per_rank = Some(parse_count("--cpus-per-rank", &value()?)?)
            }
            "--map-by" | "-map-by" => {
                let (n, pe) = parse_map_by(&value()?)?;
                opts.nodes = Some(NodeSplit::PerNode(n));
                if pe.is_some() {
                    opts.cpus_per_rank = pe;
                }
            }
            "-x" => opts.env.push(parse_env(&value()?)?),
            "-wdir" | "--wdir" => wdir = Some(value()?.into()),
            "--nodes" | "-nodes" => {
                opts.nodes = Some(NodeSplit::Nodes(parse_count("--nodes", &value()?)?))
            }
            "-ppn" | "--ppn" => {
                opts.nodes = Some(NodeSplit::PerNode(parse_count("-ppn", &value()?)?))
            }
            "--report-bindings" | "-report-bindings" => flag(&mut opts.report_bindings)?,
            "--tag-output" | "-tag-output" | "-prepend-rank" | "--prepend-rank" => {
                flag(&mut opts.tag_output)?
            }
            _ => return Err(format!("unknown option {s}")),
        }
    };
    if let Some(hosts) = &opts.hosts {
        if opts.nodes.is_some() {
            return Err("--hosts/--hostfile and --nodes/-ppn cannot be combined".to_string());
        }
        for (i, h) in hosts.iter().enumerate() {
            if hosts[..i].iter().any(|o| o.name == h.name) {
                return Err(format!(
                    "host {} is listed twice (give it more slots instead: {}:N)",
                    h.name, h.name
                ));
            }
        }
    }
    if opts
        .launcher_exec
        .as_deref()
        .is_some_and(|l| l.trim().is_empty())
    {
        return Err("--launcher-exec needs a command".to_string());
    }
    let first = App {
        np: opts.np,
        program,
        args: Vec::new(),
        wdir: wdir.clone(),
    };
    opts.apps = more_apps(first, it, wdir)?;
    if opts.apps.len() > 1 && opts.hosts.is_some() {
        return Err("several programs (':') cannot be run on --hosts yet".to_string());
    }
    opts.np = opts.apps.iter().map(|a| a.np).sum();
    if opts.np > MAX_RANKS {
        return Err(format!("{} ranks in all (at most {MAX_RANKS})", opts.np));
    }
    opts.program = opts.apps[0].program.clone();
    opts.args = opts.apps[0].args.clone();
    Ok(Command::Run(opts))
}

/// The arguments of `first` and the programs after it: a standalone `:` ends a program's
/// arguments and starts the next program's options (`-n`, `-wdir`; by default 1 rank and
/// the global `-wdir`).
fn more_apps(
    mut app: App,
    mut it: impl Iterator<Item = OsString>,
    wdir: Option<OsString>,
) -> Result<Vec<App>, String> {
    let mut apps = Vec::new();
    loop {
        let mut more = false;
        for a in it.by_ref() {
            if a == ":" {
                more = true;
                break;
            }
            app.args.push(a);
        }
        apps.push(app);
        if !more {
            return Ok(apps);
        }
        app = App {
            np: 1,
            program: OsString::new(),
            args: Vec::new(),
            wdir: wdir.clone(),
        };
        loop {
            let Some(a) = it.next() else {
                return Err("no program given after ':'".to_string());
            };
            match a.to_str() {
                Some("-n" | "-np" | "--np" | "--n") => {
                    let v = it.next().ok_or("option -n needs a value")?;
                    app.np = parse_np(&utf8(v)?)?;
                }
                Some("-wdir" | "--wdir") => {
                    app.wdir = Some(it.next().ok_or("option -wdir needs a value")?);
                }
                Some(o) if o.starts_with('-') && o != "-" => {
                    return Err(format!(
                        "option {o} is not taken after ':' (only -n and -wdir)"
                    ));
                }
                _ => {
                    app.program = a;
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, String> {
        match parse(args.iter().map(OsString::from))? {
            Command::Run(o) => Ok(o),
            other => panic!("expected Run, got {other:?}"),
        }
    }

    #[test]
    fn virtual_nodes_split_in_blocks() {
        let o = run(&["-n", "5", "--nodes", "2", "p"]).unwrap();
        assert_eq!(o.nodes, Some(NodeSplit::Nodes(2)));
        assert_eq!(o.nodes.unwrap().per_node(5), 3);
        assert_eq!(NodeSplit::Nodes(9).per_node(4), 1, "more nodes than ranks");
        let o = run(&["-ppn", "2", "-n", "4", "p"]).unwrap();
        assert_eq!(o.nodes.unwrap().per_node(4), 2);
        assert_eq!(NodeSplit::PerNode(8).per_node(3), 3);
        assert!(run(&["--nodes", "0", "p"]).is_err());
        assert!(run(&["-ppn", "x", "p"]).is_err());
    }

    #[test]
    fn placement_options() {
        let o = run(&["--map-by", "ppr:2:node:pe=3", "-n", "4", "p"]).unwrap();
        assert_eq!(o.nodes, Some(NodeSplit::PerNode(2)));
        assert_eq!(o.cpus_per_rank, Some(3));
        let o = run(&["--map-by=ppr:1:node", "p"]).unwrap();
        assert_eq!(
            (o.nodes, o.cpus_per_rank),
            (Some(NodeSplit::PerNode(1)), None)
        );
        let o = run(&["--cpus-per-proc", "2", "--bind-to", "socket", "p"]).unwrap();
        assert_eq!(
            (o.bind_to, o.cpus_per_rank),
            (Some(BindTo::Socket), Some(2))
        );
        for w in ["core", "l3cache", "numa", "socket", "none"] {
            assert_eq!(parse_bind(w).unwrap().word(), w);
        }
    }

    #[test]
    fn basic_forms() {
        let o = run(&["-n", "4", "./a.out", "x", "-n", "7"]).unwrap();
        assert_eq!(o.np, 4);
        assert_eq!(o.program, "./a.out");
        assert_eq!(o.args, vec![OsString::from("x"), "-n".into(), "7".into()]);
        assert_eq!(run(&["-np", "3", "p"]).unwrap().np, 3);
        assert_eq!(run(&["-n=5", "p"]).unwrap().np, 5);
        assert_eq!(run(&["p"]).unwrap().np, 1);
        let o = run(&["--", "-weird-program", "-n"]).unwrap();
        assert_eq!(o.program, "-weird-program");
        assert_eq!(o.args, vec![OsString::from("-n")]);
    }

    #[test]
    fn options() {
        let o = run(&[
            "--tag-output",
            "--bind-to",
            "numa",
            "-x",
            "A",
            "-x",
            "B=1=2",
            "--report-bindings",
            "-n",
            "2",
            "prog",
        ])
        .unwrap();
        assert!(o.tag_output && o.report_bindings);
        assert_eq!(o.bind_to, Some(BindTo::Numa));
        assert_eq!(
            o.env,
            vec![
                EnvSpec::Pass("A".into()),
                EnvSpec::Set("B".into(), "1=2".into())
            ]
        );
        assert_eq!(
            run(&["--bind-to=none", "p"]).unwrap().bind_to,
            Some(BindTo::None)
        );
        assert_eq!(
            run(&["-bind-to", "core", "p"]).unwrap().bind_to,
            Some(BindTo::Core)
        );
        assert!(run(&["-prepend-rank", "p"]).unwrap().tag_output);
        assert_eq!(
            run(&["-x", "E=", "p"]).unwrap().env,
            vec![EnvSpec::Set("E".into(), "".into())]
        );
    }

    #[test]
    fn several_programs() {
        let o = run(&[
            "-n", "2", "a", "x", ":", "-n", "3", "-wdir", "/tmp", "b", ":", "c", "-n",
        ])
        .unwrap();
        assert_eq!(o.np, 6);
        assert_eq!((o.program.as_os_str(), o.args.len()), ("a".as_ref(), 1));
        let got: Vec<(usize, &str, usize, Option<&str>)> = o
            .apps
            .iter()
            .map(|a| {
                (
                    a.np,
                    a.program.to_str().unwrap(),
                    a.args.len(),
                    a.wdir.as_ref().and_then(|w| w.to_str()),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (2, "a", 1, None),
                (3, "b", 0, Some("/tmp")),
                (1, "c", 1, None)
            ]
        );
        let o = run(&["-wdir", "/w", "p"]).unwrap();
        assert_eq!(o.apps[0].wdir.as_deref(), Some("/w".as_ref()));
        for bad in [
            &["a", ":"][..],
            &["a", ":", "-n", "2"],
            &["a", ":", "--bind-to", "none", "b"],
            &["--hosts", "h1,h2", "a", ":", "b"],
        ] {
            assert!(run(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn help_and_version() {
        let p = |a: &[&str]| parse(a.iter().map(OsString::from)).unwrap();
        assert_eq!(p(&["--help"]), Command::Help);
        assert_eq!(p(&["-n", "2", "-h", "prog"]), Command::Help);
        assert_eq!(p(&["--version"]), Command::Version);
        // After the program, --help belongs to the program.
        assert!(matches!(p(&["prog", "--help"]), Command::Run(_)));
    }

    #[test]
    fn errors() {
        for bad in [
            &["-n"][..],
            &["-n", "0", "p"],
            &["-n", "x", "p"],
            &["-n", "-3", "p"],
            &["-n", "4097", "p"],
            &["--bind-to", "hwthread", "p"],
            &["--cpus-per-rank", "0", "p"],
            &["--map-by", "ppr:2:socket", "p"],
            &["--map-by", "ppr:x:node", "p"],
            &["--map-by", "ppr:2:node:pe=", "p"],
            &["--map-by", "ppr:2:node:cores=2", "p"],
            &["-x", "1A", "p"],
            &["-x", "A-B=1", "p"],
            &["-x", "=1", "p"],
            &["--frobnicate", "p"],
            &["--tag-output=yes", "p"],
            &[],
            &["-n", "2"],
            &["--"],
        ] {
            assert!(run(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
