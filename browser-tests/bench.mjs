// The visualizer's benchmark: prints figures, asserts nothing about time. Not part of `node --test`.
//
//   trunk build --release --offline && node browser-tests/bench.mjs
//
// In headless Chromium it times steps through the paused-worker story, then loads the generated
// benchmark scenario (1,130 events) through the picker, then times, from the page itself: one step forward (a key press, through the reducer,
// the core's seek, Yew's diff and the DOM patch, to a finished style and layout pass), and seeks
// to random positions with the scrubber. It compares median and worst with the 16 ms frame budget
// and prints the gzip size of the release wasm, JS and CSS.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DIST, launch, openPage } from './harness.mjs';

const STEPS = 300;
const SEEKS = 200;
const BUDGET_MS = 16;

const stats = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95), worst: sorted[sorted.length - 1] };
};
const ms = (x) => `${x.toFixed(2)} ms`;
const verdict = (s) => (s.worst <= BUDGET_MS ? 'within' : s.median <= BUDGET_MS ? 'median within, worst over' : 'over');

// Runs inside the page, so no DevTools round trip is counted.
async function timeSteps({ steps, seeks, end }) {
  // A macrotask after the event: Yew renders in a microtask, so it has finished by then.
  const channel = new MessageChannel();
  const settle = () =>
    new Promise((resolve) => {
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(0);
    });
  const layout = () => document.body.getBoundingClientRect().height;
  const time = async (act) => {
    const t0 = performance.now();
    act();
    await settle();
    layout();
    return performance.now() - t0;
  };
  const baseline = [];
  for (let i = 0; i < 50; i++) baseline.push(await time(() => {}));
  const step = [];
  const key = () => document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
  for (let i = 0; i < steps; i++) step.push(await time(key));
  const scrubber = document.querySelector('#scrubber');
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const seek = [];
  for (let i = 0; i < seeks; i++) {
    const to = Math.floor(random() * (end + 1));
    seek.push(
      await time(() => {
        scrubber.value = String(to);
        scrubber.dispatchEvent(new Event('input', { bubbles: true }));
      }),
    );
  }
  return { baseline, step, seek };
}

const env = await launch(['/'], { width: 1440, height: 900 });
try {
  const { page, problems } = await openPage(env);
  // Warm up (the first steps after loading include compiling the wasm's hot paths), then time
  // three passes through the 20-step story.
  await page.evaluate(timeSteps, { steps: 20, seeks: 0, end: 20 });
  const small = { step: [] };
  for (let pass = 0; pass < 3; pass++) {
    await page.keyboard.press('Home');
    small.step.push(...(await page.evaluate(timeSteps, { steps: 20, seeks: 0, end: 20 })).step);
  }
  const loadStart = Date.now();
  await page.selectOption('#case', 'generated');
  await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('workers'), null, {
    timeout: 60_000,
  });
  const loadMs = Date.now() - loadStart;
  const end = Number((await page.locator('[data-testid="position"] .mono').textContent()).split('/')[1]);

  await page.evaluate(timeSteps, { steps: 30, seeks: 20, end });
  await page.keyboard.press('Home');
  const timings = await page.evaluate(timeSteps, { steps: STEPS, seeks: SEEKS, end });

  const base = stats(timings.baseline);
  const step = stats(timings.step);
  const seek = stats(timings.seek);
  const smallStep = stats(small.step);
  console.log(
    `paused-worker (20 events), render one step (60 steps): median ${ms(smallStep.median)}, worst ${ms(smallStep.worst)}; ${verdict(smallStep)} the ${BUDGET_MS} ms frame budget`,
  );
  console.log(`scenario: generated (20 workers, 5 resources, 6 rounds): ${end} events`);
  console.log(`load (play to the end, build the diagram, first render): ${loadMs} ms`);
  console.log(`empty measurement (harness overhead): median ${ms(base.median)}, worst ${ms(base.worst)}`);
  console.log(
    `render one step (${STEPS} steps): median ${ms(step.median)}, p95 ${ms(step.p95)}, worst ${ms(step.worst)}; ${verdict(step)} the ${BUDGET_MS} ms frame budget`,
  );
  console.log(
    `seek to a random step (${SEEKS} seeks): median ${ms(seek.median)}, p95 ${ms(seek.p95)}, worst ${ms(seek.worst)}; ${verdict(seek)} the ${BUDGET_MS} ms frame budget`,
  );

  // What the page downloads, as scripts/size.sh counts it (it also counts index.html).
  let total = 0;
  for (const file of (await readdir(DIST)).filter((f) => /\.(wasm|js|css)$/.test(f)).sort()) {
    const body = await readFile(join(DIST, file));
    const gz = gzipSync(body, { level: 9 }).length;
    total += gz;
    console.log(`${file.padEnd(44)} ${String(body.length).padStart(8)} bytes, ${String(gz).padStart(7)} gzipped`);
  }
  console.log(`wasm + JS + CSS, gzipped: ${total} bytes (${(total / 1024).toFixed(0)} KiB)`);
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exitCode = 1;
  }
  await page.close();
} finally {
  await env.close();
}
