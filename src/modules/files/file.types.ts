import { GraphQLSafeInt } from 'graphql-scalars';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { itemCost } from '../../graphql/cost';
import type { FilePurpose } from './file.schemas';

/** The REST purpose values; GraphQL names are the same upper-cased with `_` (api.md §8). */
export const FilePurposeEnum = {
  FINE_TUNE: 'fine-tune',
  BATCH: 'batch',
  ASSISTANTS: 'assistants',
  VISION: 'vision',
  USER_DATA: 'user_data',
  EVALS: 'evals',
  BATCH_OUTPUT: 'batch_output',
} as const satisfies Record<string, FilePurpose>;

registerEnumType(FilePurposeEnum, { name: 'FilePurpose', description: 'What a file is for; FINE_TUNE files are validated as JSONL datasets.' });

@ObjectType('File', { description: 'A file hosted by the gateway.' })
export class FileType {
  @Field(() => ID) id!: string;
  @Field() filename!: string;
  @Field(() => FilePurposeEnum) purpose!: FilePurpose;
  @Field(() => GraphQLSafeInt, { description: 'Size in bytes.' }) bytes!: number;
  @Field({ description: 'Lowercase hex SHA-256 of the content.' }) sha256!: string;
  @Field({ description: 'Always "processed": a file is recorded once stored and validated.' }) status!: string;
  @Field(() => ID) organisationId!: string;
  @Field(() => ID) workspaceId!: string;
  @Field() createdAt!: Date;
}

@ObjectType('FilePage')
export class FilePageType {
  @Field(() => [FileType], { complexity: itemCost }) items!: FileType[];
  @Field() hasMore!: boolean;
}
