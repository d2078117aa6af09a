//! Deadlines and cancellation stop a `while` loop that never ends, on every
//! backend, and leave the client, the executable and the buffers usable.

use std::time::{Duration, Instant};

use kiln::{Builder, Cancellation, Client, Code, ElementType, ExecuteOptions};

/// count_to, shared by the bindings' tests: counts i up from 0 while i != n,
/// and for n = -1 that is 2^64 iterations.
const COUNT_TO_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/count_to.hlo");

/// Far longer than any test takes, so that a stop it reports is the stop asked for.
const GENEROUS: Duration = Duration::from_secs(600);

/// Runs `test` on a client of each backend of the build, one after another. A
/// backend that cannot run on this machine (its client creation fails with
/// [`Code::Unavailable`], as cuda's does without the NVIDIA driver) is skipped,
/// saying why; any other failure to create a client panics, and so does a run
/// in which every backend was skipped.
fn for_each_backend(mut test: impl FnMut(&str, &Client)) {
    let backends = kiln::backends().unwrap();
    let mut tested = 0;
    for &backend in &backends {
        let client = match Client::with_backend(backend) {
            Ok(client) => client,
            Err(err) if err.code() == Code::Unavailable => {
                println!("skipping backend {backend}: {}", err.message());
                continue;
            }
            Err(err) => panic!("creating a client of backend {backend}: {err}"),
        };
        test(backend, &client);
        tested += 1;
    }
    assert!(tested > 0, "every backend was skipped ({backends:?}): nothing was tested");
}

fn count_to(client: &Client) -> kiln::Executable<'_> {
    let text = std::fs::read_to_string(COUNT_TO_PATH).unwrap();
    client.compile(&kiln::Computation::from_hlo_text(&text).unwrap()).unwrap()
}

/// Runs `exe` on `n` and returns the count.
fn run(client: &Client, exe: &kiln::Executable<'_>, n: i64) -> i64 {
    let n = client.buffer_from_slice(&[n], &[]).unwrap();
    let out = exe.execute_with(&[&n], &ExecuteOptions::default().with_timeout(GENEROUS)).unwrap();
    out[0].to_vec::<i64>().unwrap()[0]
}

/// -x, built with the builder: a second computation over the same buffers.
fn negate(client: &Client) -> kiln::Executable<'_> {
    let b = Builder::new("negate").unwrap();
    let x = b.parameter(0, ElementType::S64, &[], "x");
    client.compile(&b.build(b.neg(x)).unwrap()).unwrap()
}

#[test]
fn a_timeout_stops_an_endless_loop_and_everything_stays_usable() {
    for_each_backend(|backend, client| {
        let exe = count_to(client);
        let endless = client.buffer_from_slice(&[-1i64], &[]).unwrap();
        let start = Instant::now();
        let err = exe.execute_with(&[&endless], &ExecuteOptions::default().with_timeout(Duration::from_millis(50)));
        let elapsed = start.elapsed();
        let err = err.unwrap_err();
        assert_eq!(err.code(), Code::DeadlineExceeded, "{backend}: {err}");
        assert!(err.message().contains("while 'loop'"), "{backend}: {err}");
        assert!(elapsed >= Duration::from_millis(50), "{backend}: stopped after {elapsed:?}");
        assert!(elapsed < Duration::from_secs(30), "{backend}: stopped only after {elapsed:?}");

        // The argument is untouched; the executable, the client and the buffer
        // run normal computations.
        assert_eq!(endless.to_vec::<i64>().unwrap(), [-1]);
        assert_eq!(run(client, &exe, 7), 7);
        assert_eq!(negate(client).execute(&[&endless]).unwrap()[0].to_vec::<i64>().unwrap(), [1]);
    });
}

#[test]
fn cancel_from_another_thread_stops_an_endless_loop() {
    for_each_backend(|backend, client| {
        let exe = count_to(client);
        let endless = client.buffer_from_slice(&[-1i64], &[]).unwrap();
        let cancellation = Cancellation::new().unwrap();
        assert!(!cancellation.is_cancelled());
        let options = ExecuteOptions::default().with_cancellation(&cancellation).with_timeout(GENEROUS);
        let err = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                cancellation.cancel();
            });
            exe.execute_with(&[&endless], &options).unwrap_err()
        });
        assert_eq!(err.code(), Code::Cancelled, "{backend}: {err}");
        assert!(cancellation.is_cancelled());
        cancellation.cancel(); // again: nothing happens

        assert_eq!(endless.to_vec::<i64>().unwrap(), [-1]);
        assert_eq!(run(client, &exe, 7), 7);
        assert_eq!(negate(client).execute(&[&endless]).unwrap()[0].to_vec::<i64>().unwrap(), [1]);
    });
}

#[test]
fn an_already_cancelled_cancellation_fails_before_running() {
    let client = Client::new().unwrap();
    let exe = count_to(&client);
    let seven = client.buffer_from_slice(&[7i64], &[]).unwrap();
    let cancellation = Cancellation::new().unwrap();
    cancellation.cancel();
    // This run would end at once on its own: only a refusal to start explains CANCELLED.
    let err = exe.execute_with(&[&seven], &ExecuteOptions::default().with_cancellation(&cancellation)).unwrap_err();
    assert_eq!(err.code(), Code::Cancelled, "{err}");
    assert_eq!(run(&client, &exe, 7), 7);
}

#[test]
fn one_cancellation_stops_executions_on_several_threads() {
    let client = Client::new().unwrap();
    let exe = count_to(&client);
    let endless = client.buffer_from_slice(&[-1i64], &[]).unwrap();
    let cancellation = Cancellation::new().unwrap();
    let options = ExecuteOptions::default().with_cancellation(&cancellation).with_timeout(GENEROUS);
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..3).map(|_| s.spawn(|| exe.execute_with(&[&endless], &options).unwrap_err())).collect();
        std::thread::sleep(Duration::from_millis(50));
        cancellation.cancel();
        for run in runs {
            assert_eq!(run.join().unwrap().code(), Code::Cancelled);
        }
    });
}

#[test]
fn an_unused_cancellation_and_long_timeouts_change_nothing() {
    let client = Client::new().unwrap();
    let exe = count_to(&client);
    let n = client.buffer_from_slice(&[100i64], &[]).unwrap();
    let cancellation = Cancellation::new().unwrap();
    // Duration::MAX is beyond what timeout_ns holds: it is cut to i64::MAX ns, not refused.
    for timeout in [Duration::from_secs(3600), Duration::MAX] {
        let options =
            ExecuteOptions { rng_seed: 1, timeout: Some(timeout), cancellation: Some(&cancellation), device: None };
        assert_eq!(exe.execute_with(&[&n], &options).unwrap()[0].to_vec::<i64>().unwrap(), [100]);
    }
    assert!(!cancellation.is_cancelled());
}

#[test]
fn a_zero_timeout_is_an_invalid_argument() {
    let client = Client::new().unwrap();
    let exe = count_to(&client);
    let n = client.buffer_from_slice(&[1i64], &[]).unwrap();
    let err = exe.execute_with(&[&n], &ExecuteOptions::default().with_timeout(Duration::ZERO)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("timeout"), "{err}");
}
