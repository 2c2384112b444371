/**
 * The production dependencies in package-lock.json against the vendored advisory snapshot
 * (security/advisories.json, `npm run audit:deps`): this test fails when a high or critical advisory
 * affects an installed production version.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BLOCKING_SEVERITIES, findings, productionPackages, snapshotFrom, SNAPSHOT_FILE, type Snapshot } from '../../scripts/audit-deps';

const snapshot: Snapshot = JSON.parse(fs.readFileSync(SNAPSHOT_FILE, 'utf8'));
const lockfile = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package-lock.json'), 'utf8'));

const lock = (packages: Record<string, { version: string; dev?: boolean }>) => ({ packages: { '': {}, ...packages } });
const ids = (found: ReturnType<typeof findings>) => found.map((f) => `${f.package.name}@${f.package.version} ${f.advisory.id}`);

describe('production dependencies', () => {
  it('have no high or critical advisory in the snapshot', () => {
    const blocking = findings(productionPackages(lockfile), snapshot).filter((f) => BLOCKING_SEVERITIES.has(f.advisory.severity));
    expect(ids(blocking)).toEqual([]);
  });

  it('are read from the lockfile without dev dependencies, nested copies included', () => {
    const packages = productionPackages(lockfile);
    expect(packages).toContainEqual({ name: 'express', version: lockfile.packages['node_modules/express'].version, location: 'node_modules/express' });
    expect(packages.map((p) => p.name)).not.toContain('jest');
    expect(packages.some((p) => p.location.includes('/node_modules/') && p.location.indexOf('node_modules/') !== p.location.lastIndexOf('node_modules/'))).toBe(
      true,
    );
  });

  it('the snapshot names its source, licence and date', () => {
    expect(snapshot).toMatchObject({
      source: expect.stringContaining('github/advisory-database'),
      licence: 'CC-BY-4.0',
      retrieved: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    expect(snapshot.advisories.length).toBeGreaterThan(0);
  });
});

describe('the check', () => {
  it('finds a high advisory in an affected production version, and none in a fixed one or a dev dependency', () => {
    const affected = lock({ 'node_modules/body-parser': { version: '1.20.2' }, 'node_modules/x/node_modules/qs': { version: '6.10.1' } });
    expect(ids(findings(productionPackages(affected), snapshot))).toEqual(['body-parser@1.20.2 GHSA-qwcr-r2fm-qrc7', 'qs@6.10.1 GHSA-hrpp-h998-j3pp']);
    const fixed = lock({ 'node_modules/body-parser': { version: '1.20.3' }, 'node_modules/qs': { version: '6.10.3' } });
    expect(findings(productionPackages(fixed), snapshot)).toEqual([]);
    const dev = lock({ 'node_modules/body-parser': { version: '1.20.2', dev: true } });
    expect(findings(productionPackages(dev), snapshot)).toEqual([]);
  });

  it('reads OSV ranges: several spans, pre-releases, last_affected, open ends', () => {
    const advisory = (events: object[][]) => ({
      source: '',
      licence: '',
      retrieved: '',
      advisories: [
        { id: 'GHSA-test', aliases: [], summary: '', severity: 'HIGH', published: '', modified: '', affected: [{ package: 'p', ranges: events as never }] },
      ],
    });
    const hit = (version: string, events: object[][]) => findings([{ name: 'p', version, location: 'node_modules/p' }], advisory(events)).length === 1;
    const express = [
      [{ introduced: '0' }, { fixed: '4.19.2' }],
      [{ introduced: '5.0.0-alpha.1' }, { fixed: '5.0.0-beta.3' }],
    ];
    expect([hit('4.19.1', express), hit('4.19.2', express), hit('5.0.0-beta.1', express), hit('5.0.0', express)]).toEqual([true, false, true, false]);
    const lastAffected = [[{ introduced: '2.0.0' }, { last_affected: '2.4.11' }]];
    expect([hit('1.9.9', lastAffected), hit('2.4.11', lastAffected), hit('2.4.12', lastAffected)]).toEqual([false, true, false]);
    const open = [[{ introduced: '3.1.0' }]];
    expect([hit('3.0.9', open), hit('9.0.0', open)]).toEqual([false, true]);
  });

  it('rebuilds the snapshot from an advisory-database checkout, keeping the npm advisories of the given packages', () => {
    const checkout = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-advisories-'));
    try {
      const write = (id: string, osv: object) => {
        const dir = path.join(checkout, 'advisories', 'github-reviewed', '2026', '01', id);
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify({ id, published: '2026-01-01T00:00:00Z', modified: '2026-01-02T00:00:00Z', ...osv }));
      };
      const affected = (ecosystem: string, name: string) => [
        { package: { ecosystem, name }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '2.0.0' }] }] },
      ];
      write('GHSA-aaaa-aaaa-aaaa', { summary: 'kept', affected: affected('npm', 'express'), database_specific: { severity: 'HIGH' } });
      write('GHSA-bbbb-bbbb-bbbb', { summary: 'another ecosystem', affected: affected('PyPI', 'express') });
      write('GHSA-cccc-cccc-cccc', { summary: 'not a dependency', affected: affected('npm', 'left-pad') });
      write('GHSA-dddd-dddd-dddd', { summary: 'withdrawn', withdrawn: '2026-01-03T00:00:00Z', affected: affected('npm', 'express') });
      const rebuilt = snapshotFrom(checkout, new Set(['express']), '2026-11-27');
      expect(rebuilt.advisories).toEqual([
        {
          id: 'GHSA-aaaa-aaaa-aaaa',
          aliases: [],
          summary: 'kept',
          severity: 'HIGH',
          published: '2026-01-01T00:00:00Z',
          modified: '2026-01-02T00:00:00Z',
          affected: [{ package: 'express', ranges: [[{ introduced: '0' }, { fixed: '2.0.0' }]] }],
        },
      ]);
      expect(rebuilt).toMatchObject({ licence: 'CC-BY-4.0', retrieved: '2026-11-27' });
    } finally {
      fs.rmSync(checkout, { recursive: true, force: true });
    }
  });
});
