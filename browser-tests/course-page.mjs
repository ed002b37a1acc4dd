// A course-notes page with eight players, made the way a docs author on any static site
// generator makes one: each <fencelab-player> holds the still `fencelab render` prints for its
// story, and the page loads the element's script from the page build. The stills test and the
// throttled-link bench both serve it.
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The stories on the page: [story, variant, step or null for the story's key step]. */
export const STORIES = [
  ['paused-worker', 'broken', 19],
  ['paused-worker', 'fenced', null],
  ['fresh-register', 'fenced', null],
  ['payment-capture', 'broken', null],
  ['secondary-path', 'broken', null],
  ['wall-clock-tokens', 'broken', null],
  ['forged-token', 'unauthenticated', null],
  ['store-restart', 'broken', null],
];

/** What `fencelab render` prints, run from the workspace (built by `cargo test` before). */
export function render(args) {
  return execFileSync('cargo', ['run', '--quiet', '-p', 'fencelab-cli', '--', 'render', ...args], { cwd: ROOT, encoding: 'utf8' });
}

/** The page's HTML: each player holds its still (with a link to the same view) or, with
 * `stills` false, nothing, as players were written before stills. */
export function coursePage({ stills = true } = {}) {
  const players = STORIES.map(([story, variant, step], i) => {
    const view = `scenario=${story}&variant=${variant}${step ? `&step=${step}` : ''}&embed=controls,caption`;
    const still = stills
      ? render([`${story}/${variant}`, ...(step ? ['--step', String(step)] : []), '--link', `fencelab/index.html#${view}`])
      : '';
    return `<h2>Part ${i + 1}</h2>\n<p>What to watch for in ${story} (${variant}), in a paragraph of the notes.</p>\n`
      + `<fencelab-player id="p${i}" story="${story}" variant="${variant}"${step ? ` step="${step}"` : ''}>${still}</fencelab-player>\n`;
  });
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Course notes with eight players</title><link rel="icon" href="data:,"></head>
<body style="margin:0 auto;max-width:760px;padding:0 12px;font:16px system-ui">
<main>
<h1>Course notes with eight players</h1>
<p>Fencing tokens, one story at a time.</p>
${players.join('')}
<p>The end of the notes.</p>
</main>
<script src="fencelab/fencelab-player.js"></script>
</body>
</html>`;
}

/** Stills of three colour schemes side by side, on a page in mdBook's dark Coal theme. */
export function themesPage() {
  const still = (theme) => render(['paused-worker/broken', '--theme', theme]);
  return `<!doctype html>
<html lang="en" class="coal">
<head><meta charset="utf-8"><title>Stills in three schemes</title><link rel="icon" href="data:,"></head>
<body>
<div id="light">${still('light')}</div>
<div id="dark">${still('dark')}</div>
<div id="book">${still('book')}</div>
</body>
</html>`;
}

/** Writes the page (and, beside it, the same page without stills, and the themes page) to a
 * new folder. */
export async function writeCourse() {
  const site = await mkdtemp(join(tmpdir(), 'fencelab-course-'));
  await writeFile(join(site, 'index.html'), coursePage());
  await writeFile(join(site, 'bare.html'), coursePage({ stills: false }));
  await writeFile(join(site, 'themes.html'), themesPage());
  return site;
}
