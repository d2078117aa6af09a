//! Finds libkiln.
//!
//! 1. `KILN_LIB_DIR`: a directory holding `libkiln.so` (e.g. a CMake build's
//!    `capi/` folder). The library is linked from there; symlinks to it are put in
//!    `OUT_DIR` so that `cargo run` and `cargo test` find it at run time. A binary
//!    started by hand needs `LD_LIBRARY_PATH` (or an installed libkiln).
//! 2. Otherwise pkg-config's `kiln` module (installed with the library).
//!
//! Metadata for dependents' build scripts: `DEP_KILN_LIB_DIR` and, when known,
//! `DEP_KILN_INCLUDE_DIR`.

use std::env;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=KILN_LIB_DIR");
    println!("cargo:rerun-if-env-changed=KILN_INCLUDE_DIR");

    if let Some(dir) = env::var_os("KILN_LIB_DIR") {
        let dir = PathBuf::from(dir);
        let dir =
            dir.canonicalize().unwrap_or_else(|e| panic!("KILN_LIB_DIR={} is not a directory: {e}", dir.display()));
        let lib = dir.join("libkiln.so");
        if !lib.exists() {
            panic!("KILN_LIB_DIR={}: no libkiln.so there", dir.display());
        }
        println!("cargo:rerun-if-changed={}", lib.display());
        link_from(&dir);
        if let Some(inc) = env::var_os("KILN_INCLUDE_DIR") {
            println!("cargo:include_dir={}", PathBuf::from(inc).display());
        }
        return;
    }

    match pkg_config::Config::new().atleast_version("0.2.0").cargo_metadata(false).probe("kiln") {
        Ok(lib) => {
            for dir in &lib.link_paths {
                println!("cargo:rustc-link-search=native={}", dir.display());
                println!("cargo:lib_dir={}", dir.display());
            }
            println!("cargo:rustc-link-lib=dylib=kiln");
            if let Some(inc) = env::var_os("KILN_INCLUDE_DIR") {
                println!("cargo:include_dir={}", PathBuf::from(inc).display());
            } else if let Some(inc) = lib.include_paths.first() {
                println!("cargo:include_dir={}", inc.display());
            }
        }
        Err(e) => panic!(
            "libkiln not found: set KILN_LIB_DIR to the directory holding libkiln.so \
             (e.g. <build>/capi), or install Kiln so that pkg-config finds kiln.pc.\n{e}"
        ),
    }
}

/// Links `dir/libkiln.so` through symlinks in OUT_DIR (cargo puts OUT_DIR search
/// paths on the library path of `cargo run` / `cargo test`).
fn link_from(dir: &Path) {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let local = out.join("lib");
    std::fs::create_dir_all(&local).expect("create OUT_DIR/lib");
    for entry in std::fs::read_dir(dir).expect("read KILN_LIB_DIR") {
        let entry = entry.expect("read KILN_LIB_DIR entry");
        let name = entry.file_name();
        if name.to_string_lossy().starts_with("libkiln.so") {
            let link = local.join(&name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(entry.path(), &link).expect("symlink libkiln");
        }
    }
    println!("cargo:rustc-link-search=native={}", local.display());
    println!("cargo:rustc-link-lib=dylib=kiln");
    println!("cargo:lib_dir={}", dir.display());
}
