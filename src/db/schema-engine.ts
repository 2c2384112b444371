import fs from 'node:fs';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory, type SqlDriverAdapter, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type * as EngineModule from '@prisma/schema-engine-wasm/schema_engine_bg';

/**
 * Prisma's schema engine compiled to WebAssembly. The native engine the Prisma CLI uses must be
 * downloaded, which is impossible offline; this one ships in an npm package and writes exactly the
 * same `_prisma_migrations` rows as `prisma migrate deploy`.
 */
export type SchemaEngine = EngineModule.SchemaEngine;
export type MigrationList = Parameters<SchemaEngine['applyMigrations']>[0]['migrationsList'];

export const NO_FILTERS = { externalTables: [] as string[], externalEnums: [] as string[] };

let loaded: Promise<typeof EngineModule> | undefined;

/**
 * The package is ESM-only and its entry imports a `.wasm` file, which Node cannot: load the glue
 * module with import() and instantiate the WebAssembly by hand, once per process.
 */
function loadEngine(): Promise<typeof EngineModule> {
  loaded ??= import('@prisma/schema-engine-wasm/schema_engine_bg').then((bg) => {
    startWasm(bg);
    return bg;
  });
  return loaded;
}

function startWasm(bg: typeof EngineModule): void {
  const wasmPath = path.join(path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg')), 'schema_engine_bg.wasm');
  const module = new WebAssembly.Module(fs.readFileSync(wasmPath));
  const instance = new WebAssembly.Instance(module, { './schema_engine_bg.js': bg as unknown as WebAssembly.ModuleImports });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
}

export interface EngineHandle {
  engine: SchemaEngine;
  /** Turns an engine error into one that says what the database said. */
  explain: (err: unknown) => Error;
  /** Frees the engine and closes the connections it opened. */
  close: () => Promise<void>;
}

export async function openSchemaEngine(
  schemaPath: string,
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  log: (message: string) => void = () => {},
): Promise<EngineHandle> {
  const bg = await loadEngine();
  const connections = trackConnections(adapterFactory);
  const bound = bindMigrationAwareSqlAdapterFactory(connections.factory);
  const datamodel = fs.readFileSync(schemaPath, 'utf8');
  const engine = await bg.SchemaEngine.new({ datamodels: [[schemaPath, datamodel]] }, log, bound);
  return {
    engine,
    explain: (err) => explainEngineError(err, bound.errorRegistry),
    close: async () => {
      engine.free();
      await connections.disposeAll();
    },
  };
}

/**
 * The engine never disposes of the adapters it connects: on Postgres each holds a pool whose idle
 * connections would outlive the migration (keeping the process alive, and the database busy for a
 * `CREATE DATABASE … TEMPLATE` or a rename). Recording them lets `close` end them.
 */
function trackConnections(factory: SqlMigrationAwareDriverAdapterFactory) {
  const opened: SqlDriverAdapter[] = [];
  const track = async (connecting: Promise<SqlDriverAdapter>) => {
    const adapter = await connecting;
    opened.push(adapter);
    return adapter;
  };
  const tracked: SqlMigrationAwareDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: () => track(factory.connect()),
    connectToShadowDb: () => track(factory.connectToShadowDb()),
  };
  const disposeAll = async () => {
    await Promise.all(opened.splice(0).map((adapter) => adapter.dispose()));
  };
  return { factory: tracked, disposeAll };
}

/** Engine errors say `External error id#N`; the JS error behind N sits in the bound adapter's registry. */
function explainEngineError(err: unknown, registry: { consumeError(id: number): { error: unknown } | undefined }): Error {
  const message = err instanceof Error ? err.message : String(err);
  const match = /External error id#(\d+)/.exec(message);
  const inner = match ? registry.consumeError(Number(match[1]))?.error : undefined;
  if (inner instanceof Error) return new Error(`${message}: ${inner.message}`, { cause: inner });
  return err instanceof Error ? err : new Error(message);
}
