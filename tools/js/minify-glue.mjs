// Trunk post_build hook, release builds only: minifies wasm-bindgen's JS glue (and the scripts the
// build copies for other pages) and rewrites the integrity hash Trunk put on the glue's <link>,
// so the browser still accepts the file. Trunk's built-in
// JS minifier fails on the glue's `export { ... as default }` and leaves it whole; terser handles
// it. Without terser installed (`bash scripts/setup.sh` installs it) the glue stays unminified.
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);
const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error('minify-glue: TRUNK_STAGING_DIR is not set; run it as a Trunk hook');
  process.exit(1);
}
const fail = (message) => {
  console.error(`minify-glue: ${message}`);
  process.exit(1);
};

let minify;
try {
  ({ minify } = await import('terser'));
} catch {
  console.warn('minify-glue: terser is not installed (bash scripts/setup.sh); JS left unminified');
}

const htmlPath = join(staging, 'index.html');
let html = await readFile(htmlPath, 'utf8');
const escape = (text) => text.replace(/[.]/g, '\\.');
// Scripts the page build copies for other pages to load (index.html names them in a copy-file
// link, so nothing checks their integrity): classic scripts, minified as such.
const COPIED = new Set(['fencelab-player.js']);

for (const name of (await readdir(staging)).filter((f) => f.endsWith('.js'))) {
  const path = join(staging, name);
  const source = await readFile(path, 'utf8');
  if (!minify) continue;
  if (COPIED.has(name)) {
    const { code } = await minify(source, { compress: true, mangle: true });
    await writeFile(path, code);
    console.log(`minify-glue: ${name} ${source.length} -> ${code.length} bytes`);
    continue;
  }
  // Module scope: top-level names are private to the glue, so they can be renamed too.
  const { code } = await minify(source, { module: true, compress: true, mangle: true });
  await writeFile(path, code);
  console.log(`minify-glue: ${name} ${source.length} -> ${code.length} bytes`);
  // Trunk writes `href=./NAME integrity=sha384-...` (quoted or not, depending on minification).
  const link = new RegExp(`(href="?\\./${escape(name)}"? integrity="?)sha384-[A-Za-z0-9+/=]+`);
  if (!link.test(html)) fail(`no integrity attribute for ${name} in index.html`);
  const digest = createHash('sha384').update(code).digest('base64');
  html = html.replace(link, `$1sha384-${digest}`);
}

// Browsers ignore `integrity` on a preload they fetch as bytes, and say so in the console of
// every page that embeds a player; the module's own fetch is what runs it.
html = html.replace(/(<link [^>]*\.wasm[^>]*?) integrity="?sha384-[A-Za-z0-9+/=]+"?/, '$1');

await writeFile(htmlPath, html);
