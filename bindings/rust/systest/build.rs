//! Generates the C and Rust halves of the kiln-sys/kiln.h check (see src/lib.rs).

use std::env;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let sys_src = manifest.join("../kiln-sys/src/lib.rs");
    let dlpack_src = manifest.join("../kiln-sys/src/dlpack.rs");
    println!("cargo:rerun-if-changed={}", sys_src.display());
    println!("cargo:rerun-if-changed={}", dlpack_src.display());
    println!("cargo:rerun-if-env-changed=KILN_INCLUDE_DIR");
    // The header: KILN_INCLUDE_DIR, what kiln-sys learnt from pkg-config, or the
    // source tree this crate lives in.
    let include = env::var_os("KILN_INCLUDE_DIR")
        .or_else(|| env::var_os("DEP_KILN_INCLUDE_DIR"))
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../../capi/include"));
    let header = include.join("kiln/kiln.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let header_text = std::fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("cannot read {}: {e} (set KILN_INCLUDE_DIR)", header.display()));
    let rust = std::fs::read_to_string(&sys_src).unwrap();
    let dlpack_rust = std::fs::read_to_string(&dlpack_src).unwrap();

    let mut c = String::from("#include <kiln/kiln.h>\n#include <stddef.h>\n#include <stdint.h>\n\n");
    let mut rs = String::new();
    let mut values: Vec<(String, String, String)> = Vec::new(); // (name, C expr, Rust expr)
    let mut rust_names = Vec::new();

    // Functions: `pub fn name(args) -> ret;` on one line each (rustfmt may wrap;
    // join the extern block's lines first).
    let joined = join_decls(&rust);
    for decl in joined.iter().filter(|d| d.starts_with("pub fn ")) {
        let (name, args, ret) = parse_fn(decl);
        let c_args: Vec<String> = if args.is_empty() {
            vec!["void".into()]
        } else {
            args.iter().map(|(n, t)| format!("{} {}", c_type(t), n)).collect()
        };
        let c_ret = ret.as_deref().map(c_type).unwrap_or_else(|| "void".into());
        writeln!(c, "{c_ret} {name}({});", c_args.join(", ")).unwrap();
        rust_names.push(name);
    }
    // Constants, and sizes and offsets of the structs.
    let (kiln_values, kiln_names) = scan(&rust, "kiln_");
    values.extend(kiln_values);
    rust_names.extend(kiln_names);
    // The *_INIT macros against the Default impls.
    for (s, m, fields) in [
        ("kiln_client_options_t", "KILN_CLIENT_OPTIONS_INIT", &["struct_size", "num_devices"][..]),
        (
            "kiln_compile_options_t",
            "KILN_COMPILE_OPTIONS_INIT",
            &["struct_size", "optimization_level", "num_threads", "allow_unsafe_nan_math"][..],
        ),
        (
            "kiln_execute_options_t",
            "KILN_EXECUTE_OPTIONS_INIT",
            &["struct_size", "rng_seed", "timeout_ns", "num_donated_arguments"][..],
        ),
    ] {
        writeln!(c, "static const {s} init_{s} = {m};").unwrap();
        for f in fields {
            values.push((
                format!("{m}.{f}"),
                format!("(int64_t)init_{s}.{f}"),
                format!("<{s} as Default>::default().{f} as i64"),
            ));
        }
    }

    writeln!(c, "\nconst int64_t* kiln_systest_values(size_t* out_count) {{").unwrap();
    writeln!(c, "  static const int64_t v[] = {{").unwrap();
    for (_, ce, _) in &values {
        writeln!(c, "    {ce},").unwrap();
    }
    writeln!(c, "  }};\n  *out_count = sizeof(v) / sizeof(v[0]);\n  return v;\n}}").unwrap();

    // DLPack's structs and constants against the installed dlpack.h, when
    // there is one; what DLPack 1.0 added, when it predates 1.0, against a C
    // declaration of 1.0's layout (as kiln's tests declare it). The minor
    // version is what Kiln writes, not a header's.
    let (mut dlpack_values, _) = scan(&dlpack_rust, "DL");
    dlpack_values.retain(|(name, _, _)| name != "DLPACK_MINOR_VERSION");
    c.push_str(DLPACK_PROLOGUE);
    writeln!(c, "const int64_t* kiln_systest_dlpack_values(size_t* out_count) {{").unwrap();
    writeln!(c, "  static const int64_t v[] = {{").unwrap();
    for (_, ce, _) in &dlpack_values {
        writeln!(c, "    {ce},").unwrap();
    }
    writeln!(c, "  }};\n  *out_count = sizeof(v) / sizeof(v[0]);\n  return v;\n}}").unwrap();
    c.push_str("#else\nconst int64_t* kiln_systest_dlpack_values(size_t* out_count) {\n");
    c.push_str("  *out_count = 0;\n  return NULL;\n}\n#endif\n");

    for (f, list) in [("rust_values", &values), ("rust_dlpack_values", &dlpack_values)] {
        writeln!(rs, "fn {f}() -> Vec<(&'static str, i64)> {{\n    vec![").unwrap();
        for (n, _, re) in list {
            writeln!(rs, "        ({n:?}, {re}),").unwrap();
        }
        writeln!(rs, "    ]\n}}").unwrap();
    }
    writeln!(rs, "const RUST_NAMES: &[&str] = &{rust_names:?};").unwrap();
    writeln!(rs, "const HEADER_NAMES: &[&str] = &{:?};", header_names(&header_text)).unwrap();

    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("systest_generated.c"), c).unwrap();
    std::fs::write(out.join("systest_generated.rs"), rs).unwrap();
    cc::Build::new()
        .file(out.join("systest_generated.c"))
        .include(&include)
        .flag_if_supported("-std=c11")
        .flag_if_supported("-Werror=incompatible-pointer-types")
        .warnings_into_errors(true)
        .compile("kiln_systest");
}

