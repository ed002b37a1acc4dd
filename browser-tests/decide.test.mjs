// "You decide": the reader picks the next event from the engine's list and injects faults from
// buttons and from a lane's menu, undoes, and shares the path taken. Like every browser test,
// each fails on any console error, uncaught exception or failed request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { launch, openPage, shot, text } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let env;

before(async () => {
  env = await launch(['/'], { width: 1280, height: 900 });
});

after(async () => {
  await env?.close();
});

const position = async (page) => (await text(page, '[data-testid="position"] .mono')).split('/').map(Number);
const choices = (page) => page.locator('#decide-choices button');
const faults = (page) => page.locator('#decide-faults button');

/** What the diagram shows, as one string: its marks' kinds and steps, then the caption. */
/** Whether the title's badge says the run breaks an invariant. */
const BAD = /(^| )bad( |$)/;

const fingerprint = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('.swimlanes .mark')]
      .map((m) => `${m.dataset.kind}@${m.dataset.step}`)
      .join(' ') + ` | ${document.querySelector('#caption')?.textContent}`,
  );

/** Takes the first choice until the engine offers more than one. */
async function toABranch(page) {
  for (let i = 0; i < 40 && (await choices(page).count()) < 2; i++) {
    await choices(page).first().click();
  }
  assert.ok((await choices(page).count()) >= 2, 'the story offers a choice somewhere');
}

/** Clicks the button that says `label` and waits for the step it runs. */
async function pick(page, locator) {
  const [at] = await position(page);
  await locator.click();
  await page.waitForFunction((at) => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith(`${at + 1}/`), at);
}

