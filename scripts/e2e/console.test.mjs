// The admin console (/admin/) in a real headless Chromium, driven by puppeteer-core: no browser is
// downloaded; the test uses Debian's chromium (CHROMIUM_PATH, default /usr/bin/chromium).
//
// The test starts its own agents-mcp (API keys, AGENTS_MCP_LLM=sampling) with one real upstream,
// @modelcontextprotocol/server-everything over streamable HTTP. A TypeScript SDK client plays the
// LLM through sampling (a scripted thought and plan per request) and runs the tasks, as
// agents.test.mjs does. Then, in the browser:
//   1. a key without admin:read signs in and sees a clear refusal;
//   2. the admin key signs in; the Overview shows the upstream ready;
//   3. a task run through the TS client is on the Tasks page; its page draws the plan as SVG, a
//      node per step with the step's tool name and state;
//   4. a running task is cancelled from its page (confirm, then it shows cancelled, and the admin
//      API agrees);
//   4b. a task paused for a confirmation is confirmed from its page and runs to the end;
//   5. learnings are searched by meaning: the finished task's learning is found by other words; an
//      insight is recorded and deleted;
//   6. the Tools page shows what tools/list costs per mode; its search ranks as search_tools does; an upstream is added, refreshed and removed;
//   7. the upstream is killed: the Overview shows it down (no reload), then back ready once it is
//      restarted on the same port; its page, opened then, shows the outage in the state history;
// Every page passes axe-core (WCAG 2.1 A/AA and best practices: labels, contrast, names), and the
// keyboard reaches the navigation from a page's content (Shift+Tab) and opens a page (Enter); a
// plan's step is chosen with Enter. Any page error (an exception) or console error fails the test,
// as does a failed request, except the 401 that test 1 provokes on purpose with a wrong key. On a failure a screenshot of the page is saved under
// CONSOLE_SCREENSHOTS (run.sh points it into its artifacts directory) or a temp directory.
//
// Without chromium the test fails, unless E2E_SKIP_BROWSER=1 says to skip it (CI installs chromium
// through .ci/run, so there it always runs).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, freePort, start, startAgents, stop } from './lib/procs.mjs';

const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const NODE = process.execPath;
const EVERYTHING = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const haveChromium = existsSync(CHROMIUM);
let skip = false;
if (!BIN) skip = 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh';
else if (!haveChromium && process.env.E2E_SKIP_BROWSER === '1') skip = `no chromium at ${CHROMIUM} and E2E_SKIP_BROWSER=1: the console browser test is skipped`;

const RUN = `${process.pid}-${Date.now().toString(36)}`;
const KEYS = { admin: `console-admin-${RUN}-0123456789`, mcp: `console-mcp-${RUN}-0123456789` };
const REQ_DONE = `Echo a cheerful greeting and add two small numbers (console run ${RUN})`;
const REQ_SLOW = `Run the long operation that takes a minute (console run ${RUN})`;
const PLAN_DONE = {
  goal: 'greet and add',
  steps: [
    { id: 'greet', tool: 'everything__echo', arguments: { message: 'hello from the console test' }, dependsOn: [], description: 'say hello' },
    { id: 'add', tool: 'everything__get-sum', arguments: { a: 2, b: 3 }, dependsOn: [], description: 'add 2 and 3' },
    { id: 'again', tool: 'everything__echo', arguments: { message: '{{steps.add.output}}' }, dependsOn: ['greet', 'add'], description: 'echo the sum' },
  ],
};
const PLAN_SLOW = {
  goal: 'a long operation',
  steps: [{ id: 'long', tool: 'everything__trigger-long-running-operation', arguments: { duration: 60, steps: 60 }, dependsOn: [], description: 'a minute of work' }],
};
const REQ_CONFIRM = `Echo a message, but only once I confirm it (console run ${RUN})`;
const PLAN_CONFIRM = {
  goal: 'echo after a confirmation',
  steps: [{ id: 'hello', tool: 'everything__echo', arguments: { message: 'confirmed in the console' }, dependsOn: [], description: 'echo', needsConfirmation: true }],
};
const thought = (tools) => ({
  subGoals: ['do it'], reasoning: 'scripted', approaches: ['one plan'], constraints: [], assumptions: [], uncertainties: [], confidence: 0.9,
  recommendedTools: tools.map((tool) => ({ tool, reason: 'scripted' })),
});
const SCRIPTS = new Map([
  [REQ_DONE, { thought: thought(['everything__echo', 'everything__get-sum']), plan: PLAN_DONE }],
  [REQ_SLOW, { thought: thought(['everything__trigger-long-running-operation']), plan: PLAN_SLOW }],
  [REQ_CONFIRM, { thought: thought(['everything__echo']), plan: PLAN_CONFIRM }],
]);

