// Process helpers for e2e tests that start their own servers: free ports, spawned processes whose
// output can be awaited, polling, /readyz, and the /proc view of a process tree (Linux).
//
// Every process started with `start` is remembered and killed with SIGKILL when the test process
// exits, as a last resort; tests still stop what they started in their `after` hooks.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

import { withTimeout } from './harness.mjs';

const live = new Set();
process.on('exit', () => {
  for (const p of live) {
    try {
      p.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const MAX_OUTPUT = 16 * 1024 * 1024;

/**
 * Spawns a process and collects its stdout and stderr together (the last 16 MiB).
 * `waitFor(re, ms, what)` resolves with the first match in the output seen so far or to come, and
 * rejects early if the process exits first. `env` is added to `baseEnv` (default process.env).
 */
export function start(cmd, args, { env = {}, baseEnv = process.env, name = cmd, cwd } = {}) {
  const child = spawn(cmd, args, { env: { ...baseEnv, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let exit;
  const waiters = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = out.match(w.re);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      } else if (exit) {
        waiters.splice(waiters.indexOf(w), 1);
        w.reject(new Error(`${name} exited (${JSON.stringify(exit)}) before printing ${w.re}; output:\n${out.slice(-3000)}`));
      }
    }
  };
  const onData = (d) => {
    out += d.toString();
    if (out.length > MAX_OUTPUT) out = out.slice(out.indexOf('\n', out.length - MAX_OUTPUT / 2) + 1);
    if (waiters.length) check();
  };
  const output = () => out;
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const p = {
    name,
    child,
    pid: child.pid,
    output,
    exitInfo: () => exit,
    exited: null,
    waitFor: (re, ms, what) =>
      withTimeout(
        new Promise((resolve, reject) => {
          waiters.push({ re, resolve, reject });
          check();
        }),
        ms,
        what ?? `${name}: ${re}`,
      ),
  };
  p.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      live.delete(p);
      // stdio may still hold data; settle waiters once it is drained too.
      setImmediate(check);
      resolve(exit);
    });
    child.on('error', (err) => {
      exit = { code: null, signal: null, error: err.message };
      live.delete(p);
      check();
      resolve(exit);
    });
  });
  live.add(p);
  return p;
}

/** Sends sig (if the process still runs) and waits up to ms for it to exit; SIGKILL after that. */
export async function stop(p, sig = 'SIGTERM', ms = 10_000) {
  if (!p || p.exitInfo()) return p?.exitInfo();
  try {
    p.child.kill(sig);
  } catch {
    /* gone */
  }
  try {
    return await withTimeout(p.exited, ms, `${p.name} exit after ${sig}`);
  } catch {
    p.child.kill('SIGKILL');
    return p.exited;
  }
}

/** Polls fn until it resolves without throwing; throws the last error after ms. */
export async function eventually(fn, ms, what, every = 100) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms: ${last?.message ?? last}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * GET base/readyz: { status, body }. With keys configured the checks are shown only to a key with
 * scope admin:read (key); without one the body is the status alone.
 */
export async function readyz(base, key) {
  const headers = key === undefined ? {} : { Authorization: `Bearer ${key}` };
  const res = await fetch(`${base}/readyz`, { headers, signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.json() };
}

// ---------------------------------------------------------------------------------------------
// /proc (Linux)

/**
 * /proc/PID/stat of a process: { pid, state, ppid, pgid, starttime, comm }, or undefined if there
 * is no such process. state is one letter: R, S, D, Z (zombie), …
 */
export function procStat(pid) {
  let s;
  try {
    s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm is in parentheses and may contain spaces or parentheses: split after the last ')'.
  const close = s.lastIndexOf(')');
  const comm = s.slice(s.indexOf('(') + 1, close);
  const f = s.slice(close + 2).split(' ');
  // f[0] is field 3 (state); field N is f[N-3].
  return { pid, comm, state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), starttime: f[19] };
}

/** The command line of a process, or '' if it is gone. */
export function procArgs(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/** Every live process whose ancestors include root (not root itself), with its args. */
export function descendants(root) {
  const all = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st) all.push(st);
  }
  const out = [];
  let frontier = [root];
  while (frontier.length) {
    const kids = all.filter((s) => frontier.includes(s.ppid));
    for (const k of kids) out.push({ ...k, args: procArgs(k.pid) });
    frontier = kids.map((k) => k.pid);
  }
  return out;
}

/** Whether the process recorded in st (from procStat) still exists, zombie or not. */
export function stillExists(st) {
  const now = procStat(st.pid);
  return Boolean(now && now.starttime === st.starttime);
}

/** The environment for an agents-mcp of a test's own, without settings of the caller that would change it. */
export function hermeticEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(AGENTS_MCP_|MONGODB_|PINECONE_|OPENAI_|EMBEDDINGS_)/.test(k)) env[k] = v;
  }
  return env;
}

/**
 * Starts `bin serve --config configPath --data-dir dataDir` on a free loopback port (another one when
 * that port was taken meanwhile, up to 3 times) in the hermetic environment plus `env`, and waits
 * until it serves. Returns { p, base }.
 */
export async function startAgents(bin, configPath, dataDir, { env = {}, readyMs = 60_000 } = {}) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const p = start(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--config', configPath, '--data-dir', dataDir], {
      name: 'agents-mcp',
      baseEnv: hermeticEnv(),
      env,
    });
    try {
      await p.waitFor(/"msg":"serving"/, readyMs, 'agents-mcp serving');
      return { p, base: `http://127.0.0.1:${port}` };
    } catch (err) {
      await stop(p, 'SIGKILL');
      if (attempt >= 3 || !/address already in use/.test(p.output())) {
        err.message += `\n--- agents-mcp output ---\n${p.output().slice(-4000)}`;
        throw err;
      }
    }
  }
}
