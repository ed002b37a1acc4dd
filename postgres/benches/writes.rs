//! Fenced write time on PostgreSQL against unconditional writes of the same shape, the baseline,
//! with 1, 2 and 8 client threads, each thread with its own connection and its own resource.
//! Prints per write: the median over samples of a sample's elapsed time divided by its writes,
//! the ratio of the two medians, fenced / unconditional (the goal is at most 1.1), and the
//! middle half of the ratios of each fenced sample to the unconditional one beside it, to show
//! how much the machine's load moved the figure. Asserts nothing about time.
//!
//! Run with `cargo bench -p fencelab-postgres --bench writes`. It starts a throwaway server with
//! PostgreSQL's default durability (every commit waits for the disk): the store refuses a server
//! with `fsync=off`, so there is no faster configuration to measure. The fenced write also makes
//! its commit durable when the session's `synchronous_commit` is off, one statement more than
//! the baseline's.
//!
//! The samples alternate, fenced then unconditional then the other way round, so both see the
//! same machine: this project's machines are shared, and a figure measured minutes apart from
//! its baseline means little. Hand-timed rather than with divan, because divan runs each
//! bench's samples in one block and does not hand its figures back for a ratio. `cargo test
//! --benches` runs one small sample of each as a smoke test.

use fencelab_core::{FencedStore, Generation, OperationId, ResourceId, Tick, WriteRequest};
use fencelab_postgres::postgres::{Client, Config, NoTls, Statement};
use fencelab_postgres::testing::TestServer;
use fencelab_postgres::{Options, PgStore};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

fn is_bench_run() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test")
}

/// One client: a fenced store or a plain connection.
enum Writer {
    Fenced(PgStore),
    /// The connection, with its two statements prepared.
    Unconditional(Client, Statement, Statement),
}

/// The baseline: the same transaction without the fence, as a client that trusts its lease
/// would write it: no fencing rule, no expected revision, no look-up of the operation id, just
/// the value and the operation id recorded, in one READ COMMITTED transaction.
const UPSERT: &str = "
INSERT INTO fenced (resource, highest, acted, value, revision) VALUES ($1, $2, true, $3, 1)
ON CONFLICT (resource) DO UPDATE
    SET highest = excluded.highest, value = excluded.value, revision = fenced.revision + 1";
const RECORD: &str = "
INSERT INTO fenced_ops (resource, operation, generation, revision, recorded_at)
    VALUES ($1, $2, $3, 1, $3)";

impl Writer {
    fn write(&mut self, resource: &str, i: u64) {
        let op = format!("{resource}-{i}");
        let value = format!("value {i}");
        match self {
            Writer::Fenced(store) => {
                let request = WriteRequest::new(
                    ResourceId::new(resource).expect("valid"),
                    Generation::new(i).expect("positive"),
                    OperationId::new(op).expect("valid"),
                    None,
                    value,
                );
                assert!(store.write(&request, Tick(i)).expect("writes").is_applied());
            }
            Writer::Unconditional(client, upsert, record) => {
                let i = i as i64;
                let mut tx = client
                    .build_transaction()
                    .isolation_level(fencelab_postgres::IsolationLevel::ReadCommitted)
                    .start()
                    .expect("begins");
                tx.execute(&*upsert, &[&resource, &i, &value]).expect("writes");
                tx.execute(&*record, &[&resource, &op, &i]).expect("records");
                tx.commit().expect("commits");
            }
        }
    }
}

/// One sample: `threads` writers, connected beforehand, start together and each writes
/// `writes` times to a resource of its own. Returns the time per write.
fn sample(config: &Config, fenced: bool, threads: usize, writes: u64, label: &str) -> Duration {
    let start = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (config, start) = (config.clone(), start.clone());
            let resource = format!("{label}-t{t}");
            let mut writer = if fenced {
                Writer::Fenced(PgStore::connect(&config, Options::default()).expect("connects"))
            } else {
                let mut client = config.connect(NoTls).expect("connects");
                // Prepared once, as the store prepares its statements once per connection.
                let upsert = client.prepare(UPSERT).expect("prepares");
                let record = client.prepare(RECORD).expect("prepares");
                Writer::Unconditional(client, upsert, record)
            };
            thread::spawn(move || {
                start.wait();
                for i in 1..=writes {
                    writer.write(&resource, i);
                }
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    for handle in handles {
        handle.join().expect("writer thread");
    }
    began.elapsed() / (threads as u32 * writes as u32)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

fn run(name: &str, timed: bool) {
    let server = TestServer::start();
    let config = server.database();
    // Creates the tables that both kinds of writer use.
    drop(PgStore::connect(&config, Options::default()).expect("creates the tables"));
    let (samples, writes) = if timed { (21, 100) } else { (1, 5) };
    println!();
    println!("{name}: {samples} samples of each, {writes} writes per thread per sample");
    println!();
    println!(
        "| client threads | fenced, per write | unconditional, per write | fenced / unconditional \
         | middle half of the paired ratios |"
    );
    println!("|---|---|---|---|---|");
    for threads in [1, 2, 8] {
        let (mut fenced, mut plain, mut paired) = (Vec::new(), Vec::new(), Vec::new());
        for s in 0..samples {
            // Alternate which goes first, so neither always follows the other's checkpoint.
            let order = if s % 2 == 0 { [true, false] } else { [false, true] };
            let mut pair = [Duration::ZERO; 2];
            for is_fenced in order {
                let label = format!("{}-{threads}-{s}", if is_fenced { "f" } else { "u" });
                let time = sample(&config, is_fenced, threads, writes, &label);
                pair[usize::from(!is_fenced)] = time;
                if is_fenced {
                    fenced.push(time)
                } else {
                    plain.push(time)
                }
            }
            paired.push(pair[0].as_secs_f64() / pair[1].as_secs_f64());
        }
        let (fenced, plain) = (median(&mut fenced), median(&mut plain));
        paired.sort_by(f64::total_cmp);
        let quartile = |q: usize| paired[(paired.len() - 1) * q / 4];
        println!(
            "| {threads} | {} | {} | {:.2} | {:.2} to {:.2} |",
            micros(fenced),
            micros(plain),
            fenced.as_secs_f64() / plain.as_secs_f64(),
            quartile(1),
            quartile(3),
        );
    }
}

fn main() {
    let timed = is_bench_run();
    run("durable (PostgreSQL's defaults: fsync=on, synchronous_commit=on)", timed);
}
