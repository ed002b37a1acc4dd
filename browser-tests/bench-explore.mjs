// The explorer's browser benchmark: prints figures, asserts nothing about time. Not part of
// `node --test`.
//
//   trunk build --release --offline --features test-hooks --dist /tmp/fencelab-bench
//   FENCELAB_DIST=/tmp/fencelab-bench node browser-tests/bench-explore.mjs
//
// In headless Chromium it explores the contention scenario (the paused worker with 2, 3 and 4
// workers; the same scenario as `cargo bench -p fencelab-core --bench explore`) to the end with
// the core's explorer compiled to wasm, through the `explore_bench` hook (the `test-hooks`
// feature), each run in a fresh page so memory starts from the same point. Per worker count it prints unique states,
// transitions, states per second (median of RUNS), the growth of the wasm linear memory during
// the search (wasm memory only grows, so this is the search's peak) and the page's
// `performance.memory.usedJSHeapSize` after the search (the JS heap, which holds the wasm memory
// only as one buffer), then how the cost grows with each added worker.
import { launch, openPage } from './harness.mjs';

const RUNS = 3;
const WORKERS = [2, 3, 4];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const thousands = (n) => Math.round(n).toLocaleString('en-US');

const env = await launch();
const rows = [];
try {
  for (const workers of WORKERS) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      const { page, problems } = await openPage(env);
      const figures = await page.evaluate((n) => {
        const bindings = window.wasmBindings;
        const before = bindings.wasm_memory();
        const t0 = performance.now();
        const result = JSON.parse(bindings.explore_bench(n));
        const ms = performance.now() - t0;
        return { ...result, ms, grown: result.wasm_memory - before, jsHeap: performance.memory?.usedJSHeapSize ?? null };
      }, workers);
      if (problems.length) throw new Error(problems.join('\n'));
      runs.push(figures);
      await page.close();
    }
    const first = runs[0];
    const ms = median(runs.map((r) => r.ms));
    rows.push({
      workers,
      states: first.unique_states,
      transitions: first.transitions,
      safe: first.no_violation,
      ms,
      perSecond: (first.unique_states / ms) * 1000,
      grown: Math.max(...runs.map((r) => r.grown)),
      wasm: Math.max(...runs.map((r) => r.wasm_memory)),
      jsHeap: median(runs.map((r) => r.jsHeap ?? 0)),
    });
  }
} finally {
  await env.close();
}

console.log(`Explorer in headless Chromium (wasm, release build), contention scenario, median of ${RUNS} fresh pages:\n`);
console.log('| workers | unique states | transitions | time | states/s | wasm memory grown (total) | JS heap after |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.workers} | ${thousands(r.states)} | ${thousands(r.transitions)} | ${r.ms.toFixed(0)} ms | ${thousands(r.perSecond)} | ${mib(r.grown)} (${mib(r.wasm)}) | ${mib(r.jsHeap)} |`,
  );
  if (!r.safe) console.log(`  (!) ${r.workers} workers: the search did not end in "no violation"`);
}
console.log('\nGrowth per added worker:');
for (let i = 1; i < rows.length; i++) {
  const [a, b] = [rows[i - 1], rows[i]];
  console.log(
    `  ${a.workers} -> ${b.workers} workers: states x${(b.states / a.states).toFixed(1)}, time x${(b.ms / a.ms).toFixed(1)}`,
  );
}
