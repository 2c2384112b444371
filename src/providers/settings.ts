/**
 * Provider settings: credentials and options, declared once per provider and read from wherever a
 * call gets them — request headers (client mode), a stored integration, a hosted job's
 * `gateway_options`. Every value is checked against its pattern before any connection is made, so
 * a request can never steer the gateway to another host; errors name the field as the caller
 * spelled it (the header, or the integration key) and never quote a value (it may be a secret).
 */
import { GatewayError, type CodeOf } from '../errors';
import type { OperationName } from './types';

export interface SettingSpec {
  /** The request header in client mode, lower-case: `x-gateway-azure-resource-name`, or `authorization`. */
  readonly header: string;
  /** The integration key: under `credentials` for a secret (`api_key`), under `options` for a setting (its header name). */
  readonly key: string;
  /** Other integration keys accepted for it (older short names such as `resource_name`). */
  readonly aliases?: readonly string[];
  /** A credential: stored encrypted, never returned, refused in `gateway_options`. */
  readonly secret?: boolean;
  /**
   * Chooses where credentials are used (a host, an account, a bucket, a project, a region): with a
   * stored integration it comes from the integration only, and an override (a header with `@slug`, a
   * job's `gateway_options`, a hosted chat request's headers) that differs is refused, so the stored
   * credentials never go to a target the caller picks.
   */
  readonly pinned?: true;
  /** The header carries `Bearer <value>`. */
  readonly bearer?: boolean;
  /** What the value must look like; anything that ends up in a host name or a path has one. */
  readonly pattern?: RegExp;
  /** What the pattern wants, in words, for the error message. */
  readonly format?: string;
  readonly maxLength?: number;
  /**
   * What a pattern cannot check (a JSON key file): the reason the value is refused, or null. Runs
   * wherever the pattern does (read from a request, stored in an integration); never quotes the value.
   */
  readonly validate?: (value: string) => string | null;
  /** Needed by every operation, or only by these. */
  readonly required?: true | readonly OperationName[];
  readonly default?: string;
}

export type SettingsSpec = Readonly<Record<string, SettingSpec>>;

/** The values a spec yields: a string where it is always required or has a default. */
export type SettingValues<T extends SettingsSpec> = {
  [K in keyof T]: T[K] extends { required: true } | { default: string } ? string : string | undefined;
};

/** Declares a provider's settings (keeps the literal `required: true` for {@link SettingValues}). */
export const defineSettings = <T extends SettingsSpec>(spec: T): T => spec;

/** Where settings come from: the caller's spelling of each field differs. */
export type SettingsOrigin =
  /** Client mode: request headers. */
  | { kind: 'headers'; headers: Readonly<Record<string, string | undefined>> }
  /** A stored integration, possibly with non-secret overrides (headers, or a job's gateway_options). */
  | {
      kind: 'integration';
      slug: string;
      credentials: Readonly<Record<string, string>>;
      options: Readonly<Record<string, string>>;
      overrides?: { field: 'headers' | 'gatewayOptions'; values: Readonly<Record<string, string | undefined>> };
    };

/** Common patterns. */
export const PATTERNS = {
  /** A DNS label (Azure resource names, regions): no dots, slashes, colons, `@`, `%`. */
  dnsLabel: { pattern: /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, format: 'lower-case letters, digits and "-" (a DNS label)' },
  /** An identifier that goes into a URL path. */
  pathId: { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, format: 'letters, digits, ".", "_" and "-"' },
} as const;

const DEFAULT_MAX_LENGTH = 1024;

/** Where a setting is named in an error: its header, or its integration key. */
function fieldOf(spec: SettingSpec, origin: SettingsOrigin, from: 'header' | 'credentials' | 'options' | 'override'): GatewayErrorPlace {
  if (from === 'header') return { param: spec.header };
  if (from === 'override' && origin.kind === 'integration' && origin.overrides) {
    return origin.overrides.field === 'headers' ? { param: spec.header } : { path: ['gatewayOptions', spec.header] };
  }
  const slug = origin.kind === 'integration' ? origin.slug : '';
  return { param: `@${slug} ${from}.${spec.key}` };
}

type GatewayErrorPlace = { param: string } | { path: string[] };

const settingError = (place: GatewayErrorPlace, reason: string, code: CodeOf<'invalid_request'> = 'invalid_setting') =>
  new GatewayError('invalid_request', reason, { ...place, aboutField: true, code });

/** The raw value of one setting and where it came from. */
function lookup(spec: SettingSpec, origin: SettingsOrigin): { value: string; from: 'header' | 'credentials' | 'options' | 'override' } | undefined {
  if (origin.kind === 'headers') {
    const raw = origin.headers[spec.header];
    if (raw === undefined) return undefined;
    return { value: spec.bearer ? raw.replace(/^Bearer\s+/i, '') : raw, from: 'header' };
  }
  const override = spec.secret ? undefined : origin.overrides?.values[spec.header];
  const stored = storedValue(spec, origin);
  if (override === undefined) return stored;
  if (spec.pinned && override.trim() !== stored?.value.trim()) {
    const reason = `chooses where the credentials of @${origin.slug} are used: it can be set only in the integration, not overridden`;
    throw settingError(fieldOf(spec, origin, 'override'), reason, 'setting_not_overridable');
  }
  return { value: override, from: 'override' };
}

