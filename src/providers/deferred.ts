/**
 * A provider whose code loads on its first call. What the gateway must know from the start (name,
 * settings, endpoints, the operations it supports, its dataset format) is declared eagerly; the
 * connection and the operations, with the SDKs they need, are required when a call first needs them,
 * so a gateway that never talks to that provider never pays for loading them (the AWS SDK is the
 * largest part of the gateway's start). `load` requires synchronously: `import()` would hand the
 * module over differently under tsc's CommonJS and under jest.
 */
import { lazy } from '../lazy';
import type { SettingValues, SettingsSpec } from './settings';
import type { ProviderOperationName } from './types';
import type { ClientBatchSupport, ProviderBatchSupport } from './batch';
import type { ProviderEnvironment, ProviderModule } from './module';

/** What the deferred part exports: the module's `connect` and `operations`, and its batch service when it has one. */
export type ProviderImplementation<T extends SettingsSpec, C> = Pick<ProviderModule<T, C>, 'connect' | 'operations' | 'batch'>;

/** The connection of a deferred provider until its code is loaded: the validated settings and the environment. */
export interface DeferredConnection<T extends SettingsSpec> {
  settings: SettingValues<T>;
  env: ProviderEnvironment;
}

type Declaration<T extends SettingsSpec> = Omit<ProviderModule<T>, 'connect' | 'operations' | 'batch'> & {
  /** The operations the implementation has; checked when it loads. */
  operations: readonly ProviderOperationName[];
  /**
   * The implementation has a batch service (../batch.ts), checked when it loads; with `client`, its
   * client-mode part too, whose traits (limits, purpose) are declared here.
   */
  batch?: true | { client: ClientBatchTraits };
};

/** What the gateway reads of a client-mode batch service without calling it. */
type ClientBatchTraits = Omit<ClientBatchSupport<unknown>, ClientBatchStep>;
type ClientBatchStep = 'list' | 'ownsHandle' | 'readInput';
const CLIENT_BATCH_STEPS: readonly ClientBatchStep[] = ['list', 'ownsHandle', 'readInput'];

type AnyOperation = (conn: unknown, ...args: unknown[]) => Promise<unknown>;

export function deferredProvider<T extends SettingsSpec, C>(
  declaration: Declaration<T>,
  load: () => ProviderImplementation<T, C>,
): ProviderModule<T, DeferredConnection<T>> {
  const implementation = lazy(() => checked(declaration, load()));
  const operation =
    (name: ProviderOperationName): AnyOperation =>
    async (conn, ...args) => {
      const impl = implementation();
      const { settings, env } = conn as DeferredConnection<T>;
      // `checked` made sure the implementation has every declared operation.
      return (impl.operations[name] as AnyOperation)(impl.connect(settings, env), ...args);
    };
  const { batch, ...declared } = declaration;
  return {
    ...declared,
    connect: (settings, env) => ({ settings, env }),
    operations: Object.fromEntries(declaration.operations.map((name) => [name, operation(name)])),
    ...(batch ? { batch: deferredBatch(implementation, batch === true ? undefined : batch.client) } : {}),
  };
}

type BatchStep = keyof ProviderBatchSupport<unknown>;
const BATCH_STEPS: readonly BatchStep[] = ['accepts', 'upload', 'create', 'find', 'get', 'cancel', 'output'];

/** The batch service's steps (and its client-mode part's), each loading the implementation and connecting before it runs. */
function deferredBatch<T extends SettingsSpec, C>(
  implementation: () => ProviderImplementation<T, C>,
  client: ClientBatchTraits | undefined,
): ProviderBatchSupport<DeferredConnection<T>> {
  type Steps = Record<string, ((conn: C, ...args: unknown[]) => unknown) | undefined> | undefined;
  const step =
    (name: string, steps: (impl: ProviderImplementation<T, C>) => Steps) =>
    (conn: DeferredConnection<T>, ...args: unknown[]): unknown => {
      const impl = implementation();
      // `checked` made sure the implementation has a batch service with every step.
      const run = steps(impl)?.[name];
      if (!run) throw new Error(`The batch service has no step ${name}`);
      return run(impl.connect(conn.settings, conn.env), ...args);
    };
  const service = Object.fromEntries(BATCH_STEPS.map((name) => [name, step(name, (impl) => impl.batch as Steps)]));
  const clientSteps = (impl: ProviderImplementation<T, C>) => impl.batch?.client as Steps;
  const clientPart = client && { ...client, ...Object.fromEntries(CLIENT_BATCH_STEPS.map((name) => [name, step(name, clientSteps)])) };
  return { ...service, ...(clientPart ? { client: clientPart } : {}) } as unknown as ProviderBatchSupport<DeferredConnection<T>>;
}

/** The loaded implementation, refused when its operations are not exactly the declared ones. */
function checked<T extends SettingsSpec, C>(declaration: Declaration<T>, impl: ProviderImplementation<T, C>): ProviderImplementation<T, C> {
  const implemented = Object.keys(impl.operations).sort().join(', ');
  const declared = [...declaration.operations].sort().join(', ');
  if (implemented !== declared) throw new Error(`${declaration.title} declares the operations ${declared} but implements ${implemented}`);
  const steps = BATCH_STEPS.filter((name) => impl.batch?.[name] !== undefined).length;
  if (declaration.batch && steps !== BATCH_STEPS.length) throw new Error(`${declaration.title} declares a batch service but implements ${steps} of its steps`);
  if (declaration.batch !== true && declaration.batch?.client && !impl.batch?.client) {
    throw new Error(`${declaration.title} declares client-mode batches but implements none`);
  }
  return impl;
}
