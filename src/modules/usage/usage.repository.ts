import { copyText, type Database, type PrismaClient } from '../../db/database';
import type { Tx } from '../../db/prisma-errors';
import { Prisma } from '../../generated/prisma/client';
import { storableText } from '../../validation/text';
import type { UsageRow } from './usage.model';

/** Whose rows a read sees: a workspace's, or (workspace null) all of an organisation's. */
export interface UsageScope {
  organisationId: string;
  workspaceId: string | null;
}

/** The columns rows may be grouped by, under the names the reads use. */
const GROUP_COLUMNS = {
  model: 'model',
  api_key_id: 'api_key_id',
  project_id: 'workspace_id',
  batch: 'batch',
  operation: 'operation',
} as const;
export type GroupColumn = keyof typeof GROUP_COLUMNS;

export interface AggregateSpec {
  /** Buckets are `width` seconds from `origin` (Unix seconds): bucket n holds [origin + n·width, origin + (n+1)·width). */
  origin: number;
  width: number;
  from: Date;
  to: Date;
  groupBy: readonly GroupColumn[];
  operation?: UsageRow['operation'];
  projectIds?: string[];
  apiKeyIds?: string[];
  models?: string[];
  batch?: boolean;
}

/** Token sums of one bucket and group; the group's columns are set for the columns grouped by. */
export interface AggregateRow {
  bucket: number;
  model?: string;
  api_key_id?: string | null;
  project_id?: string | null;
  batch?: boolean;
  operation?: string;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  requests: number;
}

export interface LogFilter {
  model?: string;
  status?: number | 'success' | 'error';
  apiKeyId?: string;
  from?: Date;
  to?: Date;
  /** Entries older than this id (the cursor). */
  before?: bigint;
  take: number;
}

export type LogRow = UsageRow & { id: bigint };

const scopeSql = (scope: UsageScope) =>
  scope.workspaceId === null
    ? Prisma.sql`organisation_id = ${scope.organisationId}::uuid`
    : Prisma.sql`organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid`;

/** `column = ANY(values)` as a condition, when values are given. */
const anyOf = (column: string, values: string[] | undefined, cast = '') =>
  values?.length ? [Prisma.sql`${Prisma.raw(column)}${Prisma.raw(cast)} = ANY(${values})`] : [];

const HOUR = 3600;
/** usage_hourly's "none" in its key columns. */
const NONE = '00000000-0000-0000-0000-000000000000';

/** The ledger's rows of [from, to) with the columns the sums read, each one request. */
const rawRows = (from: Date, to: Date) => Prisma.sql`
  SELECT time, organisation_id, workspace_id, api_key_id, operation, model, batch, input_tokens, cached_tokens, output_tokens, 1 AS requests
  FROM usage_records WHERE time >= ${from} AND time < ${to}`;

/** The hourly sums of the whole hours of [from, to), as rows of the same columns (each at its hour's start). */
const hourlyRows = (from: Date, to: Date) => Prisma.sql`
  SELECT hour AS time, organisation_id, NULLIF(workspace_id, ${NONE}::uuid) AS workspace_id, NULLIF(api_key_id, ${NONE}::uuid) AS api_key_id,
    operation, model, batch, input_tokens, cached_tokens, output_tokens, requests
  FROM usage_hourly WHERE hour >= ${from} AND hour < ${to}`;

/**
 * Where the sums of a read come from. When every bucket edge is a whole hour (1h and 1d buckets from a
 * whole hour), an hour's sums fall in one bucket: the whole hours are read from usage_hourly (a few
 * rows per hour instead of every call) and only the part hour an `end_time` may cut from the ledger.
 * Otherwise (1m buckets, a start within an hour) an hour may straddle two buckets: the ledger's rows.
 */
function sources(spec: AggregateSpec): Prisma.Sql {
  const from = spec.from.getTime() / 1000;
  const hoursEnd = Math.floor(spec.to.getTime() / 1000 / HOUR) * HOUR;
  const wholeHours = spec.width % HOUR === 0 && spec.origin % HOUR === 0 && from % HOUR === 0;
  if (!wholeHours || hoursEnd <= from) return rawRows(spec.from, spec.to);
  const hours = hourlyRows(spec.from, new Date(hoursEnd * 1000));
  return hoursEnd * 1000 < spec.to.getTime() ? Prisma.sql`${hours} UNION ALL ${rawRows(new Date(hoursEnd * 1000), spec.to)}` : hours;
}

