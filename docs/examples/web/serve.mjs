// A tiny static file server for this folder, so that the example runs with
// nothing but Node: `npm run serve` (PORT=8080 by default). The page talks to
// Switchyard on its own origin, across origins, through CORS.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.map': 'application/json' };

// serve listens on host:port (0: any free port) and resolves to the server.
export function serve({ port = 8080, host = '127.0.0.1' } = {}) {
  const server = http.createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://localhost');
    const file = path.join(root, pathname === '/' ? 'index.html' : path.normalize(pathname));
    const allowed = file === path.join(root, 'index.html') || file.startsWith(path.join(root, 'dist') + path.sep);
    if (!allowed || !(await stat(file).catch(() => null))?.isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serve({ port: Number(process.env.PORT ?? 8080) });
  const { port } = server.address();
  console.log(`example page on http://127.0.0.1:${port}/ (Ctrl-C to stop)`);
}
