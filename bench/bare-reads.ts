/**
 * A child of bench/reads.ts: the floor the gateway is measured against. A bare `node:http` server with
 * a `pg` pool of the gateway's size answers `GET /labels/{id}` with the same indexed query the gateway
 * sends (scope and id; BENCH_ORGANISATION_ID, BENCH_WORKSPACE_ID) and the REST label JSON.
 */
import http from 'node:http';
import { Pool } from 'pg';
import { countStatementsForParent } from './statements';

countStatementsForParent();
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const scope = [process.env.BENCH_ORGANISATION_ID, process.env.BENCH_WORKSPACE_ID];
const SQL = `SELECT id, organisation_id, workspace_id, name, description, color_code, is_universal, status, created_at, last_updated_at
  FROM labels WHERE organisation_id = $1 AND workspace_id = $2 AND id = $3 LIMIT 1`;

const server = http.createServer((req, res) => {
  const id = /^\/labels\/([0-9a-f-]{36})$/.exec(req.url ?? '')?.[1];
  if (!id) {
    res.writeHead(404).end();
    return;
  }
  pool.query(SQL, [...scope, id]).then(
    ({ rows: [row] }) => {
      if (!row) return void res.writeHead(404).end();
      const body = JSON.stringify({
        id: row.id,
        name: row.name,
        description: row.description,
        color_code: row.color_code,
        organisation_id: row.organisation_id,
        workspace_id: row.workspace_id,
        is_universal: row.is_universal,
        created_at: row.created_at.toISOString(),
        last_updated_at: row.last_updated_at.toISOString(),
        status: row.status,
      });
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
    },
    () => res.writeHead(500).end(),
  );
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.(typeof address === 'object' && address ? address.port : 0);
});
