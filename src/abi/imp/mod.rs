//! Implementations of the C functions, named exactly like them (`fn MPI_Send(...)`); build.rs
//! finds them here and wires the generated entry points to them.
