import { GraphQLUpload, type FileUpload } from 'graphql-upload-minimal';
import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { Scope } from '../../auth/scope';
import type { AppContext } from '../../context';
import { badRequest } from '../../errors';
import { pageCost } from '../../graphql/cost';
import { WorkspaceScope } from '../../graphql/scope';
import { toFileType } from './file.mapper';
import { FilesArgs } from './file.inputs';
import type { FilePurpose } from './file.schemas';
import { FilePageType, FilePurposeEnum, FileType } from './file.types';
import { drain, failOnTruncation, fromUploadError } from './file.upload';
import { loadByIds, registerEntity } from '../../graphql/entity';

// Federation entities: references resolve through the same service methods as the queries (graphql/entity.ts).
registerEntity(
  FileType,
  loadByIds((scope, ids, ctx: AppContext) => ctx.services.files.findMany(scope, ids), toFileType),
);

/** GraphQL pages are smaller than REST's (api.md §8: page sizes ≤ 100). */
const MAX_GRAPHQL_PAGE = 100;

const PURPOSE_BY_NAME = new Map<string, string>(Object.entries(FilePurposeEnum));

/** `FINE_TUNE` → `fine-tune`; REST spellings pass through (the service judges them). */
const restPurpose = (purpose: string | null | undefined) => (purpose == null ? undefined : (PURPOSE_BY_NAME.get(purpose) ?? purpose));

@Resolver(() => FileType)
export class FileResolver {
  @Query(() => FileType)
  async file(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    return toFileType(await ctx.services.files.get(scope, id));
  }

  @Query(() => FilePageType, { description: 'Newest first.', complexity: pageCost('limit', MAX_GRAPHQL_PAGE) })
  async files(@Ctx() ctx: AppContext, @Args(() => FilesArgs) args: FilesArgs, @WorkspaceScope() scope: Scope) {
    if (args.limit != null && (args.limit < 1 || args.limit > MAX_GRAPHQL_PAGE)) {
      throw badRequest(`limit must be an integer between 1 and ${MAX_GRAPHQL_PAGE}`, 'limit');
    }
    const page = await ctx.services.files.list(scope, {
      purpose: restPurpose(args.purpose),
      limit: args.limit ?? MAX_GRAPHQL_PAGE,
      after: args.after ?? undefined,
    });
    return { items: page.items.map(toFileType), hasMore: page.hasMore };
  }

  @Mutation(() => FileType, { description: 'A multipart request (GraphQL multipart request spec) with header apollo-require-preflight.' })
  async uploadFile(
    @Ctx() ctx: AppContext,
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Arg('purpose', () => FilePurposeEnum) purpose: FilePurpose,
    @WorkspaceScope() scope: Scope,
  ) {
    const { files } = ctx.services;
    let stream: NodeJS.ReadableStream | undefined;
    try {
      const upload = await file;
      stream = upload.createReadStream();
      failOnTruncation(stream, files.maxUploadBytes);
      return toFileType(await files.upload(scope, { filename: upload.filename, purpose, stream }));
    } catch (err) {
      drain(stream);
      throw fromUploadError(err, files.maxUploadBytes);
    }
  }

  @Mutation(() => Boolean)
  async deleteFile(@Ctx() ctx: AppContext, @Arg('id', () => ID) id: string, @WorkspaceScope() scope: Scope) {
    await ctx.services.files.delete(scope, id);
    return true;
  }
}

export const filesGraphQL = { resolvers: [FileResolver] };
