import { scopedLoader } from '../../graphql/scoped-loader';
import { notFound } from '../../errors';
import type { Collection, PromptPartialVersion } from '../../generated/prisma/client';
import type { AppContext } from '../../context';

const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((row) => [row.id, row]));

/** The partials domain's per-request DataLoaders (`ctx.loaders.get(partialLoaders)`). */
export function partialLoaders({ services }: AppContext) {
  const { partials } = services;
  return {
    /** Key: a partial's id; value: its versions, newest first. */
    versionsByPartial: scopedLoader<PromptPartialVersion[]>(
      async (scope, ids) => {
        const grouped = new Map<string, PromptPartialVersion[]>(ids.map((id) => [id, []]));
        for (const version of await partials.versionsOfPartials(scope, ids)) grouped.get(version.partialId)?.push(version);
        return grouped;
      },
      () => [],
    ),
    /** Key: a version's id. */
    versionById: scopedLoader<PromptPartialVersion>(
      async (scope, ids) => byId(await partials.versionsByIds(scope, ids)),
      (id) => notFound('Prompt partial version', id),
    ),
    /** Key: a collection's id. */
    collectionById: scopedLoader<Collection>(
      async (scope, ids) => byId(await partials.collectionsByIds(scope, ids)),
      (id) => notFound('Collection', id),
    ),
  };
}
