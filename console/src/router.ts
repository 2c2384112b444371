import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/jobs/<id>`): the gateway serves one HTML file and needs no fallback route; the path
 * holds ids only, never the key.
 */
export function currentRoute(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part));
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

export function navigate(...parts: string[]): void {
  location.hash = href(...parts);
}
