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
import type { ProviderEnvironment, ProviderModule } from './module';

/** What the deferred part exports: the module's `connect` and `operations`. */
export type ProviderImplementation<T extends SettingsSpec, C> = Pick<ProviderModule<T, C>, 'connect' | 'operations'>;

/** The connection of a deferred provider until its code is loaded: the validated settings and the environment. */
export interface DeferredConnection<T extends SettingsSpec> {
  settings: SettingValues<T>;
  env: ProviderEnvironment;
}

type Declaration<T extends SettingsSpec> = Omit<ProviderModule<T>, 'connect' | 'operations'> & {
  /** The operations the implementation has; checked when it loads. */
  operations: readonly ProviderOperationName[];
};

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
  return {
    ...declaration,
    connect: (settings, env) => ({ settings, env }),
    operations: Object.fromEntries(declaration.operations.map((name) => [name, operation(name)])),
  };
}

/** The loaded implementation, refused when its operations are not exactly the declared ones. */
function checked<T extends SettingsSpec, C>(declaration: Declaration<T>, impl: ProviderImplementation<T, C>): ProviderImplementation<T, C> {
  const implemented = Object.keys(impl.operations).sort().join(', ');
  const declared = [...declaration.operations].sort().join(', ');
  if (implemented !== declared) throw new Error(`${declaration.title} declares the operations ${declared} but implements ${implemented}`);
  return impl;
}
