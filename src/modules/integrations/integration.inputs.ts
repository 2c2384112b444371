import { GraphQLJSON } from 'graphql-scalars';
import { Field, InputType } from 'type-graphql';
import { providerNames } from '../../providers/registry';

@InputType('CreateIntegrationInput')
export class CreateIntegrationInputType {
  @Field({ description: 'Unique per workspace; referenced as "@slug".' }) slug!: string;
  @Field({ description: `${providerNames()}.` }) provider!: string;
  @Field({ nullable: true, description: 'Defaults to the slug.' }) name?: string;
  // JSON rather than JSONObject: a scalar that refused a value would quote it in the error, and
  // this one holds secrets. The service checks the shape with messages that name keys only.
  @Field(() => GraphQLJSON, { description: 'Secrets, e.g. {"api_key": "..."} for openai. Stored encrypted, never returned.' })
  credentials!: unknown;
  @Field(() => GraphQLJSON, { nullable: true, description: 'Non-secret settings, e.g. {"organization": "..."} for openai.' })
  options?: unknown;
  @Field({ nullable: true, description: 'Workspace UUID or slug (organisation keys).' }) workspaceId?: string;
}

@InputType('UpdateIntegrationInput')
export class UpdateIntegrationInputType {
  @Field({ nullable: true, description: 'Unchanged if left out.' }) name?: string;
  // JSON for the same reason as at creation: values are secrets and never quoted back.
  @Field(() => GraphQLJSON, { nullable: true, description: 'New secrets (rotation), replacing the stored ones. Unchanged if left out.' })
  credentials?: unknown;
  @Field(() => GraphQLJSON, { nullable: true, description: 'New non-secret settings, replacing the stored ones. Unchanged if left out.' })
  options?: unknown;
}
