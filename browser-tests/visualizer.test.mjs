// Browser tests of the visualizer in the built page (dist/): headless Debian Chromium driven by
// playwright-core. Every test fails on any console error, uncaught exception (a Rust panic aborts
// the wasm module and shows up as one) or failed request. Screenshots of the key states are saved
// under browser-tests/screenshots/ for a reviewer to look at.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, launch, openPage, shot, text } from './harness.mjs';

let env;

before(async () => {
  env = await launch(['/'], DESKTOP);
});

after(async () => {
  await env?.close();
});

/** The position shown by the transport bar, as [at, end]. */
async function position(page) {
  const shown = await text(page, '[data-testid="position"] .mono');
  const [at, end] = shown.split('/').map(Number);
  return [at, end];
}

const caption = (page) => text(page, '#caption');

/** Presses the step-forward button until `done(captionText)` holds; returns the position. */
async function stepUntil(page, done, limit = 200) {
  for (let i = 0; i < limit; i++) {
    if (done(await caption(page))) return position(page);
    await page.click('#step-forward');
  }
  throw new Error(`never reached the step; caption: ${await caption(page)}`);
}

async function pick(page, name) {
  await page.selectOption('#case', name);
  await page.waitForFunction(
    () => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('0/'),
    null,
    { timeout: 10_000 },
  );
}

/** Takes the same screenshot at phone and desktop width, light and (desktop only) dark. */
async function shots(page, name, { dark = false, fullPage = true, phoneAt = null, desktopAt = null } = {}) {
  if (desktopAt) await page.locator(desktopAt).first().evaluate((e) => e.scrollIntoView({ block: 'center' }));
  await shot(page, `${name}-desktop`, { fullPage: desktopAt ? false : fullPage });
  if (dark) {
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, `${name}-desktop-dark`, { fullPage: false });
    await page.emulateMedia({ colorScheme: 'light' });
  }
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  if (phoneAt) {
    // Step back and forth so the diagram scrolls the current step's lanes into view at this width.
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowRight');
    await page.locator(phoneAt).first().evaluate((e) => e.scrollIntoView({ block: 'start' }));
  }
  await shot(page, `${name}-phone`, { fullPage: phoneAt ? false : fullPage });
  if (phoneAt && dark) {
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, `${name}-phone-dark`, { fullPage: false });
    await page.emulateMedia({ colorScheme: 'light' });
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.setViewportSize(DESKTOP);
  await page.waitForTimeout(150);
}