function scriptedLLM(req) {
  const p = req.params;
  const sys = p.systemPrompt ?? '';
  const first = p.messages?.[0]?.content?.text ?? '';
  const kind = sys.startsWith('You are the thought agent') ? 'thought' : sys.startsWith('You are the planner') ? 'plan' : 'unknown';
  const script = SCRIPTS.get(/^Request: (.*)$/m.exec(first)?.[1]);
  const text = script && kind !== 'unknown' ? JSON.stringify(script[kind]) : 'no script for this request';
  return { model: 'e2e-scripted-llm', role: 'assistant', content: { type: 'text', text }, stopReason: 'endTurn' };
}

async function startEverything(port) {
  const p = start(NODE, [EVERYTHING, 'streamableHttp'], { env: { PORT: String(port) }, name: `server-everything :${port}` });
  await p.waitFor(/listening on port/, 30_000, `server-everything listening on ${port}`);
  return p;
}

async function adminGet(base, p) {
  const res = await fetch(`${base}/admin/v1${p}`, { headers: { Authorization: `Bearer ${KEYS.admin}` } });
  const body = await res.text();
  assert.equal(res.status, 200, `${p}: ${res.status} ${body}`);
  return JSON.parse(body);
}

describe('console: the admin console in headless Chromium', { skip }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-console-'));
  const shots = process.env.CONSOLE_SCREENSHOTS || path.join(work, 'screenshots');
  let everything;
  let everythingPort;
  let agents;
  let client;
  let browser;
  let page;
  let axeSource;
  const problems = []; // page errors, console errors, failed requests
  let allowed = []; // console error texts expected at this moment (the refusal test)
  const ids = {};

  before(
    async () => {
      assert.ok(haveChromium, `no chromium at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium, as .ci/run does), ` +
        'or set E2E_SKIP_BROWSER=1 to skip this test on a machine without it');
      for (let attempt = 1; ; attempt++) {
        everythingPort = await freePort();
        try {
          everything = await startEverything(everythingPort);
          break;
        } catch (err) {
          if (attempt >= 3) throw err;
        }
      }
      const config = {
        auth: {
          api_keys: [
            { name: 'console-admin', key: KEYS.admin, scopes: ['mcp', 'admin:read', 'admin:write'] },
            { name: 'console-mcp', key: KEYS.mcp, scopes: ['mcp'] },
          ],
        },
        upstreams: [{ name: 'everything', transport: 'streamable', url: `http://127.0.0.1:${everythingPort}/mcp`, timeout: '90s', max_backoff: '1s' }],
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      agents = await startAgents(BIN, configPath, path.join(work, 'data'), { env: { AGENTS_MCP_LLM: 'sampling' } });
      await eventually(async () => {
        const ups = await adminGet(agents.base, '/upstreams');
        assert.equal(ups.items[0]?.state, 'ready', JSON.stringify(ups));
      }, 30_000, 'the upstream ready', 200);

      client = newClient({ sampling: true });
      client.setRequestHandler(CreateMessageRequestSchema, async (req) => scriptedLLM(req));
      const transport = new StreamableHTTPClientTransport(new URL(`${agents.base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${KEYS.admin}` } },
      });
      await withTimeout(client.connect(transport), 15_000, 'connect');

      const puppeteer = (await import('puppeteer-core')).default;
      browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      });
      page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      page.on('console', (msg) => {
        if (msg.type() !== 'error') return;
        const text = msg.text();
        if (allowed.some((re) => re.test(text))) return;
        problems.push(`console error: ${text} (${msg.location()?.url ?? ''})`);
      });
      page.on('requestfailed', (req) => {
        // A poll cut short by a navigation is not a failure of the console.
        if (req.failure()?.errorText === 'net::ERR_ABORTED') return;
        problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`);
      });
      axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
    },
    { timeout: 90_000 },
  );

  after(
    async () => {
      await browser?.close();
      await client?.close();
      if (agents && !agents.p.exitInfo()) await stop(agents.p, 'SIGTERM', 15_000);
      if (everything && !everything.exitInfo()) await stop(everything, 'SIGTERM', 5_000);
      rmSync(path.join(work, 'data'), { recursive: true, force: true });
    },
    { timeout: 40_000 },
  );

  // step runs fn; on failure it saves a screenshot and the page's HTML, then fails with the
  // problems seen. After it, no page or console error may have happened.
  async function step(name, fn) {
    try {
      await fn();
      assert.deepEqual(problems, [], 'page or console errors');
    } catch (err) {
      mkdirSync(shots, { recursive: true });
      const file = path.join(shots, `${name.replace(/[^a-z0-9]+/gi, '-')}.png`);
      try {
        await page.screenshot({ path: file, fullPage: true });
        writeFileSync(file.replace(/\.png$/, '.html'), await page.content());
        err.message += `\nscreenshot: ${file}`;
      } catch (shotErr) {
        err.message += `\n(no screenshot: ${shotErr.message})`;
      }
      if (problems.length) err.message += `\nproblems: ${problems.join('\n')}`;
      problems.length = 0;
      throw err;
    }
  }

  const base = () => agents.base;
  const go = async (hash) => {
    await page.evaluate((h) => {
      location.hash = h;
    }, hash);
  };
  const textOf = (sel) => page.$eval(sel, (e) => e.textContent);

  async function axe(what) {
    await page.evaluate(axeSource);
    const result = await page.evaluate(async () => {
      // eslint-disable-next-line no-undef
      const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
      return r.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
    });
    assert.deepEqual(result, [], `axe-core violations on ${what}`);
  }

  async function signIn(key) {
    await page.evaluate(() => sessionStorage.clear());
    await page.goto(`${base()}/admin/`, { waitUntil: 'load' });
    await page.waitForSelector('form.signin input[type=password]');
    await page.type('form.signin input[type=password]', key);
    await page.click('form.signin button[type=submit]');
  }

  test('1. a key without admin:read is refused clearly', { timeout: 30_000 }, () =>
    step('refused', async () => {
      await page.goto(`${base()}/admin/`, { waitUntil: 'load' });
      await page.waitForSelector('form.signin');
      await axe('the sign-in page');
      await signIn(KEYS.mcp);
      await page.waitForSelector('.refusal');
      const text = await textOf('.refusal');
      assert.match(text, /Refused/);
      assert.match(text, /admin:read/);
      assert.equal(await page.$eval('#nav', (n) => n.hidden), true, 'no navigation for a refused key');
      await axe('the refusal');
      // A wrong key: the server's 401 (a console error Chromium logs for the failed fetch) is
      // expected here, and the page says so.
      allowed = [/401 \(Unauthorized\)/];
      await page.click('#signout');
      await signIn('not-a-key');
      await page.waitForSelector('form.signin .error');
      assert.match(await textOf('form.signin .error'), /did not accept/);
      allowed = [];
    }));

  test('2. the admin signs in; the Overview shows the upstream ready', { timeout: 30_000 }, () =>
    step('overview', async () => {
      await signIn(KEYS.admin);
      await page.waitForSelector('#nav:not([hidden])');
      await page.waitForSelector('[data-upstream="everything"] .st-ready');
      assert.match(await textOf('#who'), /console-admin/);
      await page.waitForSelector('#card-tasks');
      await axe('the Overview');
      // Keyboard: a page starts with the focus on its content; Shift+Tab goes back to the
      // navigation, and Enter on a link opens its page.
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
      let reached = '';
      for (let i = 0; i < 12 && reached !== 'Tasks'; i++) {
        await page.keyboard.down('Shift');
        await page.keyboard.press('Tab');
        await page.keyboard.up('Shift');
        reached = await page.evaluate(() => document.activeElement?.textContent);
      }
      assert.equal(reached, 'Tasks', 'Shift+Tab from the content reaches the navigation');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelector('main h1')?.textContent === 'Tasks');
      await go('#/');
    }));

  test('3. a task run through the TS client is on the Tasks page, its plan drawn as SVG', { timeout: 60_000 }, () =>
    step('task-dag', async () => {
      const res = await client.request({ method: 'tools/call', params: { name: 'run_task', arguments: { request: REQ_DONE } } }, CallToolResultSchema, { timeout: 40_000 });
      assert.notEqual(res.isError, true, JSON.stringify(res).slice(0, 1000));
      const task = res.structuredContent.task;
      assert.equal(task.status, 'succeeded', JSON.stringify(task).slice(0, 2000));
      ids.done = task.id;

      await go('#/tasks');
      const linkSel = `a[href="#/tasks/${task.id}"]`;
      await page.waitForSelector(linkSel, { timeout: 10_000 }); // the list polls: no reload needed
      await axe('the Tasks page');
      await page.click(linkSel);
      await page.waitForSelector('svg.dag g.node');
      const nodes = await page.$$eval('svg.dag g.node', (gs) => gs.map((g) => ({ step: g.dataset.step, tool: g.dataset.tool, cls: g.getAttribute('class'), text: g.textContent })));
      assert.equal(nodes.length, PLAN_DONE.steps.length, JSON.stringify(nodes));
      for (const s of PLAN_DONE.steps) {
        const n = nodes.find((x) => x.step === s.id);
        assert.ok(n, `no node for step ${s.id}`);
        assert.equal(n.tool, s.tool);
        assert.ok(n.text.includes(s.tool), `node ${s.id} does not show its tool: ${n.text}`);
        assert.match(n.cls, /st-succeeded/);
      }
      assert.equal(await page.$$eval('svg.dag path.edge', (ps) => ps.length), 2, 'an edge per dependency');
      assert.match(await textOf('ol.timeline'), /step_started/);
      assert.match(await textOf('main'), /The sum of 2 and 3 is 5/);
      // CONSOLE_README_SHOT=docs/console.png: the README's picture of the console.
      if (process.env.CONSOLE_README_SHOT) await page.screenshot({ path: process.env.CONSOLE_README_SHOT });
      // A node chosen with the keyboard selects its row.
      await page.$eval('svg.dag g.node[data-step="add"]', (g) => g.focus());
      await page.keyboard.press('Enter');
      await page.waitForSelector('tr.selected[data-step="add"]');
      await axe('a task page');
    }));

  test('4. a running task is cancelled from its page', { timeout: 60_000 }, () =>
    step('cancel', async () => {
      const res = await client.request({ method: 'tools/call', params: { name: 'run_task', arguments: { request: REQ_SLOW, noWait: true } } }, CallToolResultSchema, { timeout: 40_000 });
      assert.notEqual(res.isError, true, JSON.stringify(res).slice(0, 1000));
      ids.slow = res.structuredContent.task.id;
      await eventually(async () => {
        const t = await adminGet(base(), `/tasks/${ids.slow}`);
        assert.equal(t.steps[0].status, 'running', JSON.stringify(t.steps));
      }, 20_000, 'the long step running', 200);
      await go(`#/tasks/${ids.slow}`);
      await page.waitForSelector('svg.dag g.node.st-running');
      await page.click('#cancel-task');
      await page.waitForSelector('#cancel-task-yes');
      await axe('the cancel confirmation');
      await page.click('#cancel-task-yes');
      await page.waitForFunction(() => document.querySelector('main h1 .badge')?.textContent === 'cancelled', { timeout: 15_000 });
      const t = await adminGet(base(), `/tasks/${ids.slow}`);
      assert.equal(t.status, 'cancelled');
      assert.match(JSON.stringify(t.history), /cancelled by the user/);
    }));

  test('4b. a paused task is confirmed from its page and runs to the end', { timeout: 60_000 }, () =>
    step('resume', async () => {
      // The client cannot be asked (no elicitation): the task pauses for the confirmation.
      const res = await client.request({ method: 'tools/call', params: { name: 'run_task', arguments: { request: REQ_CONFIRM } } }, CallToolResultSchema, { timeout: 40_000 });
      assert.notEqual(res.isError, true, JSON.stringify(res).slice(0, 1000));
      const task = res.structuredContent.task;
      assert.equal(task.status, 'paused', JSON.stringify(task).slice(0, 2000));
      await go(`#/tasks/${task.id}`);
      await page.waitForSelector('svg.dag g.node.st-waiting_confirmation');
      await page.waitForSelector('#confirm-hello');
      await axe('a paused task');
      await page.click('#confirm-hello');
      await page.waitForFunction(() => document.querySelector('main h1 .badge')?.textContent === 'succeeded', { timeout: 15_000 });
      assert.match(await textOf('main'), /confirmed in the console/);
    }));

  test('5. learnings are searched by meaning', { timeout: 40_000 }, () =>
    step('learnings', async () => {
      await go('#/learnings');
      await page.waitForSelector('form[role=search] input[name=q]');
      await axe('the Learnings page');
      // Other words than the request's: "salutation", "arithmetic".
      await page.type('input[name=q]', 'echo greeting and add numbers');
      await eventually(async () => {
        await page.click('form[role=search] button[type=submit]');
        await page.waitForFunction((req) => {
          const t = document.getElementById('learning-results')?.textContent ?? '';
          return t.includes('Ranked by') && t.includes(req);
        }, { timeout: 2_000 }, REQ_DONE);
      }, 20_000, 'the learning of the finished task found', 500);
      assert.match(await textOf('#learning-results'), /Ranked by meaning/);
      assert.match(await textOf('#learning-results'), /everything__echo → /);

      // Insights: record one, see it listed, delete it (with the confirmation).
      const insight = `The console records insights too (${RUN})`;
      await page.type('textarea[name=text]', insight);
      await page.type('input[name=appliesTo]', 'everything__echo');
      await page.click('form[aria-label="Record an insight"] button[type=submit]');
      await page.waitForFunction((t) => document.querySelector('main')?.textContent.includes(t), { timeout: 10_000 }, insight);
      const items = (await adminGet(base(), '/insights')).items.filter((i) => i.text === insight);
      assert.equal(items.length, 1);
      assert.deepEqual(items[0].appliesTo, ['everything__echo']);
      await page.click(`#delete-${items[0].id}`);
      await page.click(`#delete-${items[0].id}-yes`);
      await page.waitForFunction((t) => !document.querySelector('main')?.textContent.includes(t), { timeout: 10_000 }, insight);
      assert.equal((await adminGet(base(), '/insights')).items.filter((i) => i.text === insight).length, 0);
    }));

  test('6. the Tools, Upstreams and Audit pages', { timeout: 40_000 }, () =>
    step('pages', async () => {
      await go('#/tools');
      await page.waitForFunction(() => document.querySelector('main')?.textContent.includes('everything__get-sum'));
      await axe('the Tools page');
      // What tools/list costs per mode, as GET /tools/listing-cost has it, with discovery's saving.
      await page.waitForFunction(() => document.querySelector('#listing-cost table')?.textContent.includes('discovery'), { timeout: 10_000 });
      const costRows = await page.$$eval('#listing-cost table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
      const cost = await adminGet(base(), '/tools/listing-cost');
      const disc = cost.modes.find((m) => m.mode === 'discovery');
      const discRow = costRows.find((r) => r[0] === 'discovery');
      assert.ok(discRow && discRow[3] === String(disc.tokens) && / %$/.test(discRow[4]), JSON.stringify(costRows));
      // The search ranks as search_tools does: the same first tools, in the same order.
      const query = 'add two numbers together';
      await page.type('input[name=q]', query);
      await page.click('form[role=search] button[type=submit]');
      await page.waitForFunction(() => document.getElementById('tool-results')?.textContent.includes('Ranked'));
      const shown = await page.$$eval('#tool-results tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
      const res = await client.request({ method: 'tools/call', params: { name: 'search_tools', arguments: { query, limit: 20 } } }, CallToolResultSchema);
      assert.deepEqual(shown, res.structuredContent.tools.map((t) => t.name));
      assert.equal(shown[0], 'everything__get-sum');
      await go('#/upstreams');
      await page.waitForSelector('a[href="#/upstreams/everything"]');
      await axe('the Upstreams page');
      // Add a second upstream (the same server under another name), refresh it, remove it.
      await page.type('form[aria-label="Add an upstream"] input[name=name]', 'again');
      await page.type('form[aria-label="Add an upstream"] input[name=url]', `http://127.0.0.1:${everythingPort}/mcp`);
      await page.click('form[aria-label="Add an upstream"] button[type=submit]');
      await page.waitForSelector('a[href="#/upstreams/again"]', { timeout: 10_000 });
      await eventually(async () => {
        const u = await adminGet(base(), '/upstreams/again');
        assert.equal(u.state, 'ready', JSON.stringify(u).slice(0, 500));
      }, 20_000, 'the added upstream ready', 200);
      await page.click('button[aria-label="Refresh again"]');
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'Refreshing again', { timeout: 5_000 });
      await page.click('#remove-again');
      await page.click('#remove-again-yes');
      await page.waitForFunction(() => !document.querySelector('a[href="#/upstreams/again"]'), { timeout: 10_000 });
      assert.equal((await adminGet(base(), '/upstreams')).items.some((u) => u.name === 'again'), false);
      await page.click('a[href="#/upstreams/everything"]');
      await page.waitForFunction(() => document.querySelector('main')?.textContent.includes('everything__echo'));
      await axe('an upstream page');
      await go('#/audit');
      await page.waitForFunction(() => document.querySelector('main')?.textContent.includes('/tasks/{id}/cancel'));
      await axe('the Audit page');
    }));

  test('7. an upstream goes down and comes back on the Overview', { timeout: 90_000 }, () =>
    step('upstream-down', async () => {
      await go('#/');
      await page.waitForSelector('[data-upstream="everything"] .st-ready');
      everything.child.kill('SIGKILL');
      await everything.exited;
      await page.waitForSelector('[data-upstream="everything"] .badge:not(.st-ready)', { timeout: 30_000 });
      const state = await textOf('[data-upstream="everything"] .badge');
      assert.match(state, /down|connecting|degraded/);
      everything = await startEverything(everythingPort);
      await page.waitForSelector('[data-upstream="everything"] .st-ready', { timeout: 45_000 });
      // The upstream's page, opened only now, shows the outage: the history comes from the server.
      await go('#/upstreams/everything');
      await page.waitForSelector('#h-state-history ~ div ol.timeline li:last-child .st-ready');
      const states = await page.$$eval('#h-state-history ~ div ol.timeline li .badge', (bs) => bs.map((b) => b.textContent));
      assert.equal(states[0], 'connecting');
      assert.ok(states.slice(2, -1).some((s) => s !== 'ready'), `history ${states} shows no outage`);
    }));
});
