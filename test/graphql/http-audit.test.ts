import { serverAudits, type AuditResult } from 'graphql-http';
import { startTestGateway, type TestGateway } from '../support/gateway';

/**
 * graphql-http's GraphQL-over-HTTP server audits against the live server, with the API key added to
 * every request. Every MUST passes. The SHOULD audits that do not pass are the documented deviations
 * (README.md, "GraphQL over HTTP compliance"): this list changes only together with that section.
 */
const SHOULD_DEVIATIONS = [
  // The issue and api.md want 400-class answers for these; the spec's legacy application/json
  // rule asks for 200. With `accept: application/graphql-response+json` they are 400, as the spec says.
  'SHOULD use 200 status code on document parsing failure when accepting application/json',
  'SHOULD use 200 status code on document validation failure when accepting application/json',
  'SHOULD use a status code of 200 on variable coercion failure when accepting application/json',
];

let gw: TestGateway;
let results: AuditResult[];

beforeAll(async () => {
  gw = await startTestGateway();
  const fetchFn = (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('x-gateway-api-key', gw.key);
    return fetch(input, { ...init, headers });
  };
  results = [];
  for (const audit of serverAudits({ url: `${gw.url}/graphql`, fetchFn })) results.push(await audit.fn());
});
afterAll(() => gw.stop());

const level = (result: AuditResult) => result.name.split(' ')[0];
const describeFailure = (result: AuditResult) => (result.status === 'ok' ? result.name : `${result.name}: ${result.reason}`);

describe('GraphQL over HTTP (graphql-http server audits)', () => {
  it('passes every MUST audit (13/13)', () => {
    const must = results.filter((r) => level(r) === 'MUST');
    expect(must).toHaveLength(13);
    expect(must.filter((r) => r.status !== 'ok').map(describeFailure)).toEqual([]);
  });

  it('passes every SHOULD audit but the documented deviations', () => {
    const should = results.filter((r) => level(r) === 'SHOULD');
    expect(should.filter((r) => r.status !== 'ok').map((r) => r.name)).toEqual(SHOULD_DEVIATIONS);
    expect(should.length - SHOULD_DEVIATIONS.length).toBe(20);
  });
});
