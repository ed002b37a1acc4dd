// Where the visualizer's time goes: Chromium's CPU profiler (the DevTools protocol's Profiler
// domain) around steps and seeks, printed as the functions with the most self time. Not part of
// `node --test`; prints figures, asserts nothing.
//
//   node browser-tests/profile.mjs story|generated|history [events]
//
// `story` steps through the paused-worker story, `generated` through the generated benchmark
// scenario, `history` opens a generated history of `events` entries (100,000 by default; see
// long-history.mjs) and steps and seeks through it. Wasm functions have names only in a build
// whose name section survives: build with wasm-opt off (`data-wasm-opt="0"` on the rust link in a
// copy of index.html) to read them; otherwise they show as `wasm-function[N]`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, openPage } from './harness.mjs';
import { longHistory } from './long-history.mjs';
import { openHistoryTimed, stats, timeSteps } from './page-timing.mjs';

const what = process.argv[2] ?? 'generated';
const events = Number(process.argv[3] ?? 100_000);
const TOP = 30;

/** Self time per function of a CPU profile, in milliseconds, largest first. */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id).callFrame;
    const where = frame.url.startsWith('wasm://') ? 'wasm' : frame.url ? 'js' : '';
    const key = `${frame.functionName || '(anonymous)'}${where ? ` [${where}]` : ''}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...self].sort((a, b) => b[1] - a[1]);
}

/** Time spent inside functions whose names match each of `patterns` (callees included), in ms. */
function inclusive(profile, patterns) {
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = patterns.map(() => 0);
  profile.samples.forEach((id, i) => {
    const names = [];
    for (let at = id; at !== undefined; at = parent.get(at)) names.push(byId.get(at).callFrame.functionName);
    patterns.forEach((p, k) => {
      if (names.some((n) => p.test(n))) totals[k] += (profile.timeDeltas[i] ?? 0) / 1000;
    });
  });
  return patterns.map((p, k) => [p.source, totals[k]]);
}

/** The phases worth telling apart, by the functions that do them (`PHASES` adds patterns,
 * separated by commas). */
const PHASES = [
  ...(process.env.PHASES ?? '').split(',').filter(Boolean).map((p) => new RegExp(p)),
  /History::from_jsonl|JsonlParser/,
  /Checker::judge|Checker::feed/,
  /draw::diagram/,
  /Layout::new/,
  /viz::history::Opened::new/,
  /narrate|caption/,
  /Engine::seek|Engine>::seek/,
  /Run::frame|Frame::capture/,
  /FunctionProvider>::run|fencelab_web::components|fencelab_web::app/,
  /Reconcilable|dom_bundle/,
  /replaceState|write_fragment/,
  /scrollTop|scroll_top|clientHeight|client_height|offsetTop|offset_top/,
  /getBoundingClientRect/,
  /decode/,
];

const ms = (x) => `${x.toFixed(2)} ms`;

function printTop(title, profile) {
  const rows = selfTimes(profile);
  const sum = rows.reduce((a, [, v]) => a + v, 0);
  console.log(`\nself time, ${title} (${ms(sum)} sampled):`);
  for (const [name, v] of rows.slice(0, TOP)) {
    console.log(`${v.toFixed(1).padStart(9)} ms ${((100 * v) / sum).toFixed(1).padStart(5)}%  ${name.slice(0, 140)}`);
  }
  console.log(`inside (callees included):`);
  for (const [name, v] of inclusive(profile, PHASES)) {
    if (v > 0) console.log(`${v.toFixed(1).padStart(9)} ms ${((100 * v) / sum).toFixed(1).padStart(5)}%  ${name}`);
  }
}

const env = await launch(['/'], { width: 1440, height: 900 });
const dir = await mkdtemp(join(tmpdir(), 'fencelab-profile-'));
try {
  const { page, problems } = await openPage(env);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  if (what === 'generated') {
    await page.selectOption('#case', 'generated');
    await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('workers'));
  } else if (what === 'history') {
    const file = join(dir, 'long.jsonl');
    await writeFile(file, await longHistory(events));
    await cdp.send('Profiler.start');
    const open = await openHistoryTimed(page, file, 'long.jsonl');
    printTop('opening the history', (await cdp.send('Profiler.stop')).profile);
    console.log(`open: ${ms(open.total)} from choosing the file, reading it ${ms(open.read)}`);
  }
  const end = Number((await page.locator('[data-testid="position"] .mono').textContent()).split('/')[1]);
  // Warm up, then profile.
  await page.evaluate(timeSteps, { steps: 20, seeks: 10, end, baseline: 0 });
  await page.keyboard.press('Home');
  await cdp.send('Profiler.start');
  const steps = Math.min(Number(process.env.STEPS ?? 200), end);
  const t = await page.evaluate(timeSteps, {
    steps,
    seeks: what === 'story' ? 0 : Number(process.env.SEEKS ?? 100),
    end,
    align: !process.env.UNALIGNED,
  });
  const { profile } = await cdp.send('Profiler.stop');
  for (const [name, figures] of [
    ['step', t.step],
    ['seek', t.seek],
  ]) {
    if (!figures.total.length) continue;
    const [total, script, layout] = [figures.total, figures.script, figures.layout].map(stats);
    console.log(
      `${name}: median ${ms(total.median)} (script ${ms(script.median)}, style and layout ${ms(layout.median)}), worst ${ms(total.worst)}`,
    );
  }
  printTop(`${what}, ${steps} steps and the seeks`, profile);
  if (problems.length) console.error(problems.join('\n'));
  await page.close();
} finally {
  await env.close();
  await rm(dir, { recursive: true, force: true });
}
