// The memory tools over every transport, with the official TypeScript SDK client, against the
// main server (embedded SQLite store and vector index under its data dir).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { TRANSPORTS, open, withTimeout } from './lib/harness.mjs';

const MEMORY_TOOLS = ['query_memory', 'store_insight', 'get_similar_tasks', 'get_successful_plans', 'get_tool_performance'];

for (const def of TRANSPORTS) {
  describe(`memory tools over ${def.name}`, () => {
    let s;
    before(async () => {
      s = await open(def);
    });
    after(async () => {
      await s?.close();
    });
    const call = (name, args) => withTimeout(s.client.callTool({ name, arguments: args }), 20_000, `call ${name}`);

    test('are listed with precise input schemas', async () => {
      const { tools } = await s.client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const name of MEMORY_TOOLS) {
        const t = byName.get(name);
        assert.ok(t, `${name} is listed`);
        assert.equal(t.inputSchema.type, 'object');
        assert.equal(t.inputSchema.additionalProperties, false, `${name} rejects unknown arguments`);
      }
      assert.deepEqual(byName.get('query_memory').inputSchema.required, ['query']);
      assert.equal(byName.get('query_memory').inputSchema.properties.limit.maximum, 50);
      assert.equal(byName.get('store_insight').annotations?.readOnlyHint ?? false, false);
      assert.equal(byName.get('get_tool_performance').annotations?.readOnlyHint, true);
    });

    test('store_insight is found again by query_memory', async () => {
      const marker = `${def.key}-${Date.now()}`;
      const stored = await call('store_insight', {
        text: `cache the upstream tool list for ${marker} instead of listing on every call`,
        type: 'best_practice',
        confidence: 0.9,
      });
      assert.equal(stored.isError, undefined, JSON.stringify(stored));
      const insight = stored.structuredContent.insight;
      assert.equal(insight.type, 'best_practice');
      assert.equal(insight.confidence, 0.9);
      const deadline = Date.now() + 10_000;
      for (;;) {
        const res = await call('query_memory', { query: `upstream tool list cache ${marker}`, kinds: ['insights'], limit: 3 });
        if (res.structuredContent.items[0]?.id === insight.id) {
          assert.equal(res.structuredContent.mode, 'semantic');
          break;
        }
        assert.ok(Date.now() < deadline, `not found: ${JSON.stringify(res.structuredContent)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    });

    test('bad arguments are tool errors naming the problem', async () => {
      for (const [name, args, want] of [
        ['query_memory', {}, /query/],
        ['query_memory', { query: 'x', limit: 1000 }, /limit/],
        ['store_insight', { text: 'x', confidence: 7 }, /confidence/],
        ['store_insight', { text: 'é'.repeat(9000) }, /16384/],
        ['get_tool_performance', { cursor: 'nope' }, /cursor/],
      ]) {
        const res = await call(name, args);
        assert.equal(res.isError, true, `${name} ${JSON.stringify(args).slice(0, 80)}: ${JSON.stringify(res).slice(0, 300)}`);
        assert.match(res.content[0].text, want);
      }
    });

    test('read tools answer with well-formed pages on an unknown subject', async () => {
      const tasks = await call('get_similar_tasks', { query: 'something never done before' });
      assert.ok(Array.isArray(tasks.structuredContent.tasks));
      // Recall is semantic and this server is shared with the other test files, whose tasks leave
      // patterns: an unknown goal may rank them (low), but never one of its own, and only successful ones.
      const plans = await call('get_successful_plans', { goal: 'a goal never planned' });
      assert.ok(Array.isArray(plans.structuredContent.plans), JSON.stringify(plans).slice(0, 500));
      for (const p of plans.structuredContent.plans) {
        assert.ok(!/never planned/.test(p.pattern.goal) && p.successRate >= 0.5 && p.pattern.steps.length > 0, JSON.stringify(p));
      }
      const perf = await call('get_tool_performance', { tool: 'never__called' });
      assert.deepEqual(perf.structuredContent.tools, []);
    });
  });
}
