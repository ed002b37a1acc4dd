// Bench: the course-notes page of eight players (course-page.mjs) on a slow link, throttled to
// 1.6 Mbit/s down with 150 ms latency, as a reader on a poor mobile connection gets it. Prints,
// for the page with stills and, as the baseline in the same run, the same page without them:
// when the page's own text is painted, when every player shows its story (its still's picture,
// or for the baseline its player's diagram), when the first player is interactive (its player
// has drawn the story and shows, or waits behind its still, which says it is ready: a click
// starts it at once), the layout shift until every player that started loading is interactive,
// and how often the module was fetched. Served with a static host's caching.
// Usage: node bench-stills.mjs [runs]    (after `trunk build --release --offline` and `cargo build`)
import { rm } from 'node:fs/promises';
import { launch } from './harness.mjs';
import { STORIES, writeCourse } from './course-page.mjs';

const RUNS = Number(process.argv[2] ?? 3);
const site = await writeCourse();
const env = await launch(['/notes/fencelab/'], { width: 1440, height: 900 }, { '/notes/': site }, { cache: 'max-age=600' });

// Recorded in the page: when each thing was first on screen, by the page's own clock.
const RECORDER = () => {
  window.bench = { shifts: 0, seen: {} };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (!e.hadRecentInput) window.bench.shifts += e.value;
  }).observe({ type: 'layout-shift', buffered: true });
  const mark = (name, ok) => {
    if (!(name in window.bench.seen) && ok()) window.bench.seen[name] = performance.now();
  };
  const look = () => {
    mark('text', () => document.querySelector('h1')?.checkVisibility());
    document.querySelectorAll('fencelab-player').forEach((p) => {
      mark(`still ${p.id}`, () => p.querySelector('figure svg[role=img]')?.getBoundingClientRect().height > 0);
      const frame = p.shadowRoot?.querySelector('iframe');
      const shown = () => frame?.className === '' || p.shadowRoot?.querySelector('.enter.ready');
      mark(`player ${p.id}`, () => shown() && frame.contentDocument?.querySelector('svg.swimlanes'));
    });
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
};

async function once(path) {
  const page = await env.context.newPage();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 0.75e6 / 8 });
  await page.addInitScript(RECORDER);
  const before = env.server.requests.length;
  await page.goto(`${env.server.origin}/notes/${path}`, { waitUntil: 'commit' });
  await page.waitForFunction(() => window.bench && 'player p0' in window.bench.seen, null, { timeout: 120_000 });
  // The players below it that started loading may still take their stills' places.
  await page.waitForFunction(() => [...document.querySelectorAll('fencelab-player')]
    .every((p) => !p.shadowRoot.querySelector('iframe').getAttribute('src') || `player ${p.id}` in window.bench.seen), null, { timeout: 120_000 });
  await page.waitForTimeout(500);
  const result = await page.evaluate(() => window.bench);
  const wasm = env.server.requests.slice(before).filter(([, p]) => p.endsWith('.wasm')).length;
  await page.close();
  // A fresh browser cache for the next run: the first visit is what is measured.
  await env.context.clearCookies();
  const cdp2 = await env.context.newCDPSession(await env.context.newPage());
  await cdp2.send('Network.clearBrowserCache');
  await cdp2.detach();
  return { ...result, wasm };
}

const ms = (t) => (t === undefined ? '   -  ' : `${Math.round(t)}`.padStart(6));
console.log('page        text  first-picture  all-on-screen  first-interactive  layout-shift  module-fetches');
for (let run = 1; run <= RUNS; run++) {
  for (const [name, path] of [['baseline', 'bare.html'], ['stills', 'index.html']]) {
    const r = await once(path);
    const onScreen = STORIES.map((_, i) => r.seen[`still p${i}`]).filter((t) => t !== undefined);
    const first = name === 'stills' ? r.seen['still p0'] : r.seen['player p0'];
    const visible = name === 'stills' ? Math.max(...onScreen) : undefined;
    console.log(`${name.padEnd(9)} ${ms(r.seen.text)}  ${ms(first)}         ${ms(visible)}         ${ms(r.seen['player p0'])}           ${r.shifts.toFixed(4)}        ${r.wasm}`);
  }
}
console.log('(milliseconds from navigation; "all-on-screen" is when the last of the eight stills was painted; "first-interactive"');
console.log(' is when the first player shows its story, or waits behind its still saying it is ready)');
await env.close();
await rm(site, { recursive: true, force: true });
