//! kiln::safetensors: round trips of many dtypes with metadata, a file written
//! to the format by hand, malformed files refused with the library's codes and
//! messages, unknown names, and what the format cannot hold.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use kiln::safetensors::{self, SafetensorsFile};
use kiln::{Buffer, Client, ClientOptions, Code, ElementType};

/// A fresh path in a per-process scratch directory.
fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("kiln-rust-safetensors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{}-{name}", N.fetch_add(1, Ordering::Relaxed)))
}

/// The format: an 8-byte little-endian header size, the JSON header, the data.
fn write_by_hand(name: &str, header: &str, data: &[u8], size_delta: i64) -> PathBuf {
    let path = scratch(name);
    let mut bytes = ((header.len() as i64 + size_delta) as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn bytes_of<T: Copy>(values: &[T]) -> Vec<u8> {
    // SAFETY: plain numbers viewed as bytes.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }.to_vec()
}

fn read<'c>(file: &SafetensorsFile, name: &str, client: &'c Client) -> Buffer<'c> {
    file.read(name, &client.device(0).unwrap()).unwrap()
}

#[test]
fn round_trip_of_several_dtypes_with_metadata() {
    let client = Client::with_backend("cpu").unwrap();
    let other = Client::with_backend("interpreter").unwrap(); // buffers of several clients
    let bf16_bits: [u16; 3] = [0x3f80, 0xc000, 0x7f80]; // 1, -2, inf
    let f16_bits: [u16; 2] = [0x3e00, 0xc080]; // 1.5, -2.25
    let c64: [f32; 4] = [1.0, 2.0, 0.0, -3.0];
    let tensors: Vec<(&str, Buffer)> = vec![
        ("layer.weight", client.buffer_from_slice(&[0.0f32, 0.25, 0.5, 0.75, 1.0, 1.25], &[2, 3]).unwrap()),
        ("mask", client.buffer_from_slice(&[true, false, false, true], &[4]).unwrap()),
        ("step", other.buffer_from_slice(&[-7i64], &[]).unwrap()),
        ("scale", client.buffer_from_bytes(ElementType::BF16, &[3], &bytes_of(&bf16_bits)).unwrap()),
        ("half", client.buffer_from_bytes(ElementType::F16, &[2, 1], &bytes_of(&f16_bits)).unwrap()),
        ("bytes", client.buffer_from_slice(&[0u8, 1, 255], &[3]).unwrap()),
        ("small", client.buffer_from_slice(&[-128i8, 127], &[2]).unwrap()),
        ("short", client.buffer_from_slice(&[-3i16], &[1]).unwrap()),
        ("big", client.buffer_from_slice(&[u64::MAX, 1], &[2]).unwrap()),
        ("wide", client.buffer_from_slice(&[1e300f64, -0.0], &[2]).unwrap()),
        ("unsigned", client.buffer_from_slice(&[u32::MAX], &[1, 1]).unwrap()),
        ("complex", client.buffer_from_bytes(ElementType::C64, &[2], &bytes_of(&c64)).unwrap()),
        ("empty", client.buffer_from_slice::<i32>(&[], &[0, 3]).unwrap()),
    ];
    let path = scratch("round_trip.safetensors");
    let refs: Vec<(&str, &Buffer)> = tensors.iter().map(|(n, b)| (*n, b)).collect();
    safetensors::save(&path, &refs, &[("format", "pt"), ("written_by", "kiln")]).unwrap();

    let file = SafetensorsFile::open(&path).unwrap();
    let names: Vec<&str> = tensors.iter().map(|(n, _)| *n).collect();
    assert_eq!(file.names(), names.as_slice(), "names follow the order given, which is the data's");
    assert_eq!(file.len(), tensors.len());
    assert!(file.contains("mask") && !file.contains("nope") && !file.is_empty());
    assert_eq!(file.path(), path.as_path());
    assert_eq!(file.metadata("format").unwrap(), Some("pt"));
    assert_eq!(file.metadata("written_by").unwrap(), Some("kiln"));
    for (name, original) in &tensors {
        let back = read(&file, name, &client);
        assert_eq!(back.shape().unwrap(), original.shape().unwrap(), "{name}");
        assert_eq!(back.to_bytes().unwrap(), original.to_bytes().unwrap(), "{name}");
    }
    let step = read(&file, "step", &client);
    assert_eq!(step.shape().unwrap(), kiln::Shape::new(ElementType::S64, &[]));
    assert_eq!(step.to_vec::<i64>().unwrap(), [-7]);
    assert_eq!(read(&file, "mask", &client).to_vec::<bool>().unwrap(), [true, false, false, true]);
    assert_eq!(read(&file, "scale", &client).to_bytes().unwrap(), bytes_of(&bf16_bits));
    assert_eq!(read(&file, "big", &client).to_vec::<u64>().unwrap(), [u64::MAX, 1]);

    let loaded = safetensors::load(&path, &client.device(0).unwrap()).unwrap();
    assert_eq!(loaded.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), names);
    assert_eq!(loaded[0].1.to_vec::<f32>().unwrap(), [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]);
}

