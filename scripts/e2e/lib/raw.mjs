// One raw HTTP request per connection, for tests that need the exact answer of the server (status,
// headers, body) rather than what a client library makes of it.

import http from 'node:http';

/**
 * One request (node:http, a connection of its own): { status, headers (lowercase names), text,
 * json, raw } where raw is the status line, headers and body as one string (to look for secrets).
 * A 200 event stream is not read: its headers are returned and the connection is closed, so that
 * no stream stays open on the server.
 */
export function raw(base, p, { method = 'GET', key, headers = {}, body } = {}) {
  const h = { ...headers };
  if (key !== undefined) h.Authorization = `Bearer ${key}`;
  if (body !== undefined) {
    h['Content-Type'] ??= 'application/json';
    h.Accept ??= 'application/json, text/event-stream';
    h['Content-Length'] = Buffer.byteLength(body);
  }
  const url = new URL(p, base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: h, agent: false }, (res) => {
      const finish = (text) => {
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        const rawText = `${res.statusCode}\n${Object.entries(res.headers).map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${text}`;
        resolve({ status: res.statusCode, headers: res.headers, text, json, raw: rawText });
      };
      if (res.statusCode === 200 && method === 'GET' && String(res.headers['content-type']).startsWith('text/event-stream')) {
        req.destroy();
        finish('');
        return;
      }
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => finish(Buffer.concat(chunks).toString('utf8')));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`timed out: ${method} ${p}`)));
    req.on('error', reject);
    req.end(body);
  });
}

export const show = (res) => `HTTP ${res.status} ${JSON.stringify(res.headers)} ${res.text.slice(0, 500)}`;
