/**
 * OpenAI's Usage and Costs APIs and the request log over the ledger (issue 26 §2-3): chat calls made
 * with the openai SDK by two workspaces' keys, then read back with exact token sums per model and
 * key, each workspace key seeing only its own calls and the organisation key all of them; bucket
 * edges (start inclusive, end exclusive, a row on a boundary in the later bucket), paging by
 * `next_page`; costs priced from GATEWAY_PRICES_FILE with unpriced models unknown, never 0; GraphQL.
 * Every answer is validated against OpenAI's UsageResponse (test/support/answers.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { tempDir } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { api, gql } from '../support/gateway';
import { ledgerRows, startUsageGateway, workspaceWithKey, type UsageGateway } from './harness';
import type { UsageRow } from '../../src/modules/usage/usage.model';

let env: UsageGateway;
let prices: { dir: string; remove(): Promise<void> };
let teams: { workspaceId: string; key: string; keyId: string }[];
const sent: { key: string; model: string; usage: OpenAI.CompletionUsage }[] = [];

beforeAll(async () => {
  prices = await tempDir('gw-prices-');
  const file = join(prices.dir, 'prices.json');
  writeFileSync(file, JSON.stringify({ currency: 'usd', models: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } } }));
  env = await startUsageGateway({ GATEWAY_PRICES_FILE: file });
  teams = [await workspaceWithKey(env.gw, 'usage-a'), await workspaceWithKey(env.gw, 'usage-b')];
  const calls = [
    { team: 0, model: 'gpt-4o-mini', content: 'first question from team a' },
    { team: 0, model: 'gpt-4o-mini', content: 'second' },
    { team: 0, model: 'gpt-4o', content: 'third, to another model' },
    { team: 1, model: 'gpt-4o-mini', content: 'team b asks something longer than the others do' },
  ];
  for (const call of calls) {
    const { key } = teams[call.team];
    const client = gatewaySdk({ url: env.gw.url, key }, { apiKey: env.providerKey, headers: { 'x-gateway-provider': 'openai' } });
    const completion = await client.chat.completions.create({ model: call.model, messages: [{ role: 'user', content: call.content }] });
    sent.push({ key, model: call.model, usage: completion.usage as OpenAI.CompletionUsage });
  }
  await ledgerRows(env.gw);
});

afterAll(async () => {
  await env.stop();
  await prices.remove();
});

const dayStart = () => Math.floor(Date.now() / 86_400_000) * 86_400;
const sums = (of: typeof sent) => ({
  input_tokens: of.reduce((n, c) => n + c.usage.prompt_tokens, 0),
  output_tokens: of.reduce((n, c) => n + c.usage.completion_tokens, 0),
  num_model_requests: of.length,
});

/** The SDK's own generic GET, as a caller of these endpoints would use it (`group_by[]=…` arrays). */
const usageSdk = (key: string) => gatewaySdk({ url: env.gw.url, key });
const getUsage = (key: string, query: Record<string, unknown>) => usageSdk(key).get<any>('/organization/usage/completions', { query });

