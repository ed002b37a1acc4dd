// Where the visualizer's time goes: a Chromium trace (the DevTools protocol's Tracing domain, with
// the CPU profiler's samples in it) around steps or seeks, counted only inside the actions (from
// the key press or the scrubber's move to a finished style and layout pass, as bench.mjs times
// them), or around opening a history. Not part of `node --test`; prints figures, asserts nothing.
//
//   node browser-tests/profile.mjs story|generated|history [steps|seeks|open]
//
// `story` is the paused-worker story, `generated` the generated benchmark scenario, `history` a
// generated history of 100,000 entries (long-history.mjs). It prints, per action, the main
// thread's time by kind (script, style, layout, paint) and the functions with the most self time,
// then the time inside the functions that match PHASES (callees included). CSS adds a style sheet
// to the page, to see what a change of style would save. Wasm functions have
// names only in a build whose name section survives: build a copy of index.html with
// `data-wasm-opt="0"` on the rust link to read them; otherwise they show as `wasm-function[N]`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, openPage } from './harness.mjs';
import { longHistory } from './long-history.mjs';
import { openHistoryTimed, stats, timeSteps } from './page-timing.mjs';

const what = process.argv[2] ?? 'generated';
const mode = process.argv[3] ?? 'steps';
const TOP = 25;
/** The phases worth telling apart, by the functions that do them; `PHASES` (comma-separated
 * regular expressions) adds more. */
const PHASES = [
  /History::from_jsonl|JsonlParser/,
  /Checker::judge|Checker::feed/,
  /draw::diagram/,
  /Track::new|Layout::new/,
  /Engine::seek|Frame::capture/,
  /FunctionProvider>::run|Stateful>::view|diagram_view|components::log::log/,
  /dom_bundle|Reconcilable/,
  /use_window|use_follow_step/,
  /replaceState|write_fragment/,
  ...(process.env.PHASES ?? '').split(',').filter(Boolean).map((p) => new RegExp(p)),
];
const CATEGORIES = ['devtools.timeline', 'toplevel', 'blink.user_timing', 'disabled-by-default-v8.cpu_profiler'];

/** The trace's events while `act` runs. */
async function trace(page, act) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', { categories: CATEGORIES.join(','), transferMode: 'ReportEvents' });
  const result = await act();
  await cdp.send('Tracing.end');
  await done;
  await cdp.detach();
  return { events, result };
}

/** The `[start, end]` times (the trace's clock) between each `from` and `to` mark. */
function windows(events, from, to) {
  const marks = events.filter((e) => e.cat?.includes('user_timing') && (e.name === from || e.name === to));
  marks.sort((a, b) => a.ts - b.ts);
  const found = [];
  for (let i = 0; i + 1 < marks.length; i++) {
    if (marks[i].name === from && marks[i + 1].name === to) found.push([marks[i].ts, marks[i + 1].ts]);
  }
  return found;
}

