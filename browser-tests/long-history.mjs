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
//
// Run directly, it writes one such history to a file:
//   node browser-tests/long-history.mjs --events 100000 --workers 20 --out long.jsonl
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';

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

const USAGE = `Usage: node browser-tests/long-history.mjs --events N [--workers W] --out FILE

Writes a recorded history of exactly N events (JSON Lines) to FILE: W workers (default ${WORKERS})
take turns on ${RESOURCES} resources of a store that checks no token, and one worker in ten now and
then freezes in a GC pause between its two writes. Open FILE on the page with "Open a history".
Runs the command line's simulator: $FENCELAB_CLI when set, else cargo run -p fencelab-cli.`;

/** A positive whole number given as option `name`, or an error that names it. */
function count(value, name) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1, not "${value}"`);
  return n;
}

/** The command line: parses `argv`, writes the history and says what it wrote. */
async function main(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      events: { type: 'string' },
      workers: { type: 'string', default: String(WORKERS) },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.events === undefined || values.out === undefined) throw new Error('--events and --out are required');
  const events = count(values.events, 'events');
  const workers = count(values.workers, 'workers');
  const text = await longHistory(events, workers);
  const out = resolve(values.out);
  await writeFile(out, text);
  console.log(`Wrote ${events.toLocaleString('en-US')} events of ${workers} workers to ${out} (${text.length.toLocaleString('en-US')} bytes).`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((e) => {
    console.error(`long-history: ${e.message}\n\n${USAGE}`);
    process.exitCode = 2;
  });
}