test('the paused worker: step to the stale write, see it rejected with its reason, step back and forth', async () => {
  const { page, problems } = await openPage(env);
  assert.equal(await page.title(), 'Fencelab · fencing tokens, step by step');
  // Pick another story first, then the paused worker, through the picker.
  await pick(page, 'payment-capture');
  assert.match(await text(page, '#story-title'), /payment/i);
  await pick(page, 'paused-worker');
  assert.match(await text(page, '#story-title'), /paused worker/i);
  assert.match(await text(page, '.intro'), /GC pause/);
  const [, end] = await position(page);
  assert.equal(end, 20);
  await shots(page, 'picker', { dark: true, fullPage: false });

  // A freezes; B gets generation 2 while A still believes in generation 1.
  await stepUntil(page, (c) => /B receives generation 2/.test(c));
  const laneA = page.locator('.lane-head[data-lane="worker:A"]');
  assert.match(await laneA.getAttribute('class'), /\bfrozen\b/);
  assert.match(await laneA.textContent(), /believes g1/);
  assert.match(await laneA.textContent(), /authority: g2 → B/);
  assert.match(await text(page, '[data-worker="A"]'), /authority says g2 → B/);
  assert.equal(await page.locator('.span.pause:visible').count(), 1);
  await shots(page, 'paused-worker', { dark: true, fullPage: false, phoneAt: '.player' });

  // Step to the stale write. Before it arrives, remember the store's value.
  await stepUntil(page, (c) => /A sends the write "A: total=90/.test(c));
  const valueBefore = await text(page, '[data-testid="store-value"]');
  assert.equal(valueBefore, 'B: total=120');
  // The write is in flight, carrying its generation.
  const inFlight = page.locator('.arrow.write[data-state="in-flight"]');
  assert.equal(await inFlight.count(), 1);
  assert.equal((await inFlight.locator('.token').textContent()).trim(), 'g1');

  const [at] = await stepUntil(page, (c) => /rejects/.test(c));
  assert.equal(at, 19);
  assert.match(await caption(page), /stale owner: generation 1 < highest accepted 2/);
  assert.equal(await page.locator('#caption').getAttribute('data-kind'), 'rejected');
  const rejected = page.locator('.mark.rejected:visible');
  assert.equal(await rejected.count(), 1);
  assert.ok(await rejected.isVisible());
  assert.equal((await rejected.locator('.mark-label').textContent()).trim(), 'stale: 1 < 2');
  assert.equal(await text(page, '[data-testid="store-value"]'), valueBefore);
  assert.equal(await text(page, '[data-testid="highest"]'), '2');
  assert.match(await text(page, '[data-testid="rejections-panel"]'), /stale generation\s*1/);
  assert.match(await text(page, '[data-testid="violations-panel"]'), /all hold so far/);
  await shots(page, 'rejected-write', { dark: true, fullPage: true });
  await shots(page, 'rejected-write-player', { phoneAt: '.player' });

  // Step back: the caption and the diagram go back; step forward: they come back.
  const atRejection = await caption(page);
  await page.click('#step-back');
  const previous = await caption(page);
  assert.notEqual(previous, atRejection);
  assert.match(previous, /A has finished its script/);
  assert.equal(await page.locator('.mark.rejected:visible').count(), 0);
  assert.deepEqual(await position(page), [18, 20]);
  await page.click('#step-forward');
  assert.equal(await caption(page), atRejection);
  assert.equal(await page.locator('.mark.rejected:visible').count(), 1);

  // Clicking an event in the log seeks to it.
  await page.click('.log .entry[data-step="9"] button');
  assert.deepEqual(await position(page), [10, 20]);
  assert.match(await caption(page), /grants B the lease on totals with generation 2/);
  assert.equal(await page.locator('.log').getAttribute('data-current'), '9');

  // The scrubber seeks too.
  await page.locator('#scrubber').fill('4');
  assert.deepEqual(await position(page), [4, 20]);

  assert.deepEqual(problems, []);
  await page.close();
});

test('autoplay reaches the end; keys step, jump and play', async () => {
  const { page, problems } = await openPage(env);
  await pick(page, 'paused-worker');
  await page.selectOption('#speed', '3');
  await page.click('#play');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'true');
  await page.waitForFunction(
    () =>
      document.querySelector('[data-testid="position"] .mono')?.textContent === '20/20' &&
      document.querySelector('#play')?.getAttribute('aria-pressed') === 'false',
    null,
    { timeout: 15_000 },
  );
  assert.match(await caption(page), /B's lease on totals \(generation 2\) expires/);

  // Keys work with the focus anywhere but a text field.
  await page.locator('#story-title').click();
  await page.keyboard.press('Home');
  assert.deepEqual(await position(page), [0, 20]);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await position(page), [2, 20]);
  assert.match(await caption(page), /A receives generation 1/);
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual(await position(page), [1, 20]);
  assert.match(await caption(page), /grants A the lease/);
  await page.keyboard.press('End');
  assert.deepEqual(await position(page), [20, 20]);
  await page.keyboard.press('Home');
  // The page handles these keys instead of scrolling (Space and End would scroll it).
  const scrolled = await page.evaluate(() => window.scrollY);
  await page.keyboard.press('Space');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'true');
  await page.keyboard.press('Space');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'false');
  await page.keyboard.press('End');
  assert.equal(await page.evaluate(() => window.scrollY), scrolled);

  assert.deepEqual(problems, []);
  await page.close();
});