describe('GET /v1/organization/usage/completions', () => {
  it('answers exact token sums per model and key to the organisation key', async () => {
    const page = await getUsage(env.gw.key, { start_time: dayStart(), bucket_width: '1d', group_by: ['model', 'api_key_id'] });
    expect(page).toMatchObject({ object: 'page', has_more: false, next_page: null });
    expect(page.data).toHaveLength(1);
    const results = page.data[0].results;
    expect(results).toHaveLength(3);
    for (const team of teams) {
      for (const model of ['gpt-4o-mini', 'gpt-4o']) {
        const calls = sent.filter((c) => c.key === team.key && c.model === model);
        const result = results.find((r: any) => r.api_key_id === team.keyId && r.model === model);
        if (!calls.length) expect(result).toBeUndefined();
        else expect(result).toMatchObject({ ...sums(calls), project_id: null, batch: null });
      }
    }
  });

  it('shows a workspace key only its own workspace', async () => {
    for (const team of teams) {
      const res = await api(env.gw, 'GET', `/v1/organization/usage/completions?start_time=${dayStart()}&group_by=model,api_key_id,project_id`, {
        key: team.key,
      });
      expect(res.status).toBe(200);
      const results = res.body.data[0].results;
      expect(new Set(results.map((r: any) => r.project_id))).toEqual(new Set([team.workspaceId]));
      expect(new Set(results.map((r: any) => r.api_key_id))).toEqual(new Set([team.keyId]));
      const total = results.reduce((n: number, r: any) => n + r.input_tokens, 0);
      expect(total).toBe(sums(sent.filter((c) => c.key === team.key)).input_tokens);
    }
    // Asking for the other workspace by id changes nothing: the key's scope comes first.
    const other = await api(env.gw, 'GET', `/v1/organization/usage/completions?start_time=${dayStart()}&project_ids=${teams[1].workspaceId}`, {
      key: teams[0].key,
    });
    expect(other.body.data[0].results).toEqual([]);
  });

  it('puts a row on a bucket boundary in the later bucket, and leaves out the end', async () => {
    const base = 1_700_000_000 - (1_700_000_000 % 3600);
    const row = (seconds: number, tokens: number): UsageRow => ({
      time: new Date(seconds * 1000),
      organisationId: '',
      workspaceId: teams[0].workspaceId,
      apiKeyId: teams[0].keyId,
      operation: 'chat',
      provider: 'openai',
      integration: null,
      model: 'edge-model',
      baseModel: null,
      inputTokens: tokens,
      cachedTokens: 0,
      outputTokens: 1,
      latencyMs: 1,
      ttftMs: null,
      status: 200,
      mode: 'client',
      streamed: false,
      batch: false,
      requestId: null,
    });
    const [{ organisationId }] = await ledgerRows(env.gw);
    const rows = [row(base, 1), row(base + 3599, 2), row(base + 3600, 4), row(base + 7199, 8), row(base + 7200, 16)].map((r) => ({ ...r, organisationId }));
    await env.gw.gateway.services.db.prisma.usageRecord.createMany({ data: rows });
    const page = await getUsage(teams[0].key, { start_time: base, end_time: base + 7200, bucket_width: '1h', models: ['edge-model'] });
    expect(page.data.map((b: any) => [b.start_time, b.end_time, b.results.map((r: any) => r.input_tokens)])).toEqual([
      [base, base + 3600, [3]],
      [base + 3600, base + 7200, [12]],
    ]);
    // Minute buckets, one per page: has_more and next_page walk the range.
    const seen: number[] = [];
    let next: string | null = null;
    do {
      const query: Record<string, unknown> = { start_time: base + 3540, end_time: base + 3720, bucket_width: '1m', limit: 1, models: ['edge-model'] };
      if (next) query.page = next;
      const minute = await getUsage(teams[0].key, query);
      expect(minute.data).toHaveLength(1);
      seen.push(minute.data[0].results[0]?.input_tokens ?? 0);
      next = minute.next_page;
      expect(minute.has_more).toBe(next !== null);
    } while (next);
    expect(seen).toEqual([2, 4, 0]);
  });

  it('refuses what it cannot answer with 400s naming the parameter', async () => {
    const bad = async (query: string, param: string) => {
      const res = await api(env.gw, 'GET', `/v1/organization/usage/completions?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(param);
    };
    await bad('bucket_width=1d', 'start_time');
    await bad(`start_time=${dayStart()}&group_by=user_id`, 'group_by.0');
    await bad(`start_time=${dayStart()}&bucket_width=2d`, 'bucket_width');
    await bad(`start_time=${dayStart()}&end_time=${dayStart()}`, 'end_time');
    await bad(`start_time=${dayStart()}&page=page_1`, 'page');
    await bad(`start_time=${dayStart()}&limit=32`, 'limit');
    await bad(`start_time=${dayStart()}&colour=red`, 'colour');
  });
});

describe('GET /v1/organization/costs', () => {
  it('prices known models and reports unpriced tokens without an amount', async () => {
    const page = await usageSdk(env.gw.key).get<any>('/organization/costs', { query: { start_time: dayStart(), group_by: ['project_id'] } });
    const results = page.data[0].results;
    const mini = sent.filter((c) => c.model === 'gpt-4o-mini' && c.key === teams[0].key);
    const priced = results.find((r: any) => r.amount && r.project_id === teams[0].workspaceId);
    const expected = (sums(mini).input_tokens * 0.15 + sums(mini).output_tokens * 0.6) / 1_000_000;
    expect(priced.amount.currency).toBe('usd');
    expect(priced.amount.value).toBeCloseTo(expected, 12);
    const unpriced = results.filter((r: any) => !r.amount);
    expect(unpriced.map((r: any) => r.line_item).sort()).toEqual(['gpt-4o, input', 'gpt-4o, output']);
    expect(unpriced.find((r: any) => r.line_item === 'gpt-4o, input').quantity).toBe(sent.find((c) => c.model === 'gpt-4o')?.usage.prompt_tokens);
  });
});

describe('GET /v1/logs', () => {
  it('lists calls newest first with filters and cursor paging, without bodies', async () => {
    const all = await api(env.gw, 'GET', '/v1/logs?model=gpt-4o-mini&limit=2');
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(2);
    expect(all.body.has_more).toBe(true);
    const rest = await api(env.gw, 'GET', `/v1/logs?model=gpt-4o-mini&after=${all.body.last_id}`);
    expect(rest.body.data).toHaveLength(1);
    expect(rest.body.has_more).toBe(false);
    const entries = [...all.body.data, ...rest.body.data];
    expect(entries.map((e: any) => e.input_tokens)).toEqual(
      sent
        .filter((c) => c.model === 'gpt-4o-mini')
        .reverse()
        .map((c) => c.usage.prompt_tokens),
    );
    expect(JSON.stringify(entries)).not.toContain('question');
    const own = await api(env.gw, 'GET', '/v1/logs?status=success', { key: teams[1].key });
    expect(own.body.data.map((e: any) => e.workspace_id)).toEqual([teams[1].workspaceId]);
    const byKey = await api(env.gw, 'GET', `/v1/logs?api_key_id=${teams[0].keyId}&status=200`);
    expect(byKey.body.data.every((e: any) => e.api_key_id === teams[0].keyId && e.status === 200)).toBe(true);
    expect((await api(env.gw, 'GET', '/v1/logs?status=error')).body.data).toEqual([]);
  });
});

describe('GraphQL', () => {
  it('answers usage and logs in the caller’s scope', async () => {
    const res = await gql(
      { url: env.gw.url, key: teams[1].key },
      `query($start: Int!) {
        usage(startTime: $start, groupBy: [MODEL]) { buckets { startTime results { model inputTokens outputTokens requests } } hasMore }
        logs(limit: 5) { entries { model status inputTokens } hasMore }
      }`,
      { start: dayStart() },
    );
    expect(res.body.errors).toBeUndefined();
    const mine = sums(sent.filter((c) => c.key === teams[1].key));
    expect(res.body.data.usage.buckets[0].results).toEqual([
      { model: 'gpt-4o-mini', inputTokens: mine.input_tokens, outputTokens: mine.output_tokens, requests: 1 },
    ]);
    expect(res.body.data.logs.entries).toHaveLength(1);
  });
});
