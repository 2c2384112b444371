/**
 * A child of bench/reads.ts: what the gateway's building blocks cost without the gateway. The same label
 * read through Prisma (the gateway's client and query) and the REST mapper, served by a bare `node:http`
 * handler (BENCH_FLOOR=http) or by a bare Express app with one route (BENCH_FLOOR=express): no
 * authentication, middleware or routers. Scope: BENCH_ORGANISATION_ID, BENCH_WORKSPACE_ID.
 */
import http from 'node:http';
import express from 'express';
import { openDatabase } from '../src/db/database';
import { toLabelJson } from '../src/modules/labels/label.mapper';
import { countStatementsForParent } from './statements';

countStatementsForParent();
const scope = { organisationId: String(process.env.BENCH_ORGANISATION_ID), workspaceId: String(process.env.BENCH_WORKSPACE_ID) };

async function main(): Promise<void> {
  const { prisma } = await openDatabase({ databaseUrl: process.env.DATABASE_URL, pgliteDir: 'memory://' });
  const read = async (id: string) => {
    const label = await prisma.label.findFirst({ where: { ...scope, id } });
    return label ? JSON.stringify(toLabelJson(label)) : undefined;
  };
  let handler: http.RequestListener;
  if (process.env.BENCH_FLOOR === 'express') {
    const app = express();
    app.set('etag', false);
    app.get('/v1/labels/:labelId', async (req, res) => {
      const body = await read(req.params.labelId);
      if (body === undefined) res.status(404).end();
      else res.type('json').send(body);
    });
    handler = app;
  } else {
    handler = (req, res) => {
      void read(req.url?.split('/').pop() ?? '').then((body) => {
        if (body === undefined) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
      });
    };
  }
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.(typeof address === 'object' && address ? address.port : 0);
  });
}

void main();
