//! Creating and destroying every kind of handle many times must not grow the
//! resident set. Alone in its own test binary so that nothing else runs beside it.

use kiln::{Builder, Client, ElementType};

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn tiny(name: &str) -> kiln::Computation {
    let b = Builder::new(name).unwrap();
    let x = b.parameter(0, ElementType::F32, &[4], "x");
    let y = b.max(x * x, b.constant_scalar(1.0f32));
    b.build(y).unwrap()
}

/// Runs `f` `warmup` times, then `n` times, and checks VmRSS grew by at most
/// `slack_kib` over the measured part.
fn no_growth(what: &str, warmup: usize, n: usize, slack_kib: u64, mut f: impl FnMut(usize)) {
    for i in 0..warmup {
        f(i);
    }
    let before = rss_kib();
    let t = std::time::Instant::now();
    for i in 0..n {
        f(i);
    }
    let after = rss_kib();
    eprintln!("{what}: {n} iterations in {:.1?}, VmRSS {before} -> {after} KiB", t.elapsed());
    assert!(after <= before + slack_kib, "{what}: VmRSS grew from {before} to {after} KiB over {n} iterations");
}

fn iterations(default: usize) -> usize {
    std::env::var("KILN_LEAK_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn handles_do_not_leak() {
    let data = [1.0f32, -2.0, 3.0, -4.0];
    let n = iterations(100_000);

    // Builders, ops, computations (and build errors), buffers and executions on a
    // long-lived client and executable.
    let client = Client::new().unwrap();
    let exe = client.compile(&tiny("tiny")).unwrap();
    no_growth("builder + buffer + execute", 2_000, n, 2048, |i| {
        let c = tiny("tiny");
        drop(c);
        let b = Builder::new("bad").unwrap();
        let bad = b.add(b.constant(&[1.0f32, 2.0], &[2]), b.constant(&[1.0f32, 2.0, 3.0], &[3]));
        assert!(b.build(bad).is_err());
        let x = client.buffer_from_slice(&data, &[4]).unwrap();
        let out = exe.execute(&[&x]).unwrap();
        if i % 1000 == 0 {
            assert_eq!(out[0].to_vec::<f32>().unwrap(), [1.0, 4.0, 9.0, 16.0]);
        }
    });

    // DLPack: exports (dropped, or re-imported and dropped with the buffer)
    // and a refused import, which deletes the tensor.
    let device = client.device(0).unwrap();
    no_growth("dlpack export + import", 2_000, n, 2048, |_| {
        let x = client.buffer_from_slice(&data, &[4]).unwrap();
        drop(x.to_dlpack().unwrap());
        let y = device.buffer_from_dlpack_tensor(x.to_dlpack_versioned().unwrap()).unwrap();
        drop(x);
        let t = y.to_dlpack_versioned().unwrap();
        unsafe { (*t.as_raw()).version.major = 2 };
        assert!(device.buffer_from_dlpack_tensor(t).is_err());
    });
    drop(exe);
    drop(client);

    // Full cycles: client, computation, compile, buffer, execute, all destroyed.
    let cycles = n;
    no_growth("client + compile cycle", 500, cycles, 2048, |_| {
        let client = Client::new().unwrap();
        let exe = client.compile(&tiny("cycle")).unwrap();
        let x = client.buffer_from_slice(&data, &[4]).unwrap();
        let out = exe.execute(&[&x]).unwrap();
        assert_eq!(out.len(), 1);
    });
}
