//! `hympicxx`: compiles and links C++ programs against hympi.
//!
//! `hympicxx <args>` runs `${HYMPI_CXX:-c++} -I<include dir> <args> <lib dir>/libhympi.a
//! -lhwloc -lpthread -ldl -lm -lrt`; `-show`, `-compile_info` and `-link_info` print the command
//! or its halves. The logic, shared with `hympicc`, is in [`wrapper`].

#[path = "wrapper/mod.rs"]
mod wrapper;

fn main() {
    wrapper::run("hympicxx", "HYMPI_CXX", "c++")
}
