// A person's web browser, by plain HTTP, for the OAuth tests: a cookie jar of its own (one Browser is
// one person), redirects followed one by one, forms read from pages and submitted. It follows an
// authorization link as a person does: agents-mcp's page asks to confirm, the authorization server
// asks to sign in and consent (oidc-provider's development pages), and the browser comes back to
// agents-mcp's /oauth/callback.

import http from 'node:http';
import https from 'node:https';

/** One HTTP(S) request without redirects; `ca` trusts a test certificate. */
export function request(url, { method = 'GET', headers = {}, body, ca } = {}) {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(u, { method, headers, ca, timeout: 15_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString(), url }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timeout`)));
    req.on('error', reject);
    req.end(body);
  });
}

export const unescapeHTML = (s) => s.replace(/&#34;/g, '"').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The first POST form of an HTML page: its action (absolute) and fields, or null. */
export function formOf(page) {
  const form = page.body.match(/<form[^>]*action="([^"]*)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/);
  if (!form) return null;
  const fields = new URLSearchParams();
  for (const m of form[2].matchAll(/<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?[^>]*>/g)) fields.set(m[1], unescapeHTML(m[2] ?? ''));
  return { action: new URL(unescapeHTML(form[1]), page.url).href, fields };
}

export class Browser {
  /** @param {{ca?: Buffer}} options a certificate to trust (a TLS proxy's) */
  constructor({ ca } = {}) {
    this.ca = ca;
    this.jar = new Map(); // `${host} ${path} ${name}` → {host, path, name, value}
  }

  cookieHeader(url) {
    const u = new URL(url);
    const pairs = [];
    for (const c of this.jar.values()) {
      if (c.host === u.hostname && u.pathname.startsWith(c.path) && (!c.secure || u.protocol === 'https:')) pairs.push(`${c.name}=${c.value}`);
    }
    return pairs.join('; ');
  }

  store(url, setCookies = []) {
    const u = new URL(url);
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const i = pair.indexOf('=');
      const c = { host: u.hostname, path: '/', name: pair.slice(0, i), value: pair.slice(i + 1), secure: false };
      let expired = false;
      for (const a of attrs) {
        const [k, v = ''] = a.split('=');
        if (/^path$/i.test(k)) c.path = v || '/';
        if (/^secure$/i.test(k)) c.secure = true;
        if (/^max-age$/i.test(k) && Number(v) <= 0) expired = true;
      }
      const key = `${c.host} ${c.path} ${c.name}`;
      if (expired) this.jar.delete(key);
      else this.jar.set(key, c);
    }
  }

  /** One request, as this browser: its cookies sent, the answer's kept; no redirect followed. */
  async fetch(url, { method = 'GET', form, headers = {} } = {}) {
    const h = { ...headers };
    const cookies = this.cookieHeader(url);
    if (cookies) h.Cookie = cookies;
    let body;
    if (form) {
      body = form.toString();
      h['Content-Type'] = 'application/x-www-form-urlencoded';
      h.Origin ??= new URL(url).origin; // what a browser sends with a form
    }
    const res = await request(url, { method, headers: h, body, ca: this.ca });
    this.store(url, res.headers['set-cookie']);
    return res;
  }

  /** GET url and follow the redirects; the last page. */
  async get(url) {
    let u = url;
    for (let i = 0; i < 20; i++) {
      const res = await this.fetch(u);
      if (res.status < 300 || res.status >= 400) return res;
      u = new URL(res.headers.location, u).href;
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /**
   * Open an authorization link as the person who asked for it: on agents-mcp's pages (under
   * `agentsBase`), follow the redirects and confirm where a page asks, until the browser is sent
   * elsewhere; return that URL, the authorization server's (the address one could copy and send
   * on). A link that does not lead to agents-mcp is returned as it is.
   */
  async start(link, agentsBase) {
    let u = link;
    for (let i = 0; i < 10; i++) {
      if (!u.startsWith(`${agentsBase}/`)) return u;
      let res = await this.fetch(u);
      if (res.status === 200) {
        const form = formOf(res);
        if (!form) throw new Error(`the link's page at ${u} asks nothing: ${res.body.slice(0, 500)}`);
        res = await this.fetch(form.action, { method: 'POST', form: form.fields });
        u = form.action;
      }
      if (res.status < 300 || res.status >= 400) throw new Error(`${u}: ${res.status} ${res.body.slice(0, 500)}`);
      u = new URL(res.headers.location, u).href;
    }
    throw new Error(`the link ${link} did not leave ${agentsBase}`);
  }

  /**
   * At the authorization server: follow the redirects, sign in as `login` on a login page and
   * accept on a consent page, until the browser is back at agents-mcp's callback (under
   * `agentsBase`). Returns that page and the prompts of the forms submitted.
   */
  async signIn(url, login, agentsBase) {
    let u = url;
    let method = 'GET';
    let form;
    const prompts = [];
    for (let i = 0; i < 20; i++) {
      const res = await this.fetch(u, { method, form });
      if (u.startsWith(`${agentsBase}/oauth/callback`)) return { ...res, prompts };
      if (res.status >= 300 && res.status < 400) {
        u = new URL(res.headers.location, u).href;
        method = 'GET';
        form = undefined;
        continue;
      }
      const f = res.status === 200 && formOf(res);
      if (!f) throw new Error(`${u}: ${res.status} ${res.body.slice(0, 500)}`);
      if (f.fields.has('login')) {
        f.fields.set('login', login);
        f.fields.set('password', 'any');
      }
      prompts.push(f.fields.get('prompt'));
      u = f.action;
      method = 'POST';
      form = f.fields;
    }
    throw new Error(`the sign-in at ${url} did not come back to ${agentsBase}/oauth/callback`);
  }

  /** Follow an authorization link to its end as the person who asked for it, signing in as `login`. */
  async authorize(link, login, agentsBase) {
    return this.signIn(await this.start(link, agentsBase), login, agentsBase);
  }
}
