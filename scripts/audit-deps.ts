/**
 * `npm run audit:deps`: the production dependencies in package-lock.json against a vendored snapshot of
 * the GitHub Advisory Database (security/advisories.json). Exits 1 when a high or critical advisory
 * affects an installed version; lower ones are listed. `npm audit` needs the registry's audit endpoint,
 * which this project's machines cannot reach, hence the snapshot (docs/security.md says how to refresh it).
 *
 *   npm run audit:deps                          check the lockfile
 *   npm run audit:deps -- --refresh <checkout>  rebuild the snapshot from a github/advisory-database checkout
 */
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';

export const SNAPSHOT_FILE = path.join(__dirname, '..', 'security', 'advisories.json');
const LOCKFILE = path.join(__dirname, '..', 'package-lock.json');

/** An OSV range's events, in order: `introduced` opens an affected span, `fixed` (excluded) or `last_affected` (included) closes it. */
type RangeEvent = { introduced: string } | { fixed: string } | { last_affected: string };

export interface Advisory {
  id: string;
  aliases: string[];
  summary: string;
  /** GitHub's rating: LOW, MODERATE, HIGH, CRITICAL. */
  severity: string;
  published: string;
  modified: string;
  affected: Array<{ package: string; ranges: RangeEvent[][] }>;
}

export interface Snapshot {
  source: string;
  licence: string;
  retrieved: string;
  advisories: Advisory[];
}

export interface InstalledPackage {
  name: string;
  version: string;
  /** Where the lockfile has it (`node_modules/a/node_modules/b`). */
  location: string;
}

export interface Finding {
  package: InstalledPackage;
  advisory: Advisory;
}

interface Lockfile {
  packages: Record<string, { version?: string; dev?: boolean; link?: boolean }>;
}

/** Every package a production install (`npm ci --omit=dev`) puts on disk, from the lockfile (v2/v3). */
export function productionPackages(lockfile: Lockfile): InstalledPackage[] {
  const out: InstalledPackage[] = [];
  for (const [location, { version, dev, link }] of Object.entries(lockfile.packages)) {
    if (location === '' || dev || link || version === undefined) continue;
    out.push({ name: location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length), version, location });
  }
  return out;
}

function inRange(version: string, events: RangeEvent[]): boolean {
  let since: string | null = null;
  for (const event of events) {
    if ('introduced' in event) since = event.introduced;
    else if (since !== null && 'fixed' in event) {
      if (atLeast(version, since) && semver.lt(version, event.fixed)) return true;
      since = null;
    } else if (since !== null && 'last_affected' in event) {
      if (atLeast(version, since) && semver.lte(version, event.last_affected)) return true;
      since = null;
    }
  }
  return since !== null && atLeast(version, since);
}

const atLeast = (version: string, since: string) => since === '0' || semver.gte(version, since);

/** The advisories that affect an installed version. */
export function findings(packages: InstalledPackage[], snapshot: Snapshot): Finding[] {
  const out: Finding[] = [];
  for (const pkg of packages) {
    if (!semver.valid(pkg.version)) continue;
    for (const advisory of snapshot.advisories) {
      const hit = advisory.affected.some((a) => a.package === pkg.name && a.ranges.some((events) => inRange(pkg.version, events)));
      if (hit) out.push({ package: pkg, advisory });
    }
  }
  return out;
}

export const BLOCKING_SEVERITIES: ReadonlySet<string> = new Set(['HIGH', 'CRITICAL']);

/** OSV files of a github/advisory-database checkout, reduced to the npm packages of `names`. */
export function snapshotFrom(checkout: string, names: ReadonlySet<string>, retrieved: string): Snapshot {
  const advisories: Advisory[] = [];
  for (const file of osvFiles(path.join(checkout, 'advisories', 'github-reviewed'))) {
    const osv = JSON.parse(fs.readFileSync(file, 'utf8')) as OsvAdvisory;
    if (osv.withdrawn) continue;
    const affected = (osv.affected ?? [])
      .filter((a) => a.package?.ecosystem === 'npm' && names.has(a.package.name))
      .map((a) => ({ package: a.package.name, ranges: (a.ranges ?? []).filter((r) => r.type !== 'GIT').map((r) => r.events) }));
    if (!affected.length) continue;
    const { id, aliases = [], summary = '', published, modified } = osv;
    advisories.push({ id, aliases, summary, severity: osv.database_specific?.severity ?? 'UNKNOWN', published, modified, affected });
  }
  advisories.sort((a, b) => a.id.localeCompare(b.id));
  return {
    source: 'GitHub Advisory Database (github/advisory-database, advisories/github-reviewed), npm packages of the production dependencies',
    licence: 'CC-BY-4.0',
    retrieved,
    advisories,
  };
}

interface OsvAdvisory {
  id: string;
  aliases?: string[];
  summary?: string;
  published: string;
  modified: string;
  withdrawn?: string;
  affected?: Array<{ package: { ecosystem: string; name: string }; ranges?: Array<{ type: string; events: RangeEvent[] }> }>;
  database_specific?: { severity?: string };
}

function* osvFiles(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* osvFiles(full);
    else if (entry.name.endsWith('.json')) yield full;
  }
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

function report(found: Finding[], snapshot: Snapshot): number {
  console.log(`advisories: ${snapshot.advisories.length} from ${snapshot.source}, retrieved ${snapshot.retrieved}`);
  for (const { package: pkg, advisory } of found) {
    console.log(`${advisory.severity.padEnd(8)} ${pkg.name}@${pkg.version} (${pkg.location}): ${advisory.id} ${advisory.summary}`);
  }
  const blocking = found.filter((f) => BLOCKING_SEVERITIES.has(f.advisory.severity));
  console.log(
    blocking.length
      ? `${blocking.length} high or critical advisories affect production dependencies`
      : 'no high or critical advisory affects a production dependency',
  );
  return blocking.length ? 1 : 0;
}

function main(args: string[]): number {
  const lockfile = readJson<Lockfile>(LOCKFILE);
  const packages = productionPackages(lockfile);
  if (args[0] === '--refresh') {
    if (!args[1]) throw new Error('--refresh needs the path of a github/advisory-database checkout');
    const snapshot = snapshotFrom(args[1], new Set(packages.map((p) => p.name)), new Date().toISOString().slice(0, 10));
    fs.writeFileSync(SNAPSHOT_FILE, JSON.stringify(snapshot, null, 2) + '\n');
    console.log(`wrote ${snapshot.advisories.length} advisories to ${path.relative(process.cwd(), SNAPSHOT_FILE)}`);
    return 0;
  }
  const snapshot = readJson<Snapshot>(SNAPSHOT_FILE);
  return report(findings(packages, snapshot), snapshot);
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