#[test]
fn reads_a_file_written_by_hand() {
    let weight: [f32; 4] = [1.5, -2.0, 3.25, 0.0];
    let mut data = bytes_of(&weight);
    data.extend_from_slice(&123_456_789_012i64.to_le_bytes());
    data.extend_from_slice(&[1, 0, 7]); // any non-zero byte is true
                                        // Names in the header need not follow the order of the data.
    let header = r#"{"__metadata__":{"format":"pt","note":"by hand"},
        "flags":{"dtype":"BOOL","shape":[3],"data_offsets":[24,27]},
        "weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},
        "count":{"dtype":"I64","shape":[],"data_offsets":[16,24]}}   "#;
    let path = write_by_hand("by_hand.safetensors", header, &data, 0);
    let client = Client::new().unwrap();
    let file = SafetensorsFile::open(&path).unwrap();
    assert_eq!(file.names(), ["weight", "count", "flags"]);
    assert_eq!(file.metadata("note").unwrap(), Some("by hand"));
    let w = read(&file, "weight", &client);
    assert_eq!(w.dims().unwrap(), [2, 2]);
    assert_eq!(w.to_vec::<f32>().unwrap(), weight);
    let count = read(&file, "count", &client);
    assert_eq!(count.dims().unwrap(), Vec::<i64>::new());
    assert_eq!(count.to_vec::<i64>().unwrap(), [123_456_789_012]);
    assert_eq!(read(&file, "flags", &client).to_vec::<bool>().unwrap(), [true, false, true]);
}

#[test]
fn reads_onto_the_given_device_and_buffers_outlive_the_file() {
    let client = Client::with_options(&ClientOptions { backend: Some("cpu"), num_devices: 2 }).unwrap();
    let x = client.buffer_from_slice(&[0i32, 1, 2, 3], &[4]).unwrap();
    let path = scratch("device.safetensors");
    safetensors::save(&path, &[("x", &x)], &[]).unwrap();
    let second = client.device(1).unwrap();
    let back = {
        let file = SafetensorsFile::open(&path).unwrap();
        file.read("x", &second).unwrap()
    }; // the file is dropped here
    assert_eq!(back.device().unwrap(), second);
    assert_eq!(back.to_vec::<i32>().unwrap(), [0, 1, 2, 3]);
}

#[test]
fn a_column_major_buffer_is_written_row_major() {
    let client = Client::with_backend("cpu").unwrap();
    let m: [f32; 6] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let column_major = client.buffer_with_layout(ElementType::F32, &[2, 3], Some(&[0, 1]), &bytes_of(&m)).unwrap();
    assert_eq!(column_major.minor_to_major().unwrap(), [0, 1]);
    let path = scratch("layout.safetensors");
    safetensors::save(&path, &[("m", &column_major)], &[]).unwrap();
    let file = SafetensorsFile::open(&path).unwrap();
    assert_eq!(read(&file, "m", &client).to_vec::<f32>().unwrap(), m);
}

#[test]
fn no_tensors_and_metadata_only() {
    let path = scratch("none.safetensors");
    safetensors::save(&path, &[], &[("k", "v")]).unwrap();
    let file = SafetensorsFile::open(&path).unwrap();
    assert!(file.is_empty() && file.names().is_empty());
    assert_eq!(file.metadata("k").unwrap(), Some("v"));
    let client = Client::new().unwrap();
    assert!(safetensors::load(&path, &client.device(0).unwrap()).unwrap().is_empty());
}

#[test]
fn unknown_tensor_is_not_found_listing_the_names() {
    let client = Client::new().unwrap();
    let w = client.buffer_from_slice(&[0f32; 2], &[2]).unwrap();
    let b = client.buffer_from_slice(&[0f32; 1], &[1]).unwrap();
    let path = scratch("names.safetensors");
    safetensors::save(&path, &[("weight", &w), ("bias", &b)], &[]).unwrap();
    let file = SafetensorsFile::open(&path).unwrap();
    let e = file.read("nope", &client.device(0).unwrap()).unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e}");
    assert!(e.message().contains("no tensor named 'nope'"), "{e}");
    assert!(e.message().contains("weight, bias"), "{e}");
    assert!(e.message().contains(path.to_str().unwrap()), "{e}");
    // An inner NUL never reaches the library.
    assert_eq!(file.read("a\0b", &client.device(0).unwrap()).unwrap_err().code(), Code::InvalidArgument);
}

