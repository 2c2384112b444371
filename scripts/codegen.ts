/**
 * `npm run codegen`: typed documents for the GraphQL operations under test/graphql/operations, checked
 * against schema.graphql (the client-facing SDL, `npm run schema:emit`). Runs GraphQL Code Generator's
 * core offline, without its CLI (whose loaders pull in packages that need a newer Node). A test fails
 * when the generated file is stale (test/graphql/codegen.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { codegen } from '@graphql-codegen/core';
import * as typedDocumentNode from '@graphql-codegen/typed-document-node';
import * as typescriptOperations from '@graphql-codegen/typescript-operations';
import { buildSchema, parse } from 'graphql';
import { projectRoot } from '../src/db/migrations';

// Found, not assumed one level up: the tests run this file compiled elsewhere (test/support/compiled.ts).
const ROOT = projectRoot();
const OPERATIONS_DIR = path.join(ROOT, 'test/graphql/operations');
export const GENERATED_FILE = path.join(ROOT, 'test/graphql/generated/operations.ts');

const CONFIG = {
  useTypeImports: true,
  defaultScalarType: 'unknown',
  scalars: { DateTimeISO: 'string', JSON: 'unknown', JSONObject: 'Record<string, unknown>', Upload: 'never' },
};

/** The generated module's text. */
export function generateOperations(): Promise<string> {
  const schema = buildSchema(fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8'));
  const documents = fs
    .readdirSync(OPERATIONS_DIR)
    .filter((name) => name.endsWith('.graphql'))
    .sort()
    .map((name) => ({ location: path.join(OPERATIONS_DIR, name), document: parse(fs.readFileSync(path.join(OPERATIONS_DIR, name), 'utf8')) }));
  return codegen({
    filename: GENERATED_FILE,
    schema: parse(fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8')),
    schemaAst: schema,
    documents,
    // typescript-operations 6 generates the input and enum types it needs: no `typescript` plugin here.
    plugins: [{ 'typescript-operations': {} }, { 'typed-document-node': {} }],
    pluginMap: { 'typescript-operations': typescriptOperations, 'typed-document-node': typedDocumentNode },
    config: CONFIG,
  });
}

if (require.main === module) {
  generateOperations().then(
    (content) => {
      if (process.argv.includes('--stdout')) return void process.stdout.write(content);
      fs.writeFileSync(GENERATED_FILE, content);
      console.log(`Wrote ${path.relative(ROOT, GENERATED_FILE)}`);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