test('compare mode: the unfenced side ends corrupted, the fenced side correct', async () => {
  const { page, problems } = await openPage(env);
  await pick(page, 'paused-worker');
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor();
  assert.equal(await page.inputValue('#cmp-left-mode'), '0');
  assert.equal(await page.inputValue('#cmp-right-mode'), '2');
  assert.equal(await text(page, '[data-testid="final-left"] .value'), 'A: total=90 (from stale inputs)');
  assert.equal(await text(page, '[data-testid="final-right"] .value'), 'B: total=120');
  assert.match(await text(page, '[data-testid="verdict-left"]'), /stale write accepted/);
  assert.match(await text(page, '[data-testid="verdict-right"]'), /no invariant broken/);

  // Lockstep by time: at the end, the unfenced store applied the stale write, the fenced one refused it.
  await page.click('#to-end');
  const [at, end] = await position(page);
  assert.equal(at, end);
  assert.equal(await page.locator('[data-testid="compare-left"] .mark.rejected').count(), 0);
  assert.ok((await page.locator('[data-testid="compare-left"] .mark.violation').count()) >= 1);
  assert.equal(await page.locator('[data-testid="compare-right"] .mark.rejected').count(), 1);
  assert.equal(await page.locator('[data-testid="compare-right"] .mark.violation').count(), 0);
  await page.click('#step-back');
  assert.match(await text(page, '#cmp-left-caption'), /applies A's write "A: total=90/);
  assert.match(await text(page, '#cmp-right-caption'), /rejects A's write/);
  await shots(page, 'compare', { dark: true, fullPage: true });

  // Switching one side's enforcement replays it.
  await page.selectOption('#cmp-left-mode', '1');
  assert.match(await text(page, '.final-table thead'), /check-then-write/);
  assert.ok((await text(page, '[data-testid="final-left"] .value')).length > 0);

  // The policy switch replays with the same schedule.
  await page.click('#compare-toggle');
  await page.selectOption('#policy', 'strictly_newer');
  await page.click('#to-end');
  assert.deepEqual(await position(page), [20, 20]);

  assert.deepEqual(problems, []);
  await page.close();
});

test('the editor: an invalid edit shows the field error and the page keeps working; a valid edit replays', async () => {
  const { page, problems } = await openPage(env);
  await pick(page, 'paused-worker');
  await page.click('#editor-toggle');
  const area = page.locator('#scenario-json');
  await area.waitFor();
  const json = await area.inputValue();
  const scenario = JSON.parse(json);
  assert.equal(scenario.name, 'paused-worker');

  // An unknown resource in worker A's first step.
  const broken = json.replace('"resource": "totals"', '"resource": "ledgr"');
  assert.notEqual(broken, json);
  await area.fill(broken);
  await page.locator('[data-testid="editor-error"]').waitFor();
  assert.match(await text(page, '[data-testid="error-path"]'), /^workers\[0\]\.script\[0\]/);
  assert.match(await text(page, '[data-testid="editor-error"]'), /ledgr/);
  assert.equal(await area.getAttribute('aria-invalid'), 'true');
  // The last valid scenario stays on screen and still plays.
  await page.click('#step-forward');
  assert.deepEqual(await position(page), [1, 20]);
  assert.match(await caption(page), /grants A the lease on totals/);
  await shots(page, 'editor-error', { desktopAt: '.editor', phoneAt: '.editor' });

  // Malformed JSON is an error too, not a crash.
  await area.fill('{ "name": ');
  await page.locator('[data-testid="editor-error"]').waitFor();

  // A valid edit replays at once.
  await area.fill(json.replace('B: total=120', 'B: total=121'));
  await page.locator('[data-testid="editor-ok"]').waitFor();
  assert.match(await text(page, '#story-title'), /edited/);
  await page.click('#to-end');
  assert.equal(await text(page, '[data-testid="store-value"]'), 'B: total=121');

  assert.deepEqual(problems, []);
  await page.close();
});

test('a link can embed one story with only some parts, as tutorial pages do', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&embed=controls,caption');
  await page.setViewportSize({ width: 720, height: 560 });
  assert.equal(await page.locator('#case').count(), 0);
  assert.equal(await page.locator('[data-testid="log"]').count(), 0);
  assert.equal(await page.locator('.tabs').count(), 0);
  assert.match(await text(page, '#story-title'), /paused worker.*broken/i);
  await page.click('#to-end');
  assert.ok((await page.locator('.mark.violation:visible').count()) >= 1);
  assert.match(await caption(page), /expires/);
  await page.keyboard.press('Home');
  assert.deepEqual(await position(page), [0, 20]);
  await page.keyboard.press('End');
  await shot(page, 'embedded', { fullPage: false });
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(problems, []);
  await page.close();
});

test('every built-in story and variant plays to its end', async () => {
  const { page, problems } = await openPage(env);
  const cases = await page.locator('#case option').evaluateAll((options) => options.map((o) => o.value));
  assert.ok(cases.length >= 19, `only ${cases.length} stories in the picker`);
  for (const name of cases) {
    await pick(page, name);
    const variants = await page.locator('[data-variant]').evaluateAll((b) => b.map((x) => x.dataset.variant));
    for (const variant of variants.length ? variants : [null]) {
      if (variant) await page.click(`[data-variant="${variant}"]`);
      await page.click('#to-end');
      const [at, end] = await position(page);
      assert.ok(end > 0, `${name}/${variant}: no steps`);
      assert.equal(at, end, `${name}/${variant}`);
      assert.ok((await caption(page)).length > 0);
      await page.click('#to-start');
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});