function storedValue(spec: SettingSpec, origin: Extract<SettingsOrigin, { kind: 'integration' }>) {
  const stored = spec.secret ? origin.credentials : origin.options;
  for (const key of [spec.key, spec.header, ...(spec.aliases ?? [])]) {
    const value = stored[key];
    if (value !== undefined) return { value, from: spec.secret ? ('credentials' as const) : ('options' as const) };
  }
  return undefined;
}

/**
 * The provider's settings for `operation`, validated: each present value matches its pattern and
 * length, and every setting the operation needs is there (400 naming it otherwise).
 */
export function readSettings<T extends SettingsSpec>(spec: T, origin: SettingsOrigin, operation: OperationName | null): SettingValues<T> {
  const out: Record<string, string | undefined> = {};
  for (const [name, setting] of Object.entries(spec)) {
    const found = lookup(setting, origin);
    if (found) {
      out[name] = check(setting, found.value.trim(), fieldOf(setting, origin, found.from));
    } else if (setting.default !== undefined) {
      out[name] = setting.default;
    } else if (isRequired(setting, operation)) {
      const place = origin.kind === 'headers' ? { param: setting.header } : fieldOf(setting, origin, setting.secret ? 'credentials' : 'options');
      throw settingError(place, `is required${operation ? ` for ${operation}` : ''}`, 'missing_setting');
    }
  }
  return out as SettingValues<T>;
}

function isRequired(setting: SettingSpec, operation: OperationName | null): boolean {
  if (setting.required === true) return true;
  return operation !== null && (setting.required ?? []).includes(operation);
}

function check(setting: SettingSpec, value: string, place: GatewayErrorPlace): string {
  const max = setting.maxLength ?? DEFAULT_MAX_LENGTH;
  if (!value) throw settingError(place, 'must not be empty');
  if (value.length > max) throw settingError(place, `must be at most ${max} characters`);
  if (setting.pattern && !setting.pattern.test(value)) throw settingError(place, `must be ${setting.format ?? 'a valid value'}`);
  const problem = setting.validate?.(value);
  if (problem) throw settingError(place, problem);
  return value;
}

/** A stored integration's credentials and options under each setting's canonical key. */
export interface StoredSettings {
  credentials: Record<string, string>;
  options: Record<string, string>;
}

/**
 * An integration's credentials and options as given (REST or GraphQL JSON), checked against the
 * provider's settings: known keys only (canonical, header name or alias), strings matching their
 * patterns, settings every operation needs present. Kept under canonical keys.
 */
export function normaliseStored(spec: SettingsSpec, given: { credentials: unknown; options: unknown }): StoredSettings {
  const out: StoredSettings = { credentials: {}, options: {} };
  for (const which of ['credentials', 'options'] as const) {
    const value: unknown = given[which] ?? {};
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw settingError({ path: [which] }, 'must be an object of strings');
    const settings = Object.values(spec).filter((s) => (which === 'credentials') === (s.secret ?? false));
    for (const [key, raw] of Object.entries(value)) {
      const place = { path: [which, key] };
      // GraphQL callers may spell keys in camelCase (`apiKey`); REST's are snake_case or header names.
      const spelled = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      const setting = settings.find((s) => [s.key, s.header, ...(s.aliases ?? [])].some((name) => name === key || name === spelled));
      if (!setting) throw settingError(place, `is not a known field (accepted: ${settings.map((s) => s.key).join(', ') || 'none'})`, 'invalid_request');
      if (typeof raw !== 'string') throw settingError(place, 'must be a string');
      if (Object.hasOwn(out[which], setting.key)) throw settingError(place, `was given more than once (also as ${setting.key})`);
      out[which][setting.key] = check(setting, raw.trim(), place);
    }
    for (const setting of settings) {
      if (setting.required === true && !Object.hasOwn(out[which], setting.key))
        throw settingError({ path: [which, setting.key] }, 'is required', 'missing_setting');
    }
  }
  return out;
}

/** Credential headers of every provider: refused where settings are stored with a job (they belong in an integration). */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'x-gateway-api-key',
  'x-gateway-aws-access-key-id',
  'x-gateway-aws-secret-access-key',
  'x-gateway-aws-session-token',
  'x-gateway-vertex-service-account-json',
]);

/**
 * Settings given with a hosted job (`gateway_options`): non-secret settings of the provider only,
 * under their header names. A credential is refused (it would be stored with the job).
 */
export function checkJobSettingKeys(spec: SettingsSpec, values: Readonly<Record<string, string>>, path: readonly string[]): void {
  const known = new Set(
    Object.values(spec)
      .filter((s) => !s.secret)
      .map((s) => s.header),
  );
  for (const key of Object.keys(values)) {
    const place = { path: [...path, key] };
    if (CREDENTIAL_HEADERS.has(key.toLowerCase()) || Object.values(spec).some((s) => s.secret && s.header === key.toLowerCase())) {
      throw settingError(place, 'is a credential: store it in an integration and name it with x-gateway-provider: "@slug"', 'invalid_request');
    }
    if (!known.has(key)) throw settingError(place, `is not a known field (accepted: ${[...known].join(', ') || 'none'})`, 'invalid_request');
  }
}
