/**
 * Provider name → adapter, plus the `ProviderContext` each adapter call needs. Base URLs come from
 * server configuration only (never from a request). Stored integration credentials and options use
 * the REST spelling (`api_key`, `organization`); this is where they become the adapter's own
 * (`apiKey`), so no caller needs to know a provider's naming.
 */
import type { Config } from '../config';
import { unsupported } from '../errors';
import type { HttpPolicy } from './http';
import { openaiProvider } from './openai';
import type { FineTuningProvider, ProviderContext, ProviderName } from './types';

export const PROVIDER_NAMES: readonly ProviderName[] = ['openai', 'azure-openai', 'bedrock', 'vertex-ai', 'fireworks-ai', 'together-ai'];

export const isProviderName = (value: string): value is ProviderName => (PROVIDER_NAMES as readonly string[]).includes(value);

/** What an integration (or a request's provider headers) supplies for one provider. */
export interface ProviderAccess {
  credentials: Record<string, string>;
  options: Record<string, string>;
}

interface Entry {
  adapter: FineTuningProvider;
  baseUrl: (config: Config) => string;
  /** Stored/REST names → the adapter's ProviderContext names. */
  toContext: (access: ProviderAccess) => Pick<ProviderContext, 'credentials' | 'options'>;
}

const pick = (from: Record<string, string>, ...names: string[]) => names.map((n) => from[n]).find((v) => typeof v === 'string' && v !== '');

const compact = (o: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));

const ENTRIES: Partial<Record<ProviderName, Entry>> = {
  openai: {
    adapter: openaiProvider,
    baseUrl: (config) => config.providerBaseUrls.openai,
    toContext: ({ credentials, options }) => ({
      credentials: compact({ apiKey: pick(credentials, 'api_key', 'apiKey') }),
      options: compact({
        organization: pick(options, 'organization', 'x-gateway-openai-organization'),
        project: pick(options, 'project', 'x-gateway-openai-project'),
      }),
    }),
  },
};

export class ProviderRegistry {
  constructor(
    private readonly config: Config,
    /** Timeouts and retries for every provider call (tests shrink them). */
    private readonly http?: HttpPolicy,
  ) {}

  /** True when the gateway has an adapter for the provider. */
  supports(name: ProviderName): boolean {
    return ENTRIES[name] !== undefined;
  }

  /** The provider's adapter; a provider without one yet is a typed `unsupported` error (400). */
  adapter(name: ProviderName): FineTuningProvider {
    return this.entry(name).adapter;
  }

  /** The adapter and the context to call it with, from stored credentials and options. */
  connect(name: ProviderName, access: ProviderAccess): { adapter: FineTuningProvider; ctx: ProviderContext } {
    const entry = this.entry(name);
    const ctx: ProviderContext = { ...entry.toContext(access), baseUrl: entry.baseUrl(this.config) };
    if (this.http) ctx.http = this.http;
    return { adapter: entry.adapter, ctx };
  }

  private entry(name: ProviderName): Entry {
    const entry = ENTRIES[name];
    if (!entry) throw unsupported(`Provider '${name}' is not supported by this gateway yet`, 'provider');
    return entry;
  }
}
