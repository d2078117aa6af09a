//! Checks the declarations of `kiln-sys` against `kiln.h` (run with `cargo test`).
//!
//! `build.rs` reads `kiln-sys/src/lib.rs` and writes a C file that includes
//! kiln.h and declares every function again with the C types the Rust
//! declaration stands for: a mismatching prototype fails to compile. The same C
//! file reports `sizeof`/`offsetof` of every struct and the value of every
//! constant, which the test below compares with what Rust computes.

#[cfg(test)]
mod tests {
    #![allow(clippy::all)]
    use kiln_sys::*;

    include!(concat!(env!("OUT_DIR"), "/systest_generated.rs"));

    /// Size of a struct field's type.
    fn field_size<S, F>(_: fn(&S) -> &F) -> usize {
        core::mem::size_of::<F>()
    }

    extern "C" {
        fn kiln_systest_values(out_count: *mut usize) -> *const i64;
    }

    #[test]
    fn layouts_and_constants_match_header() {
        let mut n = 0usize;
        let c = unsafe { core::slice::from_raw_parts(kiln_systest_values(&mut n), n) };
        let rust = rust_values();
        assert_eq!(c.len(), rust.len());
        let mut bad = Vec::new();
        for (i, (name, value)) in rust.iter().enumerate() {
            if c[i] != *value {
                bad.push(format!("{name}: C {} vs Rust {}", c[i], value));
            }
        }
        assert!(bad.is_empty(), "mismatches:\n{}", bad.join("\n"));
    }

    #[test]
    fn every_header_function_and_constant_is_declared() {
        let missing: Vec<_> = HEADER_NAMES.iter().filter(|n| !RUST_NAMES.contains(n)).collect();
        assert!(missing.is_empty(), "in kiln.h but not in kiln-sys: {missing:?}");
        let extra: Vec<_> = RUST_NAMES.iter().filter(|n| !HEADER_NAMES.contains(n)).collect();
        assert!(extra.is_empty(), "in kiln-sys but not in kiln.h: {extra:?}");
    }

    #[test]
    fn library_matches_header_version() {
        assert_eq!(unsafe { kiln_version_number() }, KILN_VERSION_NUMBER);
    }
}
