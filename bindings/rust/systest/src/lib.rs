//! Checks the declarations of `kiln-sys` against `kiln.h` (run with `cargo test`).
//!
//! `build.rs` reads `kiln-sys/src/lib.rs` and writes a C file that includes
//! kiln.h and declares every function again with the C types the Rust
//! declaration stands for: a mismatching prototype fails to compile. The same C
//! file reports `sizeof`/`offsetof` of every struct and the value of every
//! constant, which the test below compares with what Rust computes. DLPack's
//! structs and constants (`kiln-sys/src/dlpack.rs`) are compared likewise with
//! the installed `dlpack.h`, completed to DLPack 1.0 when it is older.

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
        fn kiln_systest_dlpack_values(out_count: *mut usize) -> *const i64;
    }

    /// Names of the entries of `rust` whose value differs from C's.
    fn mismatches(c: &[i64], rust: &[(&str, i64)]) -> Vec<String> {
        assert_eq!(c.len(), rust.len());
        rust.iter().zip(c).filter(|((_, r), c)| *c != r).map(|((n, r), c)| format!("{n}: C {c} vs Rust {r}")).collect()
    }

    #[test]
    fn layouts_and_constants_match_header() {
        let mut n = 0usize;
        let c = unsafe { core::slice::from_raw_parts(kiln_systest_values(&mut n), n) };
        let bad = mismatches(c, &rust_values());
        assert!(bad.is_empty(), "mismatches:\n{}", bad.join("\n"));
    }

    #[test]
    fn dlpack_layouts_and_constants_match_dlpack_h() {
        let mut n = 0usize;
        let p = unsafe { kiln_systest_dlpack_values(&mut n) };
        if n == 0 {
            eprintln!("systest: SKIPPING the DLPack check: the C compiler finds no <dlpack/dlpack.h>");
            return;
        }
        let c = unsafe { core::slice::from_raw_parts(p, n) };
        let rust = rust_dlpack_values();
        assert!(rust.iter().any(|(name, _)| *name == "offsetof DLManagedTensorVersioned.dl_tensor"));
        let bad = mismatches(c, &rust);
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