test('choosing events changes the run, undo takes steps back, and the link replays the path', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=3');
  await page.click('#decide-toggle');
  assert.equal(await page.locator('#decide-toggle').getAttribute('aria-pressed'), 'true');
  // The run ends where the reader is: the rest is theirs to decide.
  assert.deepEqual(await position(page), [3, 3]);
  await toABranch(page);
  const [at] = await position(page);
  const count = await choices(page).count();
  await pick(page, choices(page).last());
  const last = await fingerprint(page);
  await page.click('#undo');
  assert.deepEqual(await position(page), [at, at]);
  await pick(page, choices(page).first());
  const first = await fingerprint(page);
  assert.notEqual(first, last, `the ${count} choices lead to different steps`);
  // Ctrl+Z undoes as the button does, any number of times.
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  assert.deepEqual(await position(page), [at - 1, at - 1]);
  await pick(page, choices(page).first());
  await toABranch(page);
  await pick(page, choices(page).last());
  await pick(page, faults(page).filter({ hasText: /^Restart the lease authority$/ }));
  await pick(page, choices(page).first());
  // Stepping back and choosing says it replaces the later steps.
  await page.click('#step-back');
  await page.click('#step-back');
  assert.equal(await text(page, '#decide-later'), 'Choosing here replaces the 2 later steps.');
  await page.click('#step-forward');
  const [shown, decided] = await position(page);
  const path = await fingerprint(page);
  await page.waitForFunction(
    ([shown, decided]) => /decide=1/.test(location.hash) && /inject=\d+\.restart_authority/.test(location.hash) && location.hash.endsWith(`&steps=${decided}&step=${shown}`),
    [shown, decided],
  );
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /^#scenario=paused-worker&variant=fenced&schedule=[\d,]+&inject=\d+\.restart_authority&decide=1&steps=\d+&step=\d+$/);
  // The link opens the same run, at the same step, in the same mode.
  const again = await openPage(env, `/${hash}`);
  assert.deepEqual(await position(again.page), [shown, decided]);
  assert.equal(await fingerprint(again.page), path);
  assert.equal(await again.page.locator('#decide-toggle').getAttribute('aria-pressed'), 'true');
  assert.equal(await again.page.evaluate(() => location.hash), hash);
  // The run file carries the path: its scenario's schedule and injected fault.
  const [download] = await Promise.all([again.page.waitForEvent('download'), again.page.click('#export-json')]);
  const run = JSON.parse(await readFile(await download.path(), 'utf8'));
  assert.equal(run.position, shown);
  assert.deepEqual(run.scenario.injected.map((i) => i.fault), ['restart_authority']);
  assert.ok(run.scenario.schedule.length > 0);
  // Leaving the mode plays the path on to the end of the story.
  await again.page.click('#decide-toggle');
  const [, end] = await position(again.page);
  assert.ok(end > decided, `${end} steps after leaving, ${decided} decided`);
  assert.deepEqual(again.problems, []);
  await again.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('each kind of fault the engine offers, from the panel', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&decide=1');
  assert.deepEqual(await position(page), [0, 0]);
  await pick(page, choices(page).first());
  // Pauses and delays last as long as the reader asks.
  await page.locator('#fault-ticks').fill('5');
  await page.locator('#fault-ticks').blur();
  await page.waitForFunction(() => [...document.querySelectorAll('#decide-faults button')].some((b) => b.textContent.endsWith('for 5 ticks')));
  const kinds = [
    [/^Pause A for 5 ticks$/, /A freezes for 5 ticks/],
    [/^Delay B's next message by 5 ticks$/, /by hand/],
    [/^Restart the lease authority$/, /by hand/],
    [/^Restart the store \w+$/, /by hand/],
    [/^Set A's clock 5 ticks back$/, /by hand/],
    [/^Set A's clock 5 ticks ahead$/, /clock jumps ahead 5 ticks/],
  ];
  for (const [label, said] of kinds) {
    await pick(page, faults(page).filter({ hasText: label }));
    assert.match(await text(page, '#caption'), said);
  }
  assert.equal(await page.locator('.lane-head[data-lane="worker:A"] [data-testid="worker-status"]').textContent(), 'frozen');
  // A message in flight can be lost.
  const lose = faults(page).filter({ hasText: /^Lose (the grant to [AB] \(g\d+\)|[AB]'s (write|retry|effect) \(.+\)) in flight$/ });
  for (let i = 0; i < 30 && (await lose.count()) === 0; i++) await pick(page, choices(page).first());
  await pick(page, lose.first());
  assert.match(await text(page, '#caption'), /by hand/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the checker judges the path as the reader decides it, and undo takes a finding back', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&decide=1');
  // The broken story breaks as the reader plays it on: the title's badge follows the checker.
  assert.doesNotMatch(await page.locator('#story-title .badge').getAttribute('class'), BAD);
  for (let i = 0; i < 60; i++) {
    if (BAD.test(await page.locator('#story-title .badge').getAttribute('class'))) break;
    if ((await choices(page).count()) === 0) break;
    await pick(page, choices(page).first());
  }
  assert.match(await page.locator('#story-title .badge').getAttribute('class'), BAD);
  assert.ok((await page.locator('.swimlanes .mark.violation').count()) > 0, 'the finding is on the diagram');
  await page.keyboard.press('Control+z');
  assert.doesNotMatch(await page.locator('#story-title .badge').getAttribute('class'), BAD);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a lane's menu by keyboard, a message delivered from the diagram, axe clean", async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&decide=1');
  const menu = page.locator('[data-lane-menu="authority"]');
  await menu.focus();
  await page.keyboard.press('Enter');
  assert.equal(await menu.getAttribute('aria-expanded'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('role')), 'menuitem');
  // Escape closes it and gives focus back to the lane's button.
  await page.keyboard.press('Escape');
  assert.equal(await menu.getAttribute('aria-expanded'), 'false');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.laneMenu), 'authority');
  // The context-menu key opens a worker's menu; the arrows move through its items.
  const worker = page.locator('[data-lane-menu="worker:A"]');
  await worker.focus();
  await page.keyboard.press('ContextMenu');
  const items = page.locator('#menu-worker-A [role="menuitem"]');
  assert.match((await items.allTextContents()).join(' | '), /^Pause A for \d+ ticks \| Delay A's next message by \d+ ticks \| Set A's clock \d+ ticks? back \| Set A's clock \d+ ticks? ahead$/);
  await page.keyboard.press('ArrowDown');
  assert.match(await page.evaluate(() => document.activeElement.textContent), /^Delay A/);
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('1/'));
  assert.match(await text(page, '#caption'), /Injected by hand: A freezes/);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.laneMenu), 'worker:A');
  // A message in flight that the engine can deliver next is a button on the diagram.
  for (let i = 0; i < 40 && (await page.locator('.deliverable').count()) === 0; i++) {
    await pick(page, choices(page).first());
  }
  const deliverable = page.locator('.deliverable').first();
  const says = (await deliverable.getAttribute('aria-label')).replace('Deliver now: ', '');
  assert.ok((await choices(page).allTextContents()).includes(says), `${says} is one of the engine's choices`);
  await deliverable.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction((says) => !document.querySelector('.deliverable') || document.querySelector('.deliverable').getAttribute('aria-label') !== `Deliver now: ${says}`, says);
  await shot(page, 'decide-desktop', { fullPage: true });
  // Open a menu for axe to see it too.
  await menu.click();
  await page.addScriptTag({ path: AXE });
  const results = await page.evaluate(() =>
    window.axe.run(document, { resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  );
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help}; ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  assert.deepEqual(serious, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a lane's menu shows every item whole, above the diagram's scrolling box, at both sizes", async () => {
  for (const size of [{ width: 1440, height: 900 }, { width: 360, height: 740 }]) {
    const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&decide=1');
    await page.setViewportSize(size);
    const button = page.locator('[data-lane-menu="worker:A"]');
    await button.scrollIntoViewIfNeeded();
    await button.click();
    await page.locator('#menu-worker-A').waitFor();
    // Each item is what the window shows at its middle, inside the window's edges.
    const whole = await page.locator('#menu-worker-A [role="menuitem"]').evaluateAll((items) =>
      items.map((item) => {
        const r = item.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight && !!hit && item.contains(hit);
      }),
    );
    assert.deepEqual(whole, [true, true, true, true], `at ${size.width}px`);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#menu-worker-A').count(), 0);
    assert.deepEqual(problems, []);
    await page.close();
  }
});