type Value = string | number | boolean | null;

/** Text as it can be stored (see COLUMNS). */
const text = (value: string | null) => (value === null ? null : storableText(value));

/**
 * usage_records' columns as the ledger writes them: each one's SQL type (for the INSERT's arrays)
 * and its value in a row. One table for both ways in (COPY and INSERT), so they cannot disagree.
 * Text that Postgres cannot store (a provider's request id with a NUL) is stored with U+FFFD in its
 * place: one such value would otherwise fail its whole batch, again at every flush.
 */
const COLUMNS: readonly [name: string, type: 'timestamptz' | 'uuid' | 'text' | 'integer' | 'boolean', pick: (row: UsageRow) => Value][] = [
  ['time', 'timestamptz', (r) => r.time.toISOString()],
  ['organisation_id', 'uuid', (r) => r.organisationId],
  ['workspace_id', 'uuid', (r) => r.workspaceId],
  ['api_key_id', 'uuid', (r) => r.apiKeyId],
  ['operation', 'text', (r) => r.operation],
  ['provider', 'text', (r) => text(r.provider)],
  ['integration', 'text', (r) => text(r.integration)],
  ['model', 'text', (r) => text(r.model)],
  ['base_model', 'text', (r) => text(r.baseModel)],
  ['input_tokens', 'integer', (r) => r.inputTokens],
  ['cached_tokens', 'integer', (r) => r.cachedTokens],
  ['output_tokens', 'integer', (r) => r.outputTokens],
  ['latency_ms', 'integer', (r) => r.latencyMs],
  ['ttft_ms', 'integer', (r) => r.ttftMs],
  ['status', 'integer', (r) => r.status],
  ['mode', 'text', (r) => r.mode],
  ['streamed', 'boolean', (r) => r.streamed],
  ['batch', 'boolean', (r) => r.batch],
  ['request_id', 'text', (r) => text(r.requestId)],
];
const COLUMN_NAMES = COLUMNS.map(([name]) => name);

/**
 * Writes ledger rows with `db` (the client, or a transaction whose other writes they belong with), in
 * one statement whatever their number: a column per array parameter, `unnest`ed (an ORM multi-row
 * insert binds rows × 19 parameters and wrote ~900 rows/s in the usage benchmark). Each column goes
 * as one array literal (text) rather than a JS array, which the client would check and serialise
 * element by element. The statement's trigger adds them to usage_hourly in the same transaction. The
 * ledger's own buffered writes go by COPY instead (`UsageRepository.insert`).
 */
export async function insertUsageRows(db: Pick<Tx, '$executeRaw'>, rows: readonly UsageRow[]): Promise<void> {
  if (!rows.length) return;
  const arrays = COLUMNS.map(([, type, pick]) => Prisma.sql`${arrayLiteral(rows.map(pick), type === 'text')}::${Prisma.raw(type)}[]`);
  await db.$executeRaw`INSERT INTO usage_records (${Prisma.raw(COLUMN_NAMES.join(', '))}) SELECT * FROM unnest(${Prisma.join(arrays)})`;
}

/**
 * A column as a Postgres array literal: `{a,b,NULL}`. Text is quoted with its `"` and `\` escaped (any
 * character is then literal, commas and braces included); the other values (ISO times, UUIDs, numbers,
 * booleans) have none of the characters that need quoting.
 */
function arrayLiteral(values: Value[], quoted: boolean): string {
  const element = (value: Value) => (value === null ? 'NULL' : quoted ? `"${String(value).replace(/["\\]/g, '\\$&')}"` : String(value));
  return `{${values.map(element).join(',')}}`;
}

/**
 * Rows as COPY's text: a line each, tab-separated values. Built by concatenation rather than an array
 * per row and per value: on PGlite, building the text was a third of the insert's CPU per row
 * (docs/usage-ledger-cost.md).
 */
function copyLines(rows: readonly UsageRow[]): string {
  let text = '';
  for (const row of rows) {
    let line = copyText(COLUMNS[0][2](row));
    for (let i = 1; i < COLUMNS.length; i++) line += `\t${copyText(COLUMNS[i][2](row))}`;
    text += `${line}\n`;
  }
  return text;
}

