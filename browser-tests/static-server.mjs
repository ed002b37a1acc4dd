// A tiny static file server for the browser tests: serves one folder (dist/) on 127.0.0.1,
// at the root and under extra path prefixes, with the MIME types a wasm page needs.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Starts serving `root` on 127.0.0.1 at a free port.
 * `prefixes` lists the URL paths the folder is mounted at, e.g. ['/', '/docs/deep/fencelab/'];
 * `extra` mounts other folders at their own paths, e.g. { '/fixtures/': 'browser-tests/fixtures' }.
 * `cache` is the Cache-Control header sent (by default `no-store`, so every test sees fresh files;
 * a static host's usual `max-age=600` shows what a reader's browser fetches once).
 * Resolves to { origin, requests, close }; `requests` records [status, path] of every request.
 */
export async function serveStatic(root, prefixes = ['/'], extra = {}, cache = 'no-store') {
  const folders = new Map(prefixes.map((p) => [p, resolve(root)]));
  for (const [prefix, folder] of Object.entries(extra)) folders.set(prefix, resolve(folder));
  const mounts = [...folders.keys()].sort((a, b) => b.length - a.length);
  const requests = [];

  const server = createServer(async (req, res) => {
    const send = (status, body, type = 'text/plain; charset=utf-8') => {
      requests.push([status, req.url]);
      res.writeHead(status, { 'content-type': type, 'cache-control': cache });
      res.end(body);
    };
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed');
      const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
      const mount = mounts.find((m) => path === m || path.startsWith(m.endsWith('/') ? m : `${m}/`));
      if (mount === undefined) return send(404, 'not found');
      const base = folders.get(mount);
      let rel = path.slice(mount.length);
      if (rel === '' || rel.endsWith('/')) rel += 'index.html';
      const file = normalize(join(base, rel));
      if (file !== base && !file.startsWith(base + sep)) return send(403, 'forbidden');
      const info = await stat(file).catch(() => null);
      if (!info || !info.isFile()) return send(404, 'not found');
      const body = await readFile(file);
      send(200, req.method === 'HEAD' ? '' : body, MIME[extname(file)] ?? 'application/octet-stream');
    } catch (err) {
      send(500, String(err));
    }
  });

  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ok);
  });
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections?.();
        server.close(() => ok());
      }),
  };
}