type Value = (String, String, String); // (name, C expr, Rust expr)

/// The `pub const`s of a Rust source (value and name), and `sizeof`/`offsetof`
/// of each field of its `pub struct`s whose names start with `struct_prefix`.
fn scan(rust: &str, struct_prefix: &str) -> (Vec<Value>, Vec<String>) {
    let mut values = Vec::new();
    let mut names = Vec::new();
    for line in rust.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("pub const ") {
            let name = rest.split(':').next().unwrap().trim().to_string();
            if rest.contains(": &str") {
                // A string (the library's SONAME): the C side gives its
                // length, which a numeric table can hold.
                values.push((
                    format!("len {name}"),
                    format!("(int64_t)(sizeof({name}) - 1)"),
                    format!("{name}.len() as i64"),
                ));
            } else {
                values.push((name.clone(), format!("(int64_t)({name})"), format!("{name} as i64")));
            }
            names.push(name);
        }
    }
    let mut current: Option<String> = None;
    for line in rust.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("pub struct ") {
            let name = rest.trim_end_matches('{').trim().to_string();
            if rest.ends_with('{') && name.starts_with(struct_prefix) {
                values.push((
                    format!("sizeof {name}"),
                    format!("(int64_t)sizeof({name})"),
                    format!("core::mem::size_of::<{name}>() as i64"),
                ));
                current = Some(name);
            }
        } else if line == "}" {
            current = None;
        } else if let (Some(s), Some(field)) = (&current, line.strip_prefix("pub ")) {
            let f = field.split(':').next().unwrap().trim();
            // A C field named after a Rust keyword is a raw identifier here (r#type).
            let c = f.trim_start_matches("r#");
            values.push((
                format!("offsetof {s}.{c}"),
                format!("(int64_t)offsetof({s}, {c})"),
                format!("core::mem::offset_of!({s}, {f}) as i64"),
            ));
            values.push((
                format!("sizeof {s}.{c}"),
                format!("(int64_t)sizeof((({s}*)0)->{c})"),
                format!("field_size(|x: &{s}| &x.{f}) as i64"),
            ));
        }
    }
    (values, names)
}

