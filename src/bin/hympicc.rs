//! `hympicc`: compiles and links C programs against hympi.
//!
//! `hympicc <args>` runs `${HYMPI_CC:-cc} -I<include dir> <args> <lib dir>/libhympi.a -lhwloc
//! -lpthread -ldl -lm -lrt`; `-show`, `-compile_info` and `-link_info` print the command or its
//! halves. The logic, shared with `hympicxx`, is in [`wrapper`].

#[path = "wrapper/mod.rs"]
mod wrapper;

fn main() {
    wrapper::run("hympicc", "HYMPI_CC", "cc")
}
