/** Made once: the first call builds it, later ones reuse it (clients, required modules, stores made on first use). */
export function lazy<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

/**
 * A module required on first use rather than imported: loading some (undici, the AWS SDK, a database
 * driver, OpenTelemetry) costs a noticeable part of a start, or is needed only in one configuration.
 * `from` is the calling module's own `require`, so a relative id resolves against the caller; the type
 * comes from the caller's `import type * as M`: `lazyRequire<typeof M>(require, './m')`.
 */
export function lazyRequire<M>(from: NodeJS.Require, id: string): () => M {
  return lazy(() => from(id) as M);
}