/// The C side of the DLPack check: dlpack.h when the compiler finds one (the
/// table is then filled, else empty), completed to DLPack 1.0 when it is older.
const DLPACK_PROLOGUE: &str = r#"
#if defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#define KILN_SYSTEST_HAVE_DLPACK 1
#endif
#endif
#ifdef KILN_SYSTEST_HAVE_DLPACK
#ifndef DLPACK_MAJOR_VERSION
/* A pre-1.0 header (Debian's is 0.6): DLPack 1.0's additions, laid out as 1.0 does. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#if DLPACK_VERSION < 70
#define kDLOneAPI 14
#endif
#if DLPACK_VERSION < 80
#define kDLWebGPU 15
#define kDLHexagon 16
#define kDLBool 6
#endif
#endif
"#;

/// The extern block's declarations, each on one line.
fn join_decls(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut inside = false;
    for line in src.lines().map(str::trim) {
        if line.starts_with("extern \"C\"") {
            inside = true;
            continue;
        }
        if !inside || line.starts_with("//") {
            continue;
        }
        if line == "}" {
            inside = false;
            continue;
        }
        if !cur.is_empty() && !cur.ends_with('(') {
            cur.push(' ');
        }
        cur.push_str(line);
        if cur.ends_with(';') {
            out.push(cur.replace(", )", ")").replace(",)", ")"));
            cur.clear();
        }
    }
    out
}

type Arg = (String, String);

fn parse_fn(decl: &str) -> (String, Vec<Arg>, Option<String>) {
    let rest = decl.strip_prefix("pub fn ").unwrap().trim_end_matches(';');
    let open = rest.find('(').unwrap();
    let name = rest[..open].to_string();
    let close = rest.rfind(')').unwrap();
    let args = rest[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| {
            let (n, t) = a.split_once(':').unwrap();
            (n.trim().trim_end_matches('_').to_string(), t.trim().to_string())
        })
        .collect();
    let ret = rest[close + 1..].trim().strip_prefix("->").map(|r| r.trim().to_string());
    (name, args, ret)
}

/// The C spelling of a Rust FFI type.
fn c_type(t: &str) -> String {
    let t = t.trim();
    for (prefix, is_const) in [("*const ", true), ("*mut ", false)] {
        if let Some(inner) = t.strip_prefix(prefix) {
            let inner = inner.trim();
            return if inner.starts_with('*') {
                format!("{}{}", c_type(inner), if is_const { " const*" } else { "*" })
            } else {
                format!("{}{}*", if is_const { "const " } else { "" }, c_type(inner))
            };
        }
    }
    match t {
        "usize" => "size_t",
        "i64" => "int64_t",
        "i32" => "int32_t",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "c_int" => "int",
        "f32" => "float",
        "f64" => "double",
        "c_char" => "char",
        "c_void" => "void",
        other if other.starts_with("kiln_") => other,
        // DLPack's structs, as kiln.h names them.
        other if other.starts_with("DL") => return format!("struct {other}"),
        other => panic!("systest: no C spelling for Rust type `{other}`"),
    }
    .to_string()
}

/// Names of functions and enum/define constants in kiln.h.
fn header_names(h: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut push = |s: &str| {
        if !names.iter().any(|n: &String| n == s) {
            names.push(s.to_string());
        }
    };
    for line in h.lines().map(str::trim) {
        if line.starts_with("KILN_API ") {
            if let Some(open) = line.find('(') {
                let name = line[..open].rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap();
                push(name);
            }
        } else if let Some(rest) = line.strip_prefix("#define KILN_") {
            let name = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap();
            let skip = name == "KILN_H_" || name == "API" || name.ends_with("_INIT");
            if !skip {
                push(&format!("KILN_{name}"));
            }
        } else {
            // enum { KILN_X = 1, ... } possibly several per line.
            for part in line.split(['{', ',', '}']) {
                let part = part.trim();
                if let Some((name, _)) = part.split_once('=') {
                    let name = name.trim();
                    if name.starts_with("KILN_")
                        && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    {
                        push(name);
                    }
                }
            }
        }
    }
    names
}
