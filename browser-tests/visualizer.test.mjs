// Browser tests of the visualizer in the built page (dist/): headless Debian Chromium driven by
// playwright-core. Every test fails on any console error, uncaught exception (a Rust panic aborts
// the wasm module and shows up as one) or failed request. Screenshots of the key states are saved
// under browser-tests/screenshots/ for a reviewer to look at.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, badgeLabel, launch, openPage, shot, text } from './harness.mjs';

let env;

before(async () => {
  env = await launch(['/'], DESKTOP);
});

after(async () => {
  await env?.close();
});

/** The position shown by the transport bar ("1,234/5,000"), as [at, end]. */
async function position(page) {
  const shown = await text(page, '[data-testid="position"] .mono');
  const [at, end] = shown.replaceAll(',', '').split('/').map(Number);
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
  // At the end of the run nothing more can break, and the panel says so without "so far".
  const ended = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=20');
  assert.equal(await text(ended.page, '[data-testid="violations-panel"] .ok-text'), 'all hold');
  assert.deepEqual(ended.problems, []);
  await ended.page.close();
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

for (const size of [DESKTOP, PHONE]) test(`at ${size.width}x${size.height} stepping from a story's top keeps the current step on screen, and the focus on the button at the end`, async () => {
  const { page, problems } = await openPage(env, '/#scenario=check-then-write&variant=check-then-write');
  await page.setViewportSize(size);
  assert.equal(await page.evaluate(() => scrollY), 0);
  await page.locator('#step-forward').focus();
  let moved = 0;
  for (let i = 0; i < 80 && (await page.locator('#step-forward').getAttribute('aria-disabled')) !== 'true'; i++) {
    await page.keyboard.press('Enter');
    const row = await page.evaluate(() => {
      const band = document.querySelector('.now-band').getBoundingClientRect();
      const player = document.querySelector('.player').getBoundingClientRect();
      const cover = player.top <= 1 ? player.bottom : 0;
      return { top: band.top, bottom: band.bottom, cover, height: innerHeight, scrolled: scrollY };
    });
    const at = (await position(page))[0];
    assert.ok(row.top >= row.cover && row.bottom <= row.height, `step ${at}: the row at ${row.top}-${row.bottom}, the window ${row.cover}-${row.height}`);
    moved = Math.max(moved, row.scrolled);
  }
  const [at, end] = await position(page);
  assert.equal(at, end);
  assert.ok(moved > 0, 'the page followed the step down');
  // A marked button keeps the focus: a disabled one would drop it to the page.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'step-forward');
  await page.keyboard.press('Enter');
  assert.deepEqual(await position(page), [end, end]);
  assert.deepEqual(problems, []);
  await page.close();
});

for (const size of [DESKTOP, PHONE]) test(`at ${size.width}x${size.height} compare mode keeps the first diagram's current step on screen as the reader steps`, async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&compare=unfenced,fenced', '[data-testid="compare"]');
  await page.setViewportSize(size);
  await page.locator('#step-forward').focus();
  let moved = 0;
  for (let i = 0; i < 40 && (await page.locator('#step-forward').getAttribute('aria-disabled')) !== 'true'; i++) {
    await page.keyboard.press('Enter');
    await page.waitForTimeout(30);
    const row = await page.evaluate(() => {
      const band = document.querySelector('[data-testid="compare"] .now-band').getBoundingClientRect();
      const player = document.querySelector('.player').getBoundingClientRect();
      return { top: band.top, bottom: band.bottom, cover: player.top <= 1 ? player.bottom : 0, height: innerHeight, scrolled: scrollY };
    });
    assert.ok(row.top >= row.cover - 1 && row.bottom <= row.height + 1, `step ${i + 1}: the row at ${row.top}-${row.bottom}, the window ${row.cover}-${row.height}`);
    moved = Math.max(moved, row.scrolled);
  }
  assert.ok(moved > 0, 'the page followed the step');
  assert.deepEqual(problems, []);
  await page.close();
});

