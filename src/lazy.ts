/** Made once: the first call builds it, later ones reuse it (clients, required modules, stores made on first use). */
export function lazy<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}
