import { GraphQLJSON } from 'graphql-scalars';
import { Field, ID, InputType } from 'type-graphql';

@InputType('CreateBatchInput')
export class CreateBatchInputType {
  @Field(() => ID, { description: 'A gateway file id (purpose BATCH) of the workspace.' }) inputFile!: string;
  @Field({ nullable: true, description: 'Only `/v1/chat/completions` (the default).' }) endpoint?: string;
  @Field({ nullable: true, description: 'Only `24h` (the default).' }) completionWindow?: string;
  @Field(() => GraphQLJSON, { nullable: true, description: 'Up to 16 string key-value pairs.' }) metadata?: unknown;
  @Field({
    nullable: true,
    description:
      'The stored integration to send the requests with, as "@slug" (REST: gateway_options["x-gateway-provider"]); without it the model must be a fine-tuned model of the workspace.',
  })
  integration?: string;
  @Field(() => GraphQLJSON, {
    nullable: true,
    description: 'Further settings with their REST keys, e.g. {"x-gateway-batch-runner": "gateway"}; may also hold "x-gateway-provider".',
  })
  gatewayOptions?: unknown;
  @Field({ nullable: true, description: 'Workspace UUID or slug (organisation keys).' }) workspaceId?: string;
}
