// Accessibility: axe-core, run inside the page, finds no serious or critical violation
// (contrast included) on the main view, compare mode, the editor and an embed, in the light and
// the dark theme; every control is reachable by keyboard with a visible focus ring and a name.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, openPage } from './harness.mjs';
import { longHistory } from './long-history.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let env;

before(async () => {
  env = await launch(['/'], { width: 1280, height: 900 });
});

after(async () => {
  await env?.close();
});

/** The serious and critical violations axe finds on the page, as readable lines. */
async function axe(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const results = await page.evaluate(() =>
    window.axe.run(document, { resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  );
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}; ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

/** Runs axe in both themes. */
async function bothThemes(page, label) {
  const found = [];
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
    await page.waitForTimeout(100);
    for (const v of await axe(page)) found.push(`${label}, ${colorScheme}: ${v}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

test('axe: no serious or critical violations on the main view, compare, editor and embed', async () => {
  const found = [];
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=19');
  found.push(...(await bothThemes(page, 'main view')));
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor();
  found.push(...(await bothThemes(page, 'compare mode')));
  await page.click('#compare-toggle');
  await page.click('#editor-toggle');
  await page.locator('#scenario-json').fill('{"oops": true}');
  await page.locator('[data-testid="editor-error"]').waitFor();
  found.push(...(await bothThemes(page, 'editor with an error')));
  const embed = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=19&embed=controls,caption,legend');
  found.push(...(await bothThemes(embed.page, 'embed')));
  assert.deepEqual(found, []);
  assert.deepEqual([...problems, ...embed.problems], []);
  await embed.page.close();
  await page.close();
});

test('axe: no serious or critical violations on an embed with a bad link, the badges and the playground with an input error', async () => {
  const found = [];
  const embed = await openPage(env, '/#scenario=paused-worker&variant=brokn&embed=controls,caption', '#link-error');
  found.push(...(await bothThemes(embed.page, 'embed with a bad link')));
  const switched = await openPage(env, '/#scenario=paused-worker&variant=fenced&break=strictly_newer');
  found.push(...(await bothThemes(switched.page, 'a protection switched off')));
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&tab=playground', '.playground');
  await page.fill('#generation', 'abc');
  await page.click('#write');
  await page.locator('#generation-error').waitFor();
  found.push(...(await bothThemes(page, 'playground with an input error')));
  assert.deepEqual(found, []);
  assert.deepEqual([...embed.problems, ...switched.problems, ...problems], []);
  for (const p of [embed.page, switched.page, page]) await p.close();
});

test('axe: no serious or critical violations on a long history: its log lists the rows in view, its findings are marked under the scrubber, its many lanes fold under a filter', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fencelab-a11y-'));
  try {
    const file = join(dir, 'long.jsonl');
    await writeFile(file, await longHistory(5_000));
    const { page, problems } = await openPage(env, '/');
    await page.setInputFiles('#open-history', file);
    await page.locator('[data-testid="history-card"]').waitFor();
    await page.locator('.scrub-marks .scrub-mark').first().waitFor();
    assert.ok(await page.locator('.log.windowed').count(), 'the log is windowed');
    const found = await bothThemes(page, 'long history');
    await page.locator('.scrub-marks .scrub-mark').first().click();
    found.push(...(await bothThemes(page, 'long history, a finding chosen')));
    // Many lanes fold under a filter; opened, the filter and the chips are checked too, on a phone.
    const wide = join(dir, 'wide.jsonl');
    await writeFile(wide, await longHistory(500, 200));
    await page.setViewportSize({ width: 360, height: 780 });
    await page.setInputFiles('#open-history', wide);
    await page.locator('#lane-toggles summary').click();
    await page.fill('#lane-filter', 'w1');
    await page.click('#lanes-only');
    found.push(...(await bothThemes(page, 'a 200-worker history at 360 px, lanes filtered')));
    assert.deepEqual(found, []);
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('every control is reachable by keyboard, named, and shows a focus ring', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker');
  const seen = new Map();
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    const info = await page.evaluate(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return null;
      const style = getComputedStyle(e);
      const label = e.id ? document.querySelector(`label[for="${e.id}"]`) : null;
      const name = (e.getAttribute('aria-label') || label?.textContent || e.closest('label')?.textContent || e.textContent || e.getAttribute('title') || '').trim();
      return { id: e.id || e.tagName, name, ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
    });
    if (!info || seen.has(info.id)) continue;
    seen.set(info.id, info);
  }
  for (const id of ['tab-visualizer', 'case', 'compare-toggle', 'editor-toggle', 'play', 'step-forward', 'scrubber', 'speed', 'copy-link', 'copy-embed', 'export-json', 'import-json', 'export-svg', 'export-history', 'export-mermaid', 'make-rust-test']) {
    assert.ok(seen.has(id), `${id} is reachable by Tab (reached: ${[...seen.keys()].join(', ')})`);
  }
  const unnamed = [...seen.values()].filter((c) => !c.name).map((c) => c.id);
  assert.deepEqual(unnamed, [], 'controls without an accessible name');
  const ringless = [...seen.values()].filter((c) => !c.ring).map((c) => c.id);
  assert.deepEqual(ringless, [], 'controls without a visible focus ring');
  assert.deepEqual(problems, []);
  await page.close();
});

test('with reduced motion, steps are instant (no transitions or animations)', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&step=5');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const moving = await page.evaluate(() =>
    [...document.querySelectorAll('*')].filter((e) => {
      const s = getComputedStyle(e);
      const long = (v) => v.split(',').some((d) => parseFloat(d) > 0.01);
      return long(s.transitionDuration) || (s.animationName !== 'none' && long(s.animationDuration));
    }).length,
  );
  assert.equal(moving, 0);
  assert.deepEqual(problems, []);
  await page.close();
});
