//! `hympiexec`: starts the ranks of an MPI job on this node and serves them PMI-1.
//!
//! Modules, one job each: [`args`] (command line), [`binding`] (hwloc CPU sets), [`launch`]
//! (starting one rank), [`server`] (PMI-1 protocol state), [`job`] (the event loop),
//! [`output`] (line relay), [`signals`] (self-pipe), [`status`] (exit statuses); for jobs on
//! several hosts, [`hosts`] (host lists), [`proxy`] (the per-host agent), [`wire`] and [`link`]
//! (the launcher-proxy connection).

mod args;
mod binding;
mod hosts;
mod job;
mod launch;
mod link;
mod output;
mod proxy;
mod server;
mod signals;
mod status;
mod wire;

use args::Command;

fn main() {
    let code = match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            println!("{}", args::USAGE);
            0
        }
        Ok(Command::Version) => {
            println!(
                "hympiexec (hympi {}): PMI-1 launcher",
                env!("CARGO_PKG_VERSION")
            );
            0
        }
        Ok(Command::Run(opts)) => job::run(&opts),
        Ok(Command::Proxy { host, front }) => proxy::run(host, &front),
        Err(e) => {
            eprintln!("hympiexec: {e}\nTry 'hympiexec --help' for more information.");
            2
        }
    };
    std::process::exit(code);
}
