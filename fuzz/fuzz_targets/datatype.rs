//! libFuzzer target over hympi's datatype constructors and pack/unpack: the driver shared with
//! the stable integration test `tests/datatype_fuzz.rs`.
#![no_main]

#[path = "../../tests/datatype_fuzz/driver.rs"]
mod driver;

libfuzzer_sys::fuzz_target!(|data: &[u8]| driver::run(data));
