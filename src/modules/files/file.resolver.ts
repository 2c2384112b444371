import { GraphQLUpload, type FileUpload } from 'graphql-upload-minimal';
import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { badRequest } from '../../errors';
import type { GraphQLContext } from '../../graphql/context';
import { toFileType } from './file.mapper';
import { FilesArgs } from './file.inputs';
import { FilePageType, FilePurposeEnum, FileType } from './file.types';
import { drain, failOnTruncation, fromUploadError } from './file.upload';

/** GraphQL pages are smaller than REST's (api.md §8: page sizes ≤ 100). */
const MAX_GRAPHQL_PAGE = 100;

/** `FINE_TUNE` → `fine-tune`; REST spellings pass through (the service judges them). */
function restPurpose(purpose: string | undefined): string | undefined {
  if (purpose === undefined) return undefined;
  return (FilePurposeEnum as Record<string, string>)[purpose] ?? purpose;
}

@Resolver(() => FileType)
export class FileResolver {
  @Query(() => FileType)
  async file(
    @Ctx() ctx: GraphQLContext,
    @Arg('id', () => ID) id: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    return toFileType(await ctx.services.files.get(await ctx.scope(workspaceId), id));
  }

  @Query(() => FilePageType, { description: 'Newest first.' })
  async files(@Ctx() ctx: GraphQLContext, @Args(() => FilesArgs) args: FilesArgs) {
    if (args.limit !== undefined && args.limit !== null && (args.limit < 1 || args.limit > MAX_GRAPHQL_PAGE)) {
      throw badRequest(`limit must be an integer between 1 and ${MAX_GRAPHQL_PAGE}`, 'limit');
    }
    const page = await ctx.services.files.list(await ctx.scope(args.workspaceId), {
      purpose: restPurpose(args.purpose ?? undefined),
      limit: args.limit ?? MAX_GRAPHQL_PAGE,
      after: args.after ?? undefined,
    });
    return { items: page.items.map(toFileType), hasMore: page.hasMore };
  }

  @Mutation(() => FileType, { description: 'A multipart request (GraphQL multipart request spec) with header apollo-require-preflight.' })
  async uploadFile(
    @Ctx() ctx: GraphQLContext,
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Arg('purpose', () => FilePurposeEnum) purpose: FilePurposeEnum,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    const { files } = ctx.services;
    let stream: NodeJS.ReadableStream | undefined;
    try {
      const upload = await file;
      stream = upload.createReadStream();
      failOnTruncation(stream, files.maxUploadBytes);
      const scope = await ctx.scope(workspaceId);
      return toFileType(await files.upload(scope, { filename: upload.filename, purpose, stream }));
    } catch (err) {
      drain(stream);
      throw fromUploadError(err, files.maxUploadBytes);
    }
  }

  @Mutation(() => Boolean)
  async deleteFile(
    @Ctx() ctx: GraphQLContext,
    @Arg('id', () => ID) id: string,
    @Arg('workspaceId', () => String, { nullable: true }) workspaceId?: string,
  ) {
    await ctx.services.files.delete(await ctx.scope(workspaceId), id);
    return true;
  }
}