/** Prints what the renderer's main thread did inside `spans`, per span. */
function report(events, spans) {
  const inside = (t) => spans.some(([a, b]) => t >= a && t < b);
  // The renderer's main thread runs the page's scripts.
  const busy = new Map();
  for (const e of events) {
    if (e.name === 'FunctionCall') busy.set(`${e.pid}:${e.tid}`, (busy.get(`${e.pid}:${e.tid}`) ?? 0) + (e.dur ?? 0));
  }
  const main = [...busy].sort((a, b) => b[1] - a[1])[0]?.[0];
  const n = spans.length;
  const kinds = new Map();
  for (const e of events) {
    if (`${e.pid}:${e.tid}` !== main || e.ph !== 'X' || !inside(e.ts)) continue;
    kinds.set(e.name, (kinds.get(e.name) ?? 0) + (e.dur ?? 0) / 1000);
  }
  const per = (v) => `${(v / n).toFixed(2).padStart(8)} ms`;
  console.log(`\nthe main thread, per action (${n}); script (FunctionCall) includes the style and layout it forced:`);
  for (const name of ['FunctionCall', 'UpdateLayoutTree', 'Layout', 'Paint', 'MinorGC', 'MajorGC']) {
    if (kinds.has(name)) console.log(`${per(kinds.get(name))}  ${name}`);
  }
  // The CPU profiler's samples, on the same clock.
  const nodes = new Map();
  const samples = [];
  let time = 0;
  const chunks = events.filter((e) => e.name === 'Profile' || e.name === 'ProfileChunk').sort((a, b) => a.ts - b.ts);
  for (const e of chunks) {
    if (e.name === 'Profile') {
      time = e.args.data.startTime;
      continue;
    }
    const data = e.args.data;
    for (const node of data.cpuProfile?.nodes ?? []) nodes.set(node.id, node);
    (data.cpuProfile?.samples ?? []).forEach((id, i) => {
      time += data.timeDeltas?.[i] ?? 0;
      samples.push([time, id]);
    });
  }
  const self = new Map();
  const phases = PHASES.map(() => 0);
  let sampled = 0;
  for (let i = 0; i + 1 < samples.length; i++) {
    const [t, id] = samples[i];
    if (!inside(t)) continue;
    const dt = (samples[i + 1][0] - t) / 1000;
    sampled += dt;
    const frame = nodes.get(id)?.callFrame;
    const name = frame?.functionName || '(anonymous)';
    self.set(name, (self.get(name) ?? 0) + dt);
    const stack = [];
    for (let at = id; at !== undefined; at = nodes.get(at)?.parent) stack.push(nodes.get(at)?.callFrame?.functionName ?? '');
    PHASES.forEach((p, k) => {
      if (stack.some((f) => p.test(f))) phases[k] += dt;
    });
  }
  console.log(`\nself time per action (${(sampled / n).toFixed(2)} ms sampled):`);
  for (const [name, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`${per(v)}  ${name.replace(/::h[0-9a-f]{16}$/, '').slice(0, 130)}`);
  }
  console.log('\ninside (callees included), per action:');
  PHASES.forEach((p, k) => {
    if (phases[k] > 0) console.log(`${per(phases[k])}  ${p.source}`);
  });
}

const env = await launch(['/'], { width: 1440, height: 900 });
const dir = await mkdtemp(join(tmpdir(), 'fencelab-profile-'));
try {
  const { page, problems } = await openPage(env);
  // `CSS` adds a style sheet: what would a change of style save?
  if (process.env.CSS) await page.addStyleTag({ content: process.env.CSS });
  if (what === 'generated') {
    await page.selectOption('#case', 'generated');
    await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('workers'));
  } else if (what === 'history') {
    const file = join(dir, 'long.jsonl');
    await writeFile(file, await longHistory(100_000));
    if (mode === 'open') {
      await page.evaluate(() => {
        // The page's own listener clears the chooser; this one runs first and marks the start.
        addEventListener('change', () => performance.mark('open'), { capture: true, once: true });
      });
      const { events, result } = await trace(page, async () => {
        const open = await openHistoryTimed(page, file, 'long.jsonl');
        await page.evaluate(() => performance.mark('opened'));
        return open;
      });
      console.log(`open: ${result.total.toFixed(0)} ms from choosing the file (reading it ${result.read.toFixed(0)} ms)`);
      report(events, windows(events, 'open', 'opened'));
    } else {
      await openHistoryTimed(page, file, 'long.jsonl');
    }
  }
  if (mode !== 'open') {
    const end = Number((await page.locator('[data-testid="position"] .mono').textContent()).split('/')[1].replaceAll(',', ''));
    // Warm up, then trace.
    await page.evaluate(timeSteps, { steps: 20, seeks: 10, end, baseline: 0 });
    await page.keyboard.press('Home');
    const count = Math.min(mode === 'steps' ? 100 : 50, end);
    const options = mode === 'steps' ? { steps: count, seeks: 0 } : { steps: 0, seeks: count };
    const { events, result } = await trace(page, () => page.evaluate(timeSteps, { ...options, end, baseline: 0 }));
    const figures = stats(result[mode === 'steps' ? 'step' : 'seek'].total);
    console.log(`${what}, ${count} ${mode} (traced, so slower than bench.mjs): median ${figures.median.toFixed(2)} ms`);
    report(events, windows(events, 'action', 'action-done'));
  }
  if (problems.length) console.error(problems.join('\n'));
} finally {
  await env.close();
  await rm(dir, { recursive: true, force: true });
}
