/** The providers of the contract (api.md §6); each implemented one has a module in `./<name>/`. */
export const PROVIDER_NAMES = ['openai', 'azure-openai', 'bedrock', 'vertex-ai', 'fireworks-ai', 'together-ai'] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];

const NAMES: ReadonlySet<string> = new Set(PROVIDER_NAMES);

export const isProviderName = (value: string): value is ProviderName => NAMES.has(value);
