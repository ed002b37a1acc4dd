// Recorded histories on the page: opened with the file chooser, dropped on the page or named by
// a `history=` link, drawn and judged, findings chosen and their witness highlighted, lanes
// hidden, and bad files and links answered with a readable message. The fixtures in fixtures/
// are `fencelab run paused-worker --variant broken|fenced --format jsonl` (and a copy of the
// broken one with a misspelt field), and possible.jsonl is `fencelab export
// examples/histories/jepsen-timeout.edn --to jsonl`, whose three findings are all possible and
// share one step; they are served at /fixtures/ beside the build.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { badgeLabel, launch, openPage, shot, text } from './harness.mjs';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const broken = join(fixtures, 'paused-broken.jsonl');
const fenced = join(fixtures, 'paused-fenced.jsonl');
const malformed = join(fixtures, 'malformed.jsonl');
const possible = join(fixtures, 'possible.jsonl');

let env;

before(async () => {
  env = await launch(['/'], { width: 1440, height: 900 }, { '/fixtures/': fixtures });
});

after(async () => {
  await env?.close();
});

const position = async (page) => (await text(page, '[data-testid="position"] .mono')).replaceAll(',', '').split('/').map(Number);
const card = '[data-testid="history-card"]';

test('a history opened with the file chooser is drawn, judged, and its finding highlighted', async () => {
  const { page, problems } = await openPage(env, '/');
  await page.setInputFiles('#open-history', broken);
  await page.locator(card).waitFor();
  assert.match(await text(page, '#story-title'), /History: paused-broken\.jsonl/);
  assert.equal(await badgeLabel(page), 'recorded history');
  // The same player: 20 entries, at the start, with the log and the transcript.
  assert.deepEqual(await position(page), [0, 20]);
  assert.equal(await page.locator('[data-testid="log"] .entry').count(), 20);
  assert.equal(await page.locator('[data-testid="diagram"] .lane-head').count(), 4);
  // Story-only controls are gone while the history shows, with a reason.
  for (const id of ['#case', '#compare-toggle', '#editor-toggle', '#explore', '#export-json', '#make-rust-test']) {
    assert.equal(await page.locator(id).count(), 0, `${id} is hidden`);
  }
  assert.match(await text(page, '#history-note'), /a recorded history is what happened/);

  // The checker's findings, with the stale write among them.
  const finding = page.locator('[data-testid="findings-panel"] li[data-invariant="stale_write_accepted"]');
  assert.equal(await finding.count(), 1);
  assert.match(await finding.textContent(), /stale write accepted step \d+/);
  const step = Number(await finding.getAttribute('data-step'));
  const witness = (await finding.getAttribute('data-witness')).split(',').map(Number);
  assert.ok(witness.length > 0 && witness.every((s) => s <= step), `witness ${witness} ends by ${step}`);

  // Choosing it seeks to it: the warning mark is there, the caption says what broke, and the
  // witness's marks are highlighted (and nothing else).
  await finding.locator('button').click();
  assert.deepEqual(await position(page), [step + 1, 20]);
  assert.equal(await finding.getAttribute('class'), 'finding chosen reached');
  assert.match(await text(page, '[data-testid="caption"]'), /Broken: a stale write was accepted/);
  const mark = page.locator(`.mark.violation[data-step="${step}"]`).first();
  await mark.waitFor();
  const lit = await page.locator('.mark.witness').evaluateAll((marks) => marks.map((m) => Number(m.dataset.step)));
  assert.ok(lit.length > 0, 'some marks are highlighted');
  assert.ok(lit.every((s) => witness.includes(s)), `highlighted ${lit}, witness ${witness}`);
  if (witness.includes(step)) {
    assert.match(await mark.getAttribute('class'), /\bwitness\b/);
  }
  await shot(page, 'history-finding');

  // The player steps as for a story.
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual(await position(page), [step, 20]);
  await page.keyboard.press('End');
  assert.deepEqual(await position(page), [20, 20]);

  // A lane can be hidden and shown again.
  const laneA = page.locator('.lane-head[data-lane="worker:A"]');
  const toggle = page.locator('.lane-toggle[data-lane="worker:A"]');
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  assert.equal(await laneA.count(), 0);
  assert.equal(await page.locator('[data-testid="diagram"] .lane-head').count(), 3);
  await shot(page, 'history-lane-hidden');
  await toggle.click();
  assert.equal(await laneA.count(), 1);

  // Back to the stories.
  await page.click('#close-history');
  await page.locator('#case').waitFor();
  assert.equal(await page.locator(card).count(), 0);
  assert.deepEqual(await position(page), [0, 20]);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a clean history has no findings, and a dropped file opens too', async () => {
  const { page, problems } = await openPage(env, '/#scenario=idempotent-retry&variant=fenced');
  const textOf = await readFile(fenced, 'utf8');
  await page.evaluate((body) => {
    const data = new DataTransfer();
    data.items.add(new File([body], 'paused-fenced.jsonl', { type: 'application/jsonl' }));
    document.body.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, textOf);
  await page.locator(card).waitFor();
  assert.match(await text(page, '#story-title'), /paused-fenced\.jsonl/);
  assert.equal(await page.locator('[data-testid="findings-panel"] li').count(), 0);
  assert.match(await text(page, '[data-testid="findings-panel"]'), /none: every invariant holds/);
  assert.equal(await page.locator('.mark.violation').count(), 0);
  assert.equal(await page.locator('#story-title .badge.ok').count(), 1);
  // A history from a file has no address: the address names the story beneath it.
  assert.equal(await page.evaluate(() => location.hash), '#scenario=idempotent-retry&variant=fenced');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a history= link opens its file at the step it names, and keeps its address', async () => {
  const { page, problems } = await openPage(env, '/#history=fixtures/paused-broken.jsonl&step=3');
  await page.locator(card).waitFor();
  assert.deepEqual(await position(page), [3, 20]);
  assert.match(await text(page, '#story-title'), /History: fixtures\/paused-broken\.jsonl/);
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => location.hash === '#history=fixtures/paused-broken.jsonl&step=4');
  // Findings list and warning marks, as from a file.
  await page.locator('[data-testid="findings-panel"] li[data-invariant="stale_write_accepted"] button').click();
  assert.equal(await page.locator('.mark.violation').first().isVisible(), true);
  await shot(page, 'history-link');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a malformed file says which file, line and field, and the story stays', async () => {
  const { page, problems } = await openPage(env, '/');
  await page.setInputFiles('#open-history', malformed);
  const error = page.locator('#history-error');
  await error.waitFor();
  const message = await error.textContent();
  assert.match(message, /malformed\.jsonl is not a Fencelab history/);
  assert.match(message, /line 3/);
  assert.match(message, /generaton/);
  assert.equal(await page.locator('#case').isVisible(), true, 'the story stays on screen');
  assert.equal(await page.locator(card).count(), 0);
  await shot(page, 'history-malformed');
  // A malformed file behind a link says the same.
  const linked = await openPage(env, '/#history=fixtures/malformed.jsonl');
  await linked.page.locator('#history-error').waitFor();
  assert.match(await text(linked.page, '#history-error'), /fixtures\/malformed\.jsonl is not a Fencelab history.*line 3/);
  assert.deepEqual(linked.problems, []);
  await linked.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('a link to a missing file or another site says so, and keeps the link in the address', async () => {
  const { page, problems } = await openPage(env, '/#history=fixtures/missing.jsonl');
  const error = page.locator('#history-error');
  await error.waitFor();
  assert.match(await error.textContent(), /“fixtures\/missing\.jsonl” could not be fetched from http:\/\/127\.0\.0\.1:\d+\/fixtures\/missing\.jsonl: the server answered 404 Not Found/);
  assert.match(await error.textContent(), /The story below is shown instead/);
  assert.equal(await page.evaluate(() => location.hash), '#history=fixtures/missing.jsonl');
  assert.equal(await page.locator('#case').isVisible(), true);
  await shot(page, 'history-404');
  // The 404 itself is the only problem the page had.
  assert.ok(problems.length > 0 && problems.every((p) => /404|missing\.jsonl/.test(p)), problems.join('\n'));
  // Picking a story leaves the broken link behind.
  await page.selectOption('#case', 'idempotent-retry');
  await page.waitForFunction(() => location.hash.startsWith('#scenario=idempotent-retry'));
  assert.equal(await page.locator('#history-error').count(), 0);
  await page.close();

  const other = await openPage(env, '/#history=https://example.org/h.jsonl');
  await other.page.locator('#history-error').waitFor();
  assert.match(await text(other.page, '#history-error'), /on another site \(https:\/\/example\.org\)/);
  assert.deepEqual(other.problems, []);
  await other.page.close();
});

test('axe: no serious or critical violations on a history with a finding chosen, in both themes', async () => {
  const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
  const { page, problems } = await openPage(env, '/#history=fixtures/paused-broken.jsonl');
  await page.locator('[data-testid="findings-panel"] li button').first().click();
  await page.addScriptTag({ path: AXE });
  const found = [];
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
    await page.waitForTimeout(100);
    const results = await page.evaluate(() =>
      window.axe.run(document, { resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
    );
    for (const v of results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
      found.push(`${colorScheme}: ${v.id}: ${v.help}; ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    }
  }
  assert.deepEqual(found, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the example histories in examples/histories open: recorded SQLite runs judged, other formats named', async () => {
  const examples = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'histories');
  const { page, problems } = await openPage(env, '/');
  // The real multi-threaded run against SQLite without a fence: the stale write, with its witness.
  await page.setInputFiles('#open-history', join(examples, 'sqlite-unfenced.jsonl'));
  await page.locator(card).waitFor();
  const finding = page.locator('[data-testid="findings-panel"] li[data-invariant="stale_write_accepted"]');
  assert.equal(await finding.count(), 1);
  await finding.locator('button').click();
  const witness = (await finding.getAttribute('data-witness')).split(',').map(Number);
  assert.ok(witness.length >= 4, `a witness of several entries: ${witness}`);
  const lit = await page.locator('.mark.witness').evaluateAll((marks) => marks.map((m) => Number(m.dataset.step)));
  assert.ok(lit.length > 1 && lit.every((s) => witness.includes(s)), `highlighted ${lit}, witness ${witness}`);
  // The same run with the fence: nothing to find.
  await page.setInputFiles('#open-history', join(examples, 'sqlite-fenced.jsonl'));
  await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('sqlite-fenced.jsonl'));
  assert.equal(await page.locator('[data-testid="findings-panel"] li').count(), 0);
  // A Jepsen file is named as one, with the command that converts it.
  await page.setInputFiles('#open-history', join(examples, 'jepsen.edn'));
  const error = page.locator('#history-error');
  await error.waitFor();
  assert.match(await error.textContent(), /jepsen\.edn looks like a Jepsen history.*fencelab export jepsen\.edn --to jsonl/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a story downloads its history as JSON Lines, which opens as a history with the same findings, and as Mermaid', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken');
  const [jsonl] = await Promise.all([page.waitForEvent('download'), page.click('#export-history')]);
  assert.equal(jsonl.suggestedFilename(), 'paused-worker-broken.jsonl');
  assert.match(await text(page, '#share-status'), /Downloaded the whole run as a history/);
  const [mermaid] = await Promise.all([page.waitForEvent('download'), page.click('#export-mermaid')]);
  assert.equal(mermaid.suggestedFilename(), 'paused-worker-broken.mmd');
  const diagram = await readFile(await mermaid.path(), 'utf8');
  assert.match(diagram, /^sequenceDiagram\n/);
  assert.match(diagram, /broken: a stale write was accepted/);
  // The downloaded history opens on the page, judged the same.
  await page.setInputFiles('#open-history', await jsonl.path());
  await page.locator(card).waitFor();
  const kinds = await page.locator('[data-testid="findings-panel"] li').evaluateAll((items) => items.map((i) => i.dataset.invariant));
  assert.deepEqual(kinds, ['stale_write_accepted', 'write_outside_lease', 'final_value_not_from_latest_owner']);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a history= link with play and speed plays at that speed, as a story link does', async () => {
  const { page, problems } = await openPage(env, '/#history=fixtures/paused-broken.jsonl&step=2&play=1&speed=400');
  await page.locator(card).waitFor();
  assert.equal(await page.locator('#speed').inputValue(), '3');
  // 4× is 180 ms a step: it reaches the end of 20 entries within a few seconds.
  await page.waitForFunction(() => /^20\s*\/\s*20$/.test(document.querySelector('[data-testid="position"] .mono')?.textContent.trim()), null, { timeout: 8000 });
  await page.waitForFunction(() => location.hash === '#history=fixtures/paused-broken.jsonl&step=20&speed=400');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a history whose findings are all possible reads as possibly broken everywhere', async () => {
  const { page, problems } = await openPage(env, '/');
  await page.setInputFiles('#open-history', possible);
  await page.locator(card).waitFor();
  const badge = page.locator('#story-title .badge');
  assert.match(await badge.getAttribute('class'), /\bwarn\b.*\bpossible\b/);
  assert.equal(await badgeLabel(page), 'recorded history · possibly broken');
  assert.match(await badge.locator('.sr-only').textContent(), /possibly breaks an invariant/);
  assert.doesNotMatch(await badge.textContent(), /this run breaks an invariant/);
  assert.match(await text(page, `${card} .intro`), /: 3 possible findings\./);
  // The marks say so, and the legend tells them from certain ones.
  await page.keyboard.press('End');
  const labels = await page.locator('.mark.violation').evaluateAll((marks) => marks.map((m) => [m.getAttribute('class'), m.querySelector('title').textContent]));
  assert.equal(labels.length, 3);
  for (const [cls, title] of labels) {
    assert.match(cls, /\bpossible\b/);
    assert.match(title, /possibly violated: /);
  }
  assert.equal(await page.locator('.legend-item[data-legend="possible"]').count(), 1);
  assert.equal(await page.locator('.legend-item[data-legend="violation"]').count(), 0);
  // One line in the findings panel says what "possible" means.
  const note = page.locator('#possible-note');
  assert.match(await note.textContent(), /depends on a write or effect whose outcome nobody learned/);
  assert.equal(await note.locator('code').textContent(), 'fencelab audit');
  await shot(page, 'history-possible');
  assert.deepEqual(problems, []);
  await page.close();
});

for (const viewport of [{ width: 1440, height: 900 }, { width: 360, height: 740 }]) {
  test(`a chosen finding lights exactly its witness and its own mark, and shows it (${viewport.width}x${viewport.height})`, async () => {
    const { page, problems } = await openPage(env, '/');
    await page.setViewportSize(viewport);
    await page.setInputFiles('#open-history', possible);
    await page.locator(card).waitFor();
    // The three findings share a step; write_outside_lease has the shortest witness.
    const finding = page.locator('[data-testid="findings-panel"] li[data-invariant="write_outside_lease"]');
    const witness = (await finding.getAttribute('data-witness')).split(',').map(Number);
    await finding.locator('button').click();
    const own = page.locator('.mark.violation.witness');
    assert.equal(await own.count(), 1, 'only its own violation mark');
    assert.match(await own.locator('title').textContent(), /write outside lease/);
    const lit = await page.locator('.mark.witness:not(.violation)').evaluateAll((marks) => marks.map((m) => Number(m.dataset.step)));
    const events = await page.locator('.mark:not(.violation)').evaluateAll((marks) => marks.map((m) => Number(m.dataset.step)));
    assert.deepEqual(lit, events.filter((s) => witness.includes(s)), `witness ${witness}`);
    // The log marks the same entries, and the legend explains the highlight.
    const rows = await page.locator('[data-testid="log"] .entry.witness').evaluateAll((rows) => rows.map((r) => Number(r.dataset.step)));
    assert.deepEqual(rows, witness);
    assert.equal(await page.locator('.legend-item[data-legend="witness"]').count(), 1);
    assert.match(await text(page, '[data-testid="findings-panel"]'), /its witness: the entries that prove it/);
    // The chosen mark is on screen: inside the diagram's box and the window.
    await page.waitForTimeout(200);
    const box = await page.locator('[data-testid="diagram"]').boundingBox();
    const at = await own.locator('circle').boundingBox();
    assert.ok(at.x >= box.x && at.x + at.width <= box.x + box.width, `mark ${JSON.stringify(at)} in box ${JSON.stringify(box)}`);
    assert.ok(at.y >= box.y && at.y + at.height <= box.y + box.height, `mark ${JSON.stringify(at)} in box ${JSON.stringify(box)}`);
    assert.ok(at.y >= 0 && at.y + at.height <= viewport.height && at.x >= 0 && at.x + at.width <= viewport.width, `mark ${JSON.stringify(at)} on screen`);
    await shot(page, `history-witness-${viewport.width}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('a text log, a cut-off file and the chooser: the message names the problem, with its command in code', async () => {
  const examples = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'histories');
  const { page, problems } = await openPage(env, '/');
  // The chooser offers the files whose messages help: other tools' and logs.
  const accept = await page.locator('#open-history').getAttribute('accept');
  for (const ext of ['.jsonl', '.json', '.edn', '.log']) assert.ok(accept.split(',').includes(ext), `${ext} in ${accept}`);
  await page.setInputFiles('#open-history', join(examples, 'app.log'));
  const error = page.locator('#history-error');
  await error.waitFor();
  assert.match(await error.textContent(), /app\.log is not JSON and looks like a text log/);
  assert.equal(await error.locator('code').first().textContent(), 'fencelab export app.log --pattern RE --to jsonl > history.jsonl');
  assert.doesNotMatch(await error.textContent(), /`/);
  // A JSON Lines file cut off in the middle of a line.
  const whole = await readFile(broken, 'utf8');
  await page.setInputFiles('#open-history', { name: 'cut.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(whole.slice(0, whole.length - 40)) });
  await page.waitForFunction(() => document.querySelector('#history-error')?.textContent.includes('cut.jsonl'));
  assert.match(await error.textContent(), /cut\.jsonl is cut off at line 21: the line is incomplete JSON/);
  assert.doesNotMatch(await error.textContent(), /EOF|`\?`/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('history mode words: the caption says history, the last lane chip looks disabled and says why', async () => {
  const { page, problems } = await openPage(env, '/');
  await page.setInputFiles('#open-history', broken);
  await page.locator(card).waitFor();
  assert.match(await text(page, '[data-testid="caption"]'), /to start the history\./);
  assert.equal(await page.locator('#history-note code').first().textContent(), '#history=ADDRESS');
  // A hosted page has no README beside it: the note points to what the page itself offers.
  const note = await text(page, '#history-note');
  assert.match(note, /put it on the same site as the page and link it with #history=ADDRESS \(Share and export says the same\)\./);
  assert.doesNotMatch(note, /README/);
  assert.match(await text(page, '#share-no-address'), /#history=ADDRESS/);
  const chips = page.locator('.lane-toggle');
  const count = await chips.count();
  for (let i = 0; i < count - 1; i++) await chips.nth(i).click();
  const last = chips.nth(count - 1);
  assert.equal(await last.getAttribute('aria-disabled'), 'true');
  assert.match(await last.getAttribute('class'), /\blast\b/);
  await last.click({ force: true });
  assert.equal(await last.getAttribute('aria-pressed'), 'true');
  assert.match(await text(page, '#lane-note'), /the last lane shown stays/);
  await chips.nth(0).click();
  assert.equal(await last.getAttribute('aria-disabled'), null);
  assert.equal(await text(page, '#lane-note'), '');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a history link to a missing file is on the first phone screen with Dismiss; story-only parameters are named', async () => {
  const { page, problems } = await openPage(env, '/');
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${env.server.origin}/#history=fixtures/missing.jsonl&policy=strict`);
  const error = page.locator('#history-error');
  await error.waitFor();
  const box = await error.boundingBox();
  assert.ok(box.y >= 0 && box.y + box.height <= 740, `the message is on the first screen: ${JSON.stringify(box)}`);
  assert.match(await text(page, '#link-note'), /the link's policy applies only to stories, not to a recorded history/);
  await shot(page, 'history-404-phone');
  // Dismiss puts the link's problems away together.
  await page.click('#dismiss-history-error');
  assert.equal(await error.count(), 0);
  assert.equal(await page.locator('#link-note').count(), 0);
  // Given up, the link leaves the address to the story on screen.
  await page.waitForFunction(() => !location.hash.includes('history='));
  assert.ok(problems.every((p) => /404|missing\.jsonl/.test(p)), problems.join('\n'));
  await page.close();

  // On a history that opens, the note shows in its card.
  const opened = await openPage(env, '/#history=fixtures/paused-broken.jsonl&compare=1&break=unfenced_store');
  await opened.page.locator(card).waitFor();
  assert.match(await text(opened.page, '#link-note'), /the link's compare, break apply only to stories/);
  assert.equal(await opened.page.locator('#link-note code').count(), 2);
  await opened.page.click('#dismiss-link-note');
  assert.equal(await opened.page.locator('#link-note').count(), 0);
  assert.deepEqual(opened.problems, []);
  await opened.page.close();
});

test('the share card offers what applies to a history: its link and embed code when a link opened it, and the diagram', async () => {
  const { page, problems } = await openPage(env, '/#history=fixtures/paused-broken.jsonl&step=4');
  await page.locator(card).waitFor();
  const link = await page.locator('#share-link').inputValue();
  assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/#history=fixtures\/paused-broken\.jsonl&step=4$/);
  const embed = await page.locator('#embed-code').inputValue();
  // The frame is named after the file, not its address relative to this page.
  assert.match(embed, /#history=fixtures\/paused-broken\.jsonl&step=4&embed=controls,caption" title="Fencelab: History: paused-broken\.jsonl"/);
  assert.equal(await page.title(), 'History: fixtures/paused-broken.jsonl · Fencelab');
  for (const id of ['#export-json', '#import-json', '#export-history', '#export-mermaid', '#make-rust-test']) {
    assert.equal(await page.locator(id).count(), 0, `${id} is a story's`);
  }
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  assert.equal(svg.suggestedFilename(), 'paused-broken.svg');
  // A history from a file has no address: the card says how to get one.
  await page.setInputFiles('#open-history', fenced);
  await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('paused-fenced.jsonl'));
  assert.equal(await page.locator('#share-link').count(), 0);
  assert.equal(await page.locator('#embed-code').count(), 0);
  assert.match(await text(page, '#share-no-address'), /has no address.*same site as the page and link it with #history=ADDRESS/);
  assert.equal(await page.locator('#export-svg').count(), 1);
  assert.deepEqual(problems, []);
  await page.close();

  // A link's title names the frame and the document.
  const titled = await openPage(env, '/#history=fixtures/paused-broken.jsonl&title=Our%20outage');
  await titled.page.locator(card).waitFor();
  assert.match(await titled.page.locator('#embed-code').inputValue(), /&title=Our%20outage" title="Fencelab: Our outage"/);
  assert.equal(await titled.page.title(), 'Our outage · Fencelab');
  // Back to the stories, the page has its own title again.
  await titled.page.click('#close-history');
  await titled.page.waitForFunction(() => document.title === 'Fencelab · fencing tokens, step by step');
  assert.deepEqual(titled.problems, []);
  await titled.page.close();
});

test('a file opened over a history link takes the link out of the address', async () => {
  const { page, problems } = await openPage(env, '/#history=fixtures/paused-broken.jsonl&step=3');
  await page.locator(card).waitFor();
  await page.setInputFiles('#open-history', fenced);
  await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('paused-fenced.jsonl'));
  await page.waitForFunction(() => !location.hash.includes('history='));
  assert.deepEqual(problems, []);
  await page.close();
});

test('a history link with a parameter the page cannot use says so on a phone first screen', async () => {
  const page = await env.context.newPage();
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${env.server.origin}/#history=fixtures/paused-broken.jsonl&speed=100000`);
  const error = page.locator('#link-error');
  await error.waitFor();
  assert.match(await error.textContent(), /speed/);
  const box = await error.boundingBox();
  assert.ok(box && box.y < 740, `the message starts within the first screen (y=${box?.y})`);
  await page.close();
});
