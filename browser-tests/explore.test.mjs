// Browser tests of "Break the protocol": flip a switch, find the counterexample with the core's
// explorer (run in slices from a timer), watch it in the visualizer; fenced stories survive with
// the CLI's pinned counts; a search that a bound cuts short says it is inconclusive; a running
// search can be cancelled. Any console error, uncaught exception or failed request fails a test.
// Screenshots: browser-tests/screenshots/explore-*.
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

async function pick(page, name, variant) {
  await page.selectOption('#case', name);
  if (variant) await page.click(`[data-variant="${variant}"]`);
  await page.waitForFunction(
    () => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('0/'),
    null,
    { timeout: 10_000 },
  );
}

/** Clicks "Find a counterexample" and waits for the result element. */
async function find(page) {
  await page.click('#explore-find');
  await page.locator('#explore-result').waitFor({ state: 'visible', timeout: 60_000 });
  return page.locator('#explore-result');
}

const position = async (page) => (await text(page, '[data-testid="position"] .mono')).replaceAll(',', '').split('/').map(Number);

test('flip "unfenced store" on the paused worker, find the counterexample and watch it', async () => {
  const { page, problems } = await openPage(env);
  await pick(page, 'paused-worker', 'fenced');
  // Only the switches that change something in this story are offered, each with its sentence.
  const labels = await page.locator('.switches .switch-label').allTextContents();
  assert.ok(labels.includes('unfenced store'), labels.join());
  assert.ok(!labels.some((l) => /authority restart/.test(l)), 'no restart in this story');
  assert.match(await text(page, '#switch-unfenced_store-help'), /without looking at its token/);
  await shot(page, 'explore-switches-desktop', { fullPage: false });

  await page.check('#switch-unfenced_store');
  assert.ok(await page.isChecked('#switch-unfenced_store'));
  const result = await find(page);
  assert.equal(await result.getAttribute('data-outcome'), 'violation');
  assert.equal(await result.getAttribute('data-invariant'), 'stale_write_accepted');
  const step = Number(await result.getAttribute('data-step'));
  // The broken property is named as broken, at the step number the counter and caption use.
  assert.match(await result.textContent(), new RegExp(`Broken at step ${step + 1}: a stale write was accepted`));
  assert.doesNotMatch(await result.textContent(), /no write is accepted/);

  // The visualizer shows the counterexample, positioned at the step that broke the invariant,
  // with the warning mark on that step.
  await page.waitForFunction(
    (at) => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith(`${at}/`),
    step + 1,
    { timeout: 10_000 },
  );
  // The first violation mark sits on that step (the run goes on, and may break more later).
  const marked = await page.locator('.mark.violation').evaluateAll((ms) => ms.map((m) => Number(m.dataset.step)));
  assert.ok(marked.length >= 1);
  assert.equal(Math.min(...marked), step);
  assert.match(await text(page, '[data-testid="violations-panel"]'), /stale/i);
  assert.match(await text(page, '#story-title'), /edited/i);
  // There is a way back to the story as the library tells it.
  assert.equal(await page.locator('#explore-back').count(), 1);
  // Its switch is now part of the scenario: shown ticked, not changeable.
  assert.ok(await page.isChecked('#switch-unfenced_store'));
  assert.ok(await page.isDisabled('#switch-unfenced_store'));
  await page.locator('#explore').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'explore-violation-desktop', { fullPage: false });
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'explore-violation-desktop-dark', { fullPage: false });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  await page.locator('#explore-result').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'explore-violation-phone', { fullPage: false });
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'explore-violation-phone-dark', { fullPage: false });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(DESKTOP);

  // Play it from the start: autoplay runs with captions; jump back to the break.
  await page.click('#explore-replay');
  await page.waitForFunction(() => document.querySelector('#play')?.getAttribute('aria-pressed') === 'true'
    || /pause/i.test(document.querySelector('#play')?.getAttribute('aria-label') ?? ''), null, { timeout: 5_000 });
  const [at] = await position(page);
  assert.ok(at <= 2, `playing from the start, at ${at}`);
  await page.click('#explore-jump');
  assert.deepEqual((await position(page))[0], step + 1);
  assert.match(await text(page, '#caption'), /.+/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('every switch breaks the story that depends on it, and the break is marked in the diagram', async () => {
  const { page, problems } = await openPage(env);
  for (const [name, variant, id, invariant] of [
    ['paused-worker', 'fenced', 'unfenced_store', 'stale_write_accepted'],
    ['check-then-write', 'atomic', 'check_then_write', 'stale_write_accepted'],
    ['secondary-path', 'fenced', 'unfenced_secondary_path', 'stale_write_accepted'],
    ['wall-clock-tokens', 'fenced', 'wall_clock_tokens', 'stale_write_accepted'],
    ['authority-restart', 'fenced', 'volatile_counter', 'generation_reissued'],
    ['store-restart', 'fenced', 'highest_not_persisted', 'stale_write_accepted'],
    ['forged-token', 'authenticated', 'unauthenticated_tokens', 'stale_write_accepted'],
    ['payment-capture', 'fenced', 'unfenced_gateway', 'effect_delivered_twice'],
    ['admin-path', 'fenced', 'unfenced_secondary_path', 'stale_write_accepted'],
    ['duplicate-capture', 'fenced', 'unfenced_gateway', 'effect_delivered_twice'],
    ['newer-owner-retry', 'fenced', 'unfenced_store', 'operation_applied_twice'],
  ]) {
    await pick(page, name, variant);
    await page.check(`#switch-${id}`);
    const result = await find(page);
    assert.equal(await result.getAttribute('data-outcome'), 'violation', `${name} with ${id}`);
    assert.equal(await result.getAttribute('data-invariant'), invariant, `${name} with ${id}`);
    const step = Number(await result.getAttribute('data-step'));
    await page.waitForFunction(
      (at) => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith(`${at}/`),
      step + 1,
    );
    // The diagram marks every broken invariant; the one the explorer looked for is on that step.
    assert.ok(await page.locator(`.mark.violation[data-step="${step}"]`).count() >= 1, `${name}: marked at ${step}`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('fenced stories: no violation within bounds, with the pinned unique-state counts', async () => {
  const { page, problems } = await openPage(env);
  for (const [name, variant, states] of [
    ['paused-worker', 'fenced', 20],
    ['check-then-write', 'atomic', 35],
  ]) {
    await pick(page, name, variant);
    const result = await find(page);
    assert.equal(await result.getAttribute('data-outcome'), 'safe', name);
    assert.equal(await result.getAttribute('data-states'), String(states), name);
    assert.match(await result.textContent(), new RegExp(`No violation within bounds: ${states} unique states`));
    if (name === 'check-then-write') {
      await page.locator('#explore').evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await shot(page, 'explore-safe-desktop', { fullPage: false });
      // The same story with "check, then write" breaks.
      await page.check('#switch-check_then_write');
      assert.equal(await page.locator('#explore-result').count(), 0, 'a new switch clears the result');
      const broken = await find(page);
      assert.equal(await broken.getAttribute('data-outcome'), 'violation');
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('a search that a bound cuts short says it is inconclusive, not that the story is safe', async () => {
  const { page, problems } = await openPage(env);
  // The generated load has far more interleavings than the page's 30,000-state bound.
  await pick(page, 'generated');
  const started = Date.now();
  const result = await find(page);
  const seconds = (Date.now() - started) / 1000;
  assert.equal(await result.getAttribute('data-outcome'), 'inconclusive');
  assert.equal(await result.getAttribute('data-bound'), 'states');
  assert.equal(await result.getAttribute('data-states'), '30000');
  const said = (await result.textContent()).replace(/\s+/g, ' ');
  assert.match(
    said,
    /Inconclusive: no violation in 30,000 states, but the state bound \(30,000 states\) stopped the search before every interleaving was checked\./,
  );
  assert.match(said, /proves nothing about the interleavings it did not reach/);
  assert.doesNotMatch(said, /No violation within bounds|every interleaving was tried/);
  assert.equal(await page.locator('#explore-result.safe').count(), 0, 'not styled as safe');
  await page.locator('#explore').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'explore-inconclusive-desktop', { fullPage: false });
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  await page.locator('#explore-result').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'explore-inconclusive-phone', { fullPage: false });
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'explore-inconclusive-phone-dark', { fullPage: false });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(DESKTOP);
  console.log(`generated load: inconclusive at the state bound after ${seconds.toFixed(1)} s`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a running search can be cancelled', async () => {
  const { page, problems } = await openPage(env);
  // The generated load takes seconds to reach the state bound: long enough to catch mid-run.
  await pick(page, 'generated');
  await page.click('#explore-find');
  await page.locator('#explore-progress').waitFor({ state: 'visible' });
  assert.ok(await page.isDisabled('#explore-find'));
  const switches = page.locator('.switches input');
  for (let i = 0; i < (await switches.count()); i++) {
    assert.ok(await switches.nth(i).isDisabled(), 'switches wait for the search');
  }
  await page.waitForFunction(() => /Exploring: [1-9]/.test(document.querySelector('#explore-progress')?.textContent ?? ''));
  await page.setViewportSize(PHONE);
  await page.locator('#explore').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'explore-progress-phone', { fullPage: false });
  await page.setViewportSize(DESKTOP);
  await page.click('#explore-cancel');
  const result = page.locator('#explore-result');
  assert.equal(await result.getAttribute('data-outcome'), 'cancelled');
  const states = Number((await result.textContent()).match(/after ([\d,]+) unique states/)[1].replace(/,/g, ''));
  assert.ok(states > 1 && states < 30_000, `cancelled after ${states} states`);
  // Nothing more arrives from the cancelled search.
  await page.waitForTimeout(400);
  assert.equal(await result.getAttribute('data-outcome'), 'cancelled');
  assert.equal(await page.locator('#explore-progress').count(), 0);
  // And a new search runs to the end.
  await pick(page, 'check-then-write', 'atomic');
  const done = await find(page);
  assert.equal(await done.getAttribute('data-states'), '35');
  assert.deepEqual(problems, []);
  await page.close();
});

test('after a counterexample loads, "Back to the story" returns to the story as the library tells it', async () => {
  const { page, problems } = await openPage(env);
  await pick(page, 'paused-worker', 'fenced');
  const fencedIntro = await text(page, 'p.intro');
  await page.check('#switch-unfenced_store');
  // The intro keeps the set-up but no longer tells the fenced ending.
  await page.waitForFunction(() => /turns protections off \(unfenced store\)/.test(document.querySelector('p.intro')?.textContent ?? ''));
  assert.notEqual(await text(page, 'p.intro'), fencedIntro);
  await find(page);
  await page.waitForFunction(() => /edited/i.test(document.querySelector('#story-title')?.textContent ?? ''));
  await page.click('#explore-back');
  await page.waitForFunction(() => !/edited/i.test(document.querySelector('#story-title')?.textContent ?? ''));
  assert.equal(await page.isChecked('#switch-unfenced_store'), false);
  assert.deepEqual(problems, []);
  await page.close();
});