/** The usage ledger's rows: written in batches, read as sums per time bucket or as a log. */
export class UsageRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly copyRows: Database['copyRows'],
  ) {}

  /**
   * Writes the ledger's rows (and, by usage_records' trigger, their hourly sums) in one COPY: about
   * half the CPU of the `unnest` INSERT through Prisma, in the gateway and in Postgres (issue 26, the
   * ledger's cost per streamed call).
   */
  async insert(rows: UsageRow[]): Promise<void> {
    if (rows.length) await this.copyRows('usage_records', COLUMN_NAMES, copyLines(rows));
  }

  /**
   * Deletes the rows before the whole hour at or before `time`, from the ledger and its hourly sums
   * alike (so that both keep answering the same); how many ledger rows went. The ledger's rows go
   * organisation by organisation (those with hourly sums that old), along its one index.
   */
  async deleteBefore(time: Date): Promise<number> {
    const hour = new Date(Math.floor(time.getTime() / (HOUR * 1000)) * HOUR * 1000);
    const [records] = await this.prisma.$transaction([
      this.prisma.$executeRaw`
        DELETE FROM usage_records
        WHERE organisation_id IN (SELECT DISTINCT organisation_id FROM usage_hourly WHERE hour < ${hour}) AND time < ${hour}`,
      this.prisma.usageHourly.deleteMany({ where: { hour: { lt: hour } } }),
    ]);
    return records;
  }

  /** Token sums and request counts per bucket and group, in one query over the time range (see `sources`). */
  async aggregate(scope: UsageScope, spec: AggregateSpec): Promise<AggregateRow[]> {
    const conditions = [
      scopeSql(scope),
      ...(spec.operation ? [Prisma.sql`operation = ${spec.operation}`] : []),
      // Ids are compared as text: a malformed one filters everything out rather than failing the cast.
      ...anyOf('workspace_id', spec.projectIds, '::text'),
      ...anyOf('api_key_id', spec.apiKeyIds, '::text'),
      ...anyOf('model', spec.models),
      ...(spec.batch === undefined ? [] : [Prisma.sql`batch = ${spec.batch}`]),
    ];
    const groups = spec.groupBy.map((name) =>
      Prisma.raw(`${GROUP_COLUMNS[name]}${name === 'project_id' || name === 'api_key_id' ? '::text' : ''} AS "${name}"`),
    );
    const groupNumbers = spec.groupBy.map((_, i) => Prisma.raw(String(i + 2)));
    const rows = await this.prisma.$queryRaw<Record<string, unknown>[]>`
      SELECT floor((extract(epoch FROM time) - ${spec.origin}::numeric) / ${spec.width}::numeric)::int AS bucket
        ${groups.length ? Prisma.sql`, ${Prisma.join(groups)}` : Prisma.empty},
        sum(input_tokens)::bigint AS input, sum(cached_tokens)::bigint AS cached, sum(output_tokens)::bigint AS output, sum(requests)::bigint AS requests
      FROM (${sources(spec)}) AS ledger
      WHERE ${Prisma.join(conditions, ' AND ')}
      GROUP BY ${Prisma.join([Prisma.raw('1'), ...groupNumbers])}
      ORDER BY 1`;
    return rows.map(({ input, cached, output, requests, ...group }) => ({
      ...(group as Omit<AggregateRow, 'inputTokens' | 'cachedTokens' | 'outputTokens' | 'requests'>),
      inputTokens: Number(input),
      cachedTokens: Number(cached),
      outputTokens: Number(output),
      requests: Number(requests),
    }));
  }

  /** The newest entries first, `take + 1` of them (the extra one says whether there are more). */
  async log(scope: UsageScope, filter: LogFilter): Promise<LogRow[]> {
    const status =
      filter.status === undefined ? {} : filter.status === 'success' ? { lt: 400 } : filter.status === 'error' ? { gte: 400 } : { equals: filter.status };
    return this.prisma.usageRecord.findMany({
      where: {
        organisationId: scope.organisationId,
        ...(scope.workspaceId === null ? {} : { workspaceId: scope.workspaceId }),
        ...(filter.model === undefined ? {} : { model: filter.model }),
        ...(filter.apiKeyId === undefined ? {} : { apiKeyId: filter.apiKeyId }),
        status,
        time: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) },
        ...(filter.before === undefined ? {} : { id: { lt: filter.before } }),
      },
      orderBy: { id: 'desc' },
      take: filter.take + 1,
    }) as Promise<LogRow[]>;
  }
}
