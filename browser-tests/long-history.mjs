// A long recorded history for the benchmark and the windowing tests, generated when they run (a
// 100,000-event file is about 30 MB, too large to keep in the repository). It is a real run of
// the command line's simulator: 20 workers take turns on 5 resources of one store that checks no
// token, and one worker in ten now and then freezes in a GC pause between its two writes, so the
// history holds the stale writes the checker reports, as a system without fencing would record
// them. The run is cut to exactly `events` entries (a prefix of a history is a history). Tests of
// many lanes ask for more workers.
//
// The command line is `$FENCELAB_CLI` when set (a built `fencelab` binary), otherwise
// `cargo run -q -p fencelab-cli --` (a debug build plays 100,000 events in about 3 s here).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const WORKERS = 20;
const RESOURCES = 5;
/** Events per worker per round, measured on this scenario (a little over, so a run is long enough). */
const EVENTS_PER_ROUND = 9;
/** Every this many rounds, the pausing workers freeze between their two writes. */
const PAUSE_EVERY = 25;

/** The scenario, as `fencelab show` writes one, with `rounds` rounds for each of `workerCount` workers. */
export function longScenario(rounds, workerCount = WORKERS) {
  const names = Array.from({ length: RESOURCES }, (_, r) => `r${r}`);
  const workers = Array.from({ length: workerCount }, (_, w) => {
    const r = names[w % RESOURCES];
    const pauses = w % 10 === 3;
    const script = [];
    for (let round = 0; round < rounds; round++) {
      script.push(
        { acquire: { resource: r } },
        { read: { resource: r } },
        { write: { resource: r, value: `w${w} round ${round}` } },
      );
      if (pauses && round % PAUSE_EVERY === PAUSE_EVERY - 1) script.push({ pause: { ticks: 15, reason: 'gc_pause' } });
      else script.push({ compute: { ticks: 1 } });
      script.push({ write: { resource: r, value: `w${w} round ${round} done` } }, { release: { resource: r } });
    }
    return { name: `w${w}`, start: Math.floor(w / RESOURCES) * 3, clock_offset: 0, script };
  });
  return {
    name: 'long-history',
    variant: 'unfenced',
    title: `${workerCount} workers taking turns on ${RESOURCES} resources, with GC pauses`,
    intro: 'A long run of a store that checks no token; now and then a worker freezes mid-update.',
    resources: names,
    authority: { ttl: 10, token_source: 'durable_counter', authenticated: false },
    stores: [
      {
        name: 'db',
        enforcement: 'unfenced',
        policy: 'allow_same',
        retention: { max_entries: null, max_age: null },
        persist_highest: true,
        critical: true,
        check_write_gap: 1,
      },
    ],
    network: { latency: 1 },
    workers,
  };
}

/** The command that runs the command line, and its leading arguments. */
function cli() {
  if (process.env.FENCELAB_CLI) return [process.env.FENCELAB_CLI, []];
  return ['cargo', ['run', '-q', '-p', 'fencelab-cli', '--']];
}

/** A history of exactly `events` entries of `workers` workers, as JSON Lines text. */
export async function longHistory(events, workers = WORKERS) {
  const rounds = Math.ceil(events / (workers * EVENTS_PER_ROUND)) + 1;
  const dir = await mkdtemp(join(tmpdir(), 'fencelab-history-'));
  try {
    const file = join(dir, 'scenario.json');
    await writeFile(file, JSON.stringify(longScenario(rounds, workers)));
    const [command, args] = cli();
    const { stdout } = await promisify(execFile)(command, [...args, 'run', file, '--format', 'jsonl'], {
      cwd: root,
      maxBuffer: 1 << 30,
    }).catch((e) => {
      // A run that breaks an invariant exits 1 and still prints its history.
      if (e.code === 1 && e.stdout) return e;
      throw e;
    });
    const lines = stdout.split('\n');
    if (lines.length - 2 < events) throw new Error(`the run has ${lines.length - 2} events, fewer than ${events}`);
    return `${lines.slice(0, events + 1).join('\n')}\n`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
