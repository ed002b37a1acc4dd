// Long recorded histories: a 100,000-entry history (generated now by the command line, see
// long-history.mjs) opens whole; the page draws only what is on screen, so it holds as many
// elements as for a 1,000-entry history; every entry is reachable by scrubbing and by scrolling;
// and the findings are marked under the scrubber, each mark going to its finding.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { launch, openPage, shot, text } from './harness.mjs';
import { longHistory } from './long-history.mjs';

let env;
let dir;
const files = {};

before(async () => {
  env = await launch(['/'], { width: 1440, height: 900 });
  dir = await mkdtemp(join(tmpdir(), 'fencelab-long-'));
  for (const events of [1_000, 100_000]) {
    files[events] = join(dir, `history-${events}.jsonl`);
    await writeFile(files[events], await longHistory(events));
  }
});

after(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const position = async (page) => (await text(page, '[data-testid="position"] .mono')).split('/').map(Number);

async function open(page, file) {
  await page.setInputFiles('#open-history', file);
  await page.waitForFunction((name) => document.querySelector('#story-title')?.textContent.includes(name), basename(file), {
    timeout: 60_000,
  });
}

/** How much of the history the page holds: all its elements, the log's rows, the diagram's. */
const held = (page) =>
  page.evaluate(() => ({
    elements: document.getElementsByTagName('*').length,
    rows: document.querySelectorAll('[data-testid="log"] .entry').length,
    drawn: document.querySelectorAll('svg.swimlanes *').length,
  }));

/** Moves the scrubber to `to`, as a reader dragging it does. */
const scrub = (page, to) =>
  page.locator('#scrubber').evaluate((input, to) => {
    input.value = String(to);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, to);

test('a 100,000-entry history opens whole, and the page holds no more of it than of a 1,000-entry one', async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[1_000]);
  assert.deepEqual(await position(page), [0, 1_000]);
  const short = await held(page);
  await open(page, files[100_000]);
  assert.deepEqual(await position(page), [0, 100_000]);
  assert.match(await text(page, '[data-testid="history-card"] .intro'), /^100000 entries recorded/);
  const long = await held(page);
  // The log and the diagram draw what is in view, the same for either length.
  assert.ok(long.rows <= 40 && short.rows <= 40, `log rows: ${short.rows} and ${long.rows}`);
  assert.ok(Math.abs(long.rows - short.rows) <= 8, `log rows: ${short.rows} and ${long.rows}`);
  assert.ok(long.drawn < 1_500 && short.drawn < 1_500, `diagram elements: ${short.drawn} and ${long.drawn}`);
  // The whole page stays within one bound; the long history adds only its findings (a list and
  // the marks under the scrubber), which the short one has none of.
  const findings = await page.locator('[data-testid="findings-panel"] .finding').count();
  assert.ok(findings > 0, 'the long history has findings');
  assert.ok(long.elements < 3_000 && short.elements < 3_000, `elements: ${short.elements} and ${long.elements}`);
  assert.ok(long.elements - short.elements < 12 * findings, `elements: ${short.elements} and ${long.elements}`);

  // Scrubbing to the end shows the last entries, in the log and in the diagram.
  await scrub(page, 100_000);
  assert.deepEqual(await position(page), [100_000, 100_000]);
  assert.match(await text(page, '[data-testid="caption"]'), /^#100000 · t=\d+/);
  const last = page.locator('[data-testid="log"] .entry[data-step="99999"]');
  await last.waitFor();
  assert.match(await last.getAttribute('class'), /\bcurrent\b/);
  assert.equal(await last.getAttribute('aria-posinset'), '100000');
  assert.equal(await last.getAttribute('aria-setsize'), '100000');
  const lastMark = await page
    .locator('svg.swimlanes .mark')
    .evaluateAll((marks) => Math.max(...marks.map((m) => Number(m.dataset.step))));
  assert.ok(lastMark >= 99_990, `the diagram's last mark is at step ${lastMark}`);
  await shot(page, 'history-100k-end');

  // Scrolling the log, without moving the player, reaches any entry.
  await page.locator('[data-testid="log"]').evaluate((log) => {
    log.scrollTop = 50_000 * 30;
  });
  await page.locator('[data-testid="log"] .entry[data-step="50000"]').waitFor();
  assert.deepEqual(await position(page), [100_000, 100_000]);
  assert.ok((await held(page)).rows <= 60, 'the scrolled log lists what is in view');
  // And clicking one goes there.
  await page.locator('[data-testid="log"] .entry[data-step="50000"] button').click();
  assert.deepEqual(await position(page), [50_001, 100_000]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a long history's findings are marked under the scrubber, and a mark goes to its finding", async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[100_000]);
  const findings = await page.locator('[data-testid="findings-panel"] .finding').count();
  const marks = page.locator('.scrub-marks .scrub-mark');
  const count = await marks.count();
  assert.ok(count > 0 && count <= findings, `${count} marks for ${findings} findings`);
  // Described to screen readers, and each mark named by its step and what broke.
  const described = await page.locator('#scrubber').getAttribute('aria-describedby');
  assert.match(await text(page, `#${described}`), new RegExp(`^${findings} findings are marked under the scrubber`));
  for (const label of await marks.evaluateAll((ms) => ms.map((m) => m.getAttribute('aria-label')))) {
    assert.match(label, /^step \d+: [a-z ]+( and \d+ more nearby)?$/);
  }
  // Marks sit in order along the scrubber, where the player shows their steps.
  const steps = await marks.evaluateAll((ms) => ms.map((m) => Number(m.dataset.step)));
  assert.deepEqual(steps, [...steps].sort((a, b) => a - b));
  const at = await marks.evaluateAll((ms) => ms.map((m) => m.getBoundingClientRect().left));
  assert.ok(at.every((x, i) => i === 0 || x >= at[i - 1]), 'marks left to right');

  const mark = marks.nth(Math.floor(count / 2));
  const step = Number(await mark.getAttribute('data-step'));
  const finding = Number(await mark.getAttribute('data-finding'));
  await mark.click();
  assert.deepEqual(await position(page), [step + 1, 100_000]);
  const chosen = page.locator('[data-testid="findings-panel"] .finding.chosen');
  assert.equal(await chosen.count(), 1);
  assert.equal(Number(await chosen.getAttribute('data-step')), step);
  assert.equal(await page.locator('[data-testid="findings-panel"] .finding').nth(finding).getAttribute('class'), await chosen.getAttribute('class'));
  // The diagram draws the finding's own mark, highlighted, and the log its entry.
  await page.locator(`svg.swimlanes .mark.violation.witness[data-step="${step}"]`).waitFor();
  await page.locator(`[data-testid="log"] .entry.current[data-step="${step}"]`).waitFor();
  await shot(page, 'history-100k-finding');
  assert.deepEqual(problems, []);
  await page.close();
});
