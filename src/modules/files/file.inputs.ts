import { ArgsType, Field, Int } from 'type-graphql';

@ArgsType()
export class FilesArgs {
  @Field(() => String, { nullable: true, description: 'A purpose, as in REST ("fine-tune") or as the enum name ("FINE_TUNE").' })
  purpose?: string;

  @Field(() => Int, { nullable: true, description: '1..100, default 100.' })
  limit?: number;

  @Field(() => String, { nullable: true, description: 'Cursor: the id of the last file of the previous page (newest first).' })
  after?: string;
}