test(`at ${PHONE.width}x${PHONE.height} another story opens at its diagram's left edge, and the course comes first in its row`, async () => {
  const { page, problems } = await openPage(env, '/#scenario=payment-capture&variant=fenced&step=5');
  await page.setViewportSize(PHONE);
  // The reader scrolls the lanes sideways, then follows a link to another story.
  await page.locator('#diagram-main').evaluate((box) => { box.scrollLeft = 300; });
  await page.waitForFunction(() => document.querySelector('#diagram-main')?.scrollLeft > 0);
  await page.evaluate(() => { location.hash = 'scenario=paused-worker&variant=broken'; });
  await page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('0/'));
  // At the left edge (the first lane snaps just right of the time column, a few pixels in).
  await page.waitForFunction(() => document.querySelector('#diagram-main')?.scrollLeft <= 8);
  // The course's way in is the first thing in the sideways row of modes, on screen.
  const modes = page.locator('.modes:has(#compare-toggle) > *');
  assert.equal(await modes.first().getAttribute('id'), 'course-toggle');
  const box = await modes.first().boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, JSON.stringify(box));
  assert.deepEqual(problems, []);
  await page.close();
});

for (const [size, link, box] of [
  [PHONE, '/#scenario=payment-capture&variant=fenced&step=5', '#diagram-main'],
  [DESKTOP, '/#scenario=payment-capture&variant=fenced&step=5&compare=unfenced,fenced', '[data-testid="compare"] .diagram'],
]) test(`at ${size.width}x${size.height} the time stays at the left edge while the lanes scroll sideways${link.includes('compare') ? ', in compare mode too' : ''}`, async () => {
  const { page, problems } = await openPage(env, link);
  await page.setViewportSize(size);
  const diagram = page.locator(box).first();
  const edges = () => diagram.evaluate((d) => {
    const inner = d.getBoundingClientRect();
    const label = [...d.querySelectorAll('.tick-label')].map((l) => l.getBoundingClientRect()).find((r) => r.top >= inner.top);
    const head = d.querySelector('.gutter-head').getBoundingClientRect();
    // What a reader sees at the label: the time column, over whatever lane passes beneath.
    const top = document.elementFromPoint(label.left + 2, label.top + label.height / 2);
    return { box: inner.left, label: label.left, labelRight: label.right, head: head.left, scrolled: d.scrollLeft, room: d.scrollWidth - d.clientWidth, onTop: !!top?.closest('.time-column') };
  });
  await diagram.evaluate((d) => { d.scrollLeft = 200; });
  await page.waitForFunction((sel) => document.querySelector(sel).style.getPropertyValue('--scroll-x') === `${document.querySelector(sel).scrollLeft}px`, box);
  const seen = await edges();
  assert.ok(seen.room > 0 && seen.scrolled > 0, `the lanes are wider than the box: ${JSON.stringify(seen)}`);
  assert.ok(seen.label >= seen.box && seen.labelRight <= seen.box + 80, `a time label at the left edge: ${JSON.stringify(seen)}`);
  assert.ok(Math.abs(seen.head - seen.box) <= 2, `the "time" head at the left edge: ${JSON.stringify(seen)}`);
  assert.ok(seen.onTop, `the time column is drawn over the lanes: ${JSON.stringify(seen)}`);
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

test('each store shows what it keeps: nothing unfenced, the last written generation, the highest that passed', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=20');
  const cell = '[data-testid="store-panel"] .cell';
  const kept = async () => ({
    label: (await text(page, `${cell} dt`)).toLowerCase(),
    value: await text(page, '[data-testid="highest"]'),
    lane: await text(page, '.lane-head[data-lane="store:db"] .status-line'),
  });
  // Unfenced: the store applied generation 1 after 2 and keeps no fencing record at all.
  assert.match(await text(page, `${cell} .cell-title`), /unfenced/);
  assert.deepEqual(await kept(), { label: 'highest gen', value: 'none: unfenced', lane: 'totals: unfenced r3' });
  // Fenced: the highest generation that passed the check.
  await page.click('[data-variant="fenced"]');
  assert.deepEqual(await kept(), { label: 'highest gen', value: '2', lane: 'totals: g2 r2' });

  // Check-then-write: the generation of the last write, which goes back when the stale one lands.
  await pick(page, 'check-then-write');
  await page.click('[data-variant="check-then-write"]');
  assert.equal((await position(page))[0], 0);
  const seen = [];
  for (let i = 0; i < 40; i++) {
    if ((await page.locator(cell).count()) > 0) {
      const now = await kept();
      assert.equal(now.label, 'last written gen');
      if (now.value !== 'none') {
        assert.match(now.lane, new RegExp(`^ledger: last g${now.value} r\\d+$`));
        if (seen.at(-1) !== now.value) seen.push(now.value);
      }
    }
    if ((await page.locator('#step-forward').getAttribute('aria-disabled')) === 'true') break;
    await page.click('#step-forward');
  }
  assert.deepEqual(seen, ['1', '2', '1']);

  // Compare mode's table says the same for all four modes; fenced + idempotent keeps the highest.
  for (const [modes, left, right] of [
    ['unfenced,check_then_write', 'unfenced', 'last g2'],
    ['fenced,fenced_idempotent', 'g2', 'g2'],
  ]) {
    const compare = await openPage(env, `/#scenario=paused-worker&variant=fenced&compare=${modes}`, '[data-testid="compare"]');
    assert.equal(await text(compare.page, '[data-testid="final-left"] [data-testid="kept"]'), left, modes);
    assert.equal(await text(compare.page, '[data-testid="final-right"] [data-testid="kept"]'), right, modes);
    assert.deepEqual(compare.problems, []);
    await compare.page.close();
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('the title badge says what runs now, with a colour, a glyph and words that mean it', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced');
  const badge = page.locator('#story-title .badge');
  const read = async () => ({
    label: await badgeLabel(page),
    tone: (await badge.getAttribute('class')).replace('badge', '').trim(),
    says: (await badge.locator('.sr-only').textContent()).trim(),
    glyph: await badge.locator('svg path').getAttribute('d'),
    colour: await badge.evaluate((e) => getComputedStyle(e).color),
  });
  const fenced = await read();
  assert.deepEqual([fenced.label, fenced.tone], ['fenced', 'ok']);
  assert.match(fenced.says, /every invariant holds/);
  await page.click('[data-variant="broken"]');
  const broken = await read();
  assert.deepEqual([broken.label, broken.tone], ['broken', 'bad']);
  assert.match(broken.says, /breaks an invariant/);
  // Not by colour alone: the glyph and the words differ too.
  assert.notEqual(broken.colour, fenced.colour);
  assert.notEqual(broken.glyph, fenced.glyph);

  // A switch is part of what runs: the title says so, and this one breaks the run.
  await page.click('[data-variant="fenced"]');
  await page.check('#switch-unfenced_store');
  await page.waitForFunction(() => location.hash.includes('break=unfenced_store'));
  const switched = await read();
  assert.deepEqual([switched.label, switched.tone], ['fenced + unfenced store', 'bad']);
  // A protection off that this schedule does not expose: a colour and glyph of their own.
  await page.uncheck('#switch-unfenced_store');
  await page.check('#switch-strictly_newer');
  await page.waitForFunction(() => location.hash.includes('break=strictly_newer'));
  const weakened = await read();
  assert.deepEqual([weakened.label, weakened.tone], ['fenced + strictly newer generations only', 'warn']);
  assert.match(weakened.says, /a protection is off/);
  assert.ok(new Set([fenced.colour, broken.colour, weakened.colour]).size === 3);
  assert.ok(new Set([fenced.glyph, broken.glyph, weakened.glyph]).size === 3);
  await shot(page, 'badge-weakened', { fullPage: false });
  assert.deepEqual(problems, []);
  await page.close();
});

test('one step numbering: the caption, counter, log, transcript, panels and diagram agree', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=19');
  assert.deepEqual(await position(page), [19, 20]);
  assert.match(await caption(page), /^#19 · t=19\D/);
  assert.equal(await text(page, '.log .entry.current .step-no'), '#19');
  assert.equal(await page.locator('#scrubber').getAttribute('aria-valuetext'), `step 19 of 20, t=${(await caption(page)).match(/t=(\d+)/)[1]}`);
  assert.match(await page.locator('svg.swimlanes').getAttribute('aria-label'), /^Swimlane diagram, 4 lanes \(lease authority, A, B, db\), step 19 of 20: db applies A's write/);
  assert.match(await page.locator('#transcript li').nth(18).textContent(), /^#19 · t=\d+/);
  // Step 19 is the one that broke the invariant: the panel, the mark and the log say 19 too.
  assert.match(await text(page, '[data-testid="violations-panel"]'), /at step 19:/);
  assert.match(await page.locator('.mark.violation title').first().textContent(), /^step 19: /);
  assert.equal(await page.locator('.log .entry.violation .step-no').first().textContent(), '#19');
  // The first step is step 1.
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  assert.match(await caption(page), /^#1 · t=0\D/);
  assert.equal(await text(page, '.log .entry.current .step-no'), '#1');
  assert.match(await page.locator('#transcript li').first().textContent(), /^#1 · t=0/);
  assert.deepEqual(problems, []);
  await page.close();
});

for (const size of [DESKTOP, PHONE]) test(`at ${size.width}x${size.height} a broken step's caption is shaded as broken, under the phone's scroll shades too`, async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=18');
  await page.setViewportSize(size);
  const shade = () => page.locator('#caption').evaluate((c) => getComputedStyle(c).backgroundColor);
  const plain = await shade();
  await page.click('#step-forward');
  assert.equal(await page.locator('#caption').getAttribute('data-kind'), 'violation');
  assert.notEqual(await shade(), plain, 'the broken step shows its own colour');
  assert.deepEqual(problems, []);
  await page.close();
});

test('the live caption says what broke at the step that broke it, as does the transcript', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=18');
  const live = page.locator('#caption');
  assert.equal(await live.getAttribute('aria-live'), 'polite');
  assert.doesNotMatch(await live.textContent(), /Broken:/);
  await page.click('#step-forward');
  assert.match(await live.textContent(), /Broken: a stale write was accepted: /);
  const sentence = (await live.textContent()).match(/Broken: .*$/)[0];
  assert.ok((await page.locator('#transcript li').nth(18).textContent()).includes(sentence));
  // The caption announces it; a second live region would say it twice.
  assert.equal(await page.locator('[data-testid="violations-panel"] [aria-live]').count(), 0);
  // An embed with the panels but no caption announces what the invariants list gains.
  const embed = await openPage(env, '/#scenario=paused-worker&variant=broken&step=18&embed=controls,panels');
  const region = embed.page.locator('[data-testid="violations-panel"] [aria-live="polite"]');
  assert.equal(await region.getAttribute('aria-relevant'), 'additions');
  assert.match(await region.textContent(), /all hold so far/);
  await embed.page.click('#step-forward');
  assert.match(await region.textContent(), /stale write accepted at step 19/);
  assert.deepEqual(embed.problems, []);
  await embed.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('compare mode opens at the moment on screen and closes at the one it was at', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=11');
  const time = async () => (await text(page, '[data-testid="position"] .muted')).match(/t=(\d+)/)[1];
  const before = await time();
  assert.notEqual(before, '0');
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor({ timeout: 20_000 });
  assert.match(await text(page, '[data-testid="position"] .muted'), /ticks/);
  assert.equal(await time(), before);
  assert.ok((await position(page))[0] > 0);
  assert.match(await text(page, '#cmp-right-caption'), new RegExp(`#11 · t=${before}\\D`));
  // Closed at once, it is back at the same step.
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor({ state: 'detached' });
  assert.deepEqual(await position(page), [11, 20]);
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor();
  await page.click('#step-forward');
  const later = await time();
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor({ state: 'detached' });
  assert.equal(await time(), later);
  assert.match(await caption(page), new RegExp(`t=${later}\\D`));
  assert.deepEqual(problems, []);
  await page.close();
});

test('the page is one wasm module, tools included, and exports no test hooks', async () => {
  const { page, problems } = await openPage(env);
  const modules = await page.evaluate(() =>
    performance.getEntriesByType('resource').filter((r) => r.name.endsWith('.wasm')).length,
  );
  assert.equal(modules, 1);
  // The tools are there at once: compare mode opens without fetching anything.
  const before = await page.evaluate(() => performance.getEntriesByType('resource').length);
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor();
  assert.equal(await page.evaluate(() => performance.getEntriesByType('resource').length), before);
  // The benchmark's hooks come only with the `test-hooks` feature, which the page is built without.
  const hooks = await page.evaluate(() =>
    ['explore_bench', 'explore_pace', 'wasm_memory'].filter((name) => name in (window.wasmBindings ?? {})),
  );
  assert.deepEqual(hooks, []);
  assert.deepEqual(problems, []);
  await page.close();
});