#[test]
fn missing_metadata_is_none_and_a_missing_file_not_found() {
    let path = write_by_hand("meta.safetensors", r#"{"__metadata__":{"a":"1"}}"#, &[], 0);
    let file = SafetensorsFile::open(&path).unwrap();
    assert_eq!(file.metadata("a").unwrap(), Some("1"));
    assert_eq!(file.metadata("b").unwrap(), None);
    assert_eq!(file.metadata("a\0").unwrap_err().code(), Code::InvalidArgument);

    let e = SafetensorsFile::open(scratch("missing.safetensors")).unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e}");
    assert!(e.message().contains("cannot open"), "{e}");
}

const F32_2: &str = r#"{"dtype":"F32","shape":[2],"data_offsets":[0,8]}"#;

fn assert_refused(name: &str, header: &str, data_bytes: usize, size_delta: i64, code: Code, needle: &str) {
    let path = write_by_hand(name, header, &vec![0u8; data_bytes], size_delta);
    let e = SafetensorsFile::open(&path).unwrap_err();
    assert_eq!(e.code(), code, "{name}: {e}");
    assert!(e.message().contains(needle), "{name}: {e} lacks {needle:?}");
    assert!(e.message().contains(path.to_str().unwrap()), "{name}: {e} does not name the file");
    let client = Client::new().unwrap();
    assert_eq!(safetensors::load(&path, &client.device(0).unwrap()).unwrap_err().code(), code);
}

#[test]
fn malformed_files_are_refused() {
    use Code::{DataLoss, InvalidArgument};
    assert_refused("bad_json", r#"{"a": nope}"#, 0, 0, InvalidArgument, "not valid JSON");
    assert_refused("not_object", "[1, 2]", 0, 0, InvalidArgument, "start with '{'");
    let overlap = format!(r#"{{"a":{F32_2},"b":{{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}}}"#);
    assert_refused("overlap", &overlap, 12, 0, InvalidArgument, "neither overlap nor leave holes");
    let hole = r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},
                  "b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}"#;
    assert_refused("hole", hole, 12, 0, InvalidArgument, "'b' starts at byte 8");
    let wrong_size = r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#;
    assert_refused("wrong_size", wrong_size, 8, 0, InvalidArgument, "its shape needs 12");
    let unknown = r#"{"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}"#;
    assert_refused("unknown_dtype", unknown, 1, 0, InvalidArgument, "F8_E4M3");
    assert_refused("metadata_not_string", r#"{"__metadata__":{"a":1}}"#, 0, 0, InvalidArgument, "is not a string");
    assert_refused("twice", r#"{"a":{},"a":{}}"#, 0, 0, InvalidArgument, "'a' twice");
    assert_refused("huge_header", "{}", 0, 1 << 40, InvalidArgument, "at most 104857600");
    // Truncated: the header runs past the end of the file, or the data stops short.
    assert_refused("truncated_header", &format!(r#"{{"a":{F32_2}}}"#), 0, 100, DataLoss, "header declares");
    let short = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
    assert_refused("truncated_data", short, 8, 0, InvalidArgument, "the file holds 8");

    let tiny = scratch("tiny.safetensors");
    std::fs::write(&tiny, b"abc").unwrap();
    let e = SafetensorsFile::open(&tiny).unwrap_err();
    assert_eq!(e.code(), DataLoss, "{e}");
    assert!(e.message().contains("8 bytes of header size"), "{e}");
}

#[test]
fn save_refuses_what_the_format_cannot_hold() {
    let client = Client::new().unwrap();
    let path = scratch("refused.safetensors");
    let c128 = client.buffer_from_bytes(ElementType::C128, &[1], &bytes_of(&[1.0f64, 2.0])).unwrap();
    let e = safetensors::save(&path, &[("z", &c128)], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e}");
    assert!(e.message().contains("no dtype for c128"), "{e}");
    let one = client.buffer_from_slice(&[0f32], &[1]).unwrap();
    let e = safetensors::save(&path, &[("a", &one), ("a", &one)], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("given twice"), "{e}");
    let e = safetensors::save(&path, &[("__metadata__", &one)], &[]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("__metadata__"), "{e}");
    let e = safetensors::save(Path::new("/nonexistent-dir/x.safetensors"), &[("a", &one)], &[]).unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e}");
    assert!(e.message().contains("cannot create"), "{e}");
    // Inner NULs never reach the library.
    assert_eq!(safetensors::save(&path, &[("a\0b", &one)], &[]).unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(safetensors::save(&path, &[], &[("k", "v\0")]).unwrap_err().code(), Code::InvalidArgument);
}
