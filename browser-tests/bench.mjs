// The visualizer's benchmark: prints figures, asserts nothing about time. Not part of `node --test`.
//
//   trunk build --release --offline && node browser-tests/bench.mjs [events]
//
// In headless Chromium, from the page itself (see page-timing.mjs), it times one step forward (a
// key press, through the reducer, the core's seek, Yew's diff and the DOM patch, to a finished
// style and layout pass) and seeks to random positions with the scrubber, in three cases: the
// paused-worker story (20 events), the generated benchmark scenario (1,130 events, loaded
// through the picker) and a recorded history of `events` entries (100,000 by default; generated
// now by the command line, see long-history.mjs) opened with "Open a history", whose opening is
// timed too. Beside each case it prints the baseline, an empty action measured the same way, and
// the number of elements on the page, then the gzip size of the release wasm, JS and CSS.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DIST, launch, openPage } from './harness.mjs';
import { longHistory } from './long-history.mjs';
import { domNodes, openHistoryTimed, stats, timeSteps } from './page-timing.mjs';

const EVENTS = Number(process.argv[2] ?? 100_000);
const STEPS = 300;
const SEEKS = 200;

const ms = (x) => `${x.toFixed(2)} ms`;
const figure = (xs) => {
  const s = stats(xs);
  return `median ${ms(s.median)}, p95 ${ms(s.p95)}, worst ${ms(s.worst)}`;
};
const end = async (page) =>
  Number((await page.locator('[data-testid="position"] .mono').textContent()).split('/')[1].replaceAll(',', ''));

/** Times `steps` steps from the start and `seeks` seeks, after a warm-up of each. */
async function measure(page, steps, seeks) {
  const last = await end(page);
  await page.evaluate(timeSteps, { steps: Math.min(30, steps), seeks: Math.min(20, seeks), end: last, baseline: 0 });
  await page.keyboard.press('Home');
  return page.evaluate(timeSteps, { steps, seeks, end: last });
}

function report(name, t, extra = []) {
  console.log(`\n${name}`);
  if (t.unrendered) console.log(`  WARNING: ${t.unrendered} actions were timed before their render finished`);
  for (const line of extra) console.log(`  ${line}`);
  console.log(`  baseline (an empty action): ${figure(t.baseline.total)}`);
  console.log(`  one step (${t.step.total.length}): ${figure(t.step.total)}`);
  if (t.seek.total.length) console.log(`  random seek (${t.seek.total.length}): ${figure(t.seek.total)}`);
}

const env = await launch(['/'], { width: 1440, height: 900 });
const dir = await mkdtemp(join(tmpdir(), 'fencelab-bench-'));
try {
  const { page, problems } = await openPage(env);

  // The 20-step story: the first pass warms up the wasm's hot paths, then three passes are timed.
  await measure(page, 20, 0);
  const small = { baseline: { total: [] }, step: { total: [] }, seek: { total: [] } };
  for (let pass = 0; pass < 3; pass++) {
    await page.keyboard.press('Home');
    const t = await page.evaluate(timeSteps, { steps: 20, seeks: 0, end: 20, baseline: 20 });
    small.baseline.total.push(...t.baseline.total);
    small.step.total.push(...t.step.total);
    small.unrendered = (small.unrendered ?? 0) + t.unrendered;
  }
  report('paused-worker story (20 events)', small, [`elements on the page: ${await domNodes(page)}`]);

  const loadStart = Date.now();
  await page.selectOption('#case', 'generated');
  await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('workers'), null, {
    timeout: 60_000,
  });
  const loadMs = Date.now() - loadStart;
  const generated = await measure(page, STEPS, SEEKS);
  report(`generated scenario (${await end(page)} events)`, generated, [
    `load (play to the end, build the diagram, first render): ${loadMs} ms`,
    `elements on the page: ${await domNodes(page)}`,
  ]);

  // A recorded history, opened with the file chooser in a fresh page.
  const file = join(dir, 'long.jsonl');
  await writeFile(file, await longHistory(EVENTS));
  const fresh = await openPage(env);
  const open = await openHistoryTimed(fresh.page, file, 'long.jsonl');
  const shown = await end(fresh.page);
  const nodesAtOpen = await domNodes(fresh.page);
  const history = await measure(fresh.page, STEPS, SEEKS);
  report(`recorded history (${EVENTS} events, ${shown} shown)`, history, [
    `open: ${ms(open.afterRead)} after the file is read (${ms(open.total)} from choosing it, reading it ${ms(open.read)})`,
    `elements on the page: ${nodesAtOpen} at the start, ${await domNodes(fresh.page)} after the seeks`,
  ]);
  problems.push(...fresh.problems);

  // What the page downloads, as scripts/size.sh counts it (it also counts index.html).
  console.log('');
  let total = 0;
  for (const name of (await readdir(DIST)).filter((f) => /\.(wasm|js|css)$/.test(f)).sort()) {
    const body = await readFile(join(DIST, name));
    const gz = gzipSync(body, { level: 9 }).length;
    total += gz;
    console.log(`${name.padEnd(44)} ${String(body.length).padStart(8)} bytes, ${String(gz).padStart(7)} gzipped`);
  }
  console.log(`wasm + JS + CSS, gzipped: ${total} bytes (${(total / 1024).toFixed(0)} KiB)`);
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exitCode = 1;
  }
} finally {
  await env.close();
  await rm(dir, { recursive: true, force: true });
}
