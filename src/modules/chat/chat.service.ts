/**
 * Chat completions with a fine-tuned model (api.md §9). Provider mode (no `x-gateway-provider`):
 * `model` names a succeeded hosted job of the workspace, and the call goes to that job's provider
 * with its integration's credentials, the job's settings and any non-secret settings of the request
 * (a deployment to call, say). Client mode: the provider and credentials the request names, as for
 * files and jobs — or `model: "@slug/<provider model id>"`, a stored integration without headers.
 * Either way prompt partials are expanded first, with one lookup for all of them.
 */
import type { LazyScope } from '../../auth/scope';
import type { ProviderClient } from '../../providers/registry';
import type { ChatRequestMessage } from '../../providers/chat-request';
import type { ChatAnswer } from '../../providers/types';
import { invalidField } from '../../errors';
import { parseInput, type Input } from '../../validation/parse';
import { PROVIDER_HEADER, type RequestHeaders } from '../../http/provider-headers';
import type { ClientModeService } from '../client-mode/client-mode.service';
import type { HostedJob } from '../fine-tuning/fine-tuning.model';
import type { IntegrationSource } from '../integrations/integration.port';
import type { ModelService } from '../models/model.service';
import type { PartialService } from '../partials/partial.service';
import { chatCallFacts, unmetered, type ChatMeter } from '../usage/usage.recorder';
import { chatCompletionSchema, type ChatCompletionInput } from './chat.schemas';
import type { HostedCache } from './hosted.cache';
import { expandPartials, partialSlugs, type ExpansionLimits } from './partial-expansion';
import { StallGuard } from './stall-guard';

export interface ChatReply {
  answer: ChatAnswer;
  /** `stream_options.include_usage`: a streamed answer ends with a usage chunk. */
  includeUsage: boolean;
  /** How many choices the answer has (`n`). */
  choices: number;
}

export class ChatService {
  constructor(
    private readonly models: ModelService,
    private readonly partials: Pick<PartialService, 'defaultTexts'>,
    private readonly integrations: IntegrationSource,
    private readonly clientMode: ClientModeService,
    /** How long a provider may send nothing (before its answer, or between two chunks of a stream). */
    private readonly stallTimeoutMs: number,
    /** How large the messages may grow with their prompt partials expanded. */
    private readonly expansionLimits: ExpansionLimits,
    /** Hosted routes and partial texts by workspace: a warm call runs no statement. */
    private readonly cache: HostedCache,
  ) {}

  /**
   * Answers the request; `signal` is aborted when the caller goes away, and ends the provider call.
   * `settings` are the request's headers (REST) or their GraphQL equivalent; `meter` records the call's usage.
   */
  async complete(
    scope: LazyScope,
    settings: RequestHeaders,
    input: Input<ChatCompletionInput>,
    signal: AbortSignal,
    meter: ChatMeter = unmetered,
  ): Promise<ChatReply> {
    const body = parseInput(chatCompletionSchema, input);
    const messages = await this.expand(scope, body.messages);
    const { provider, model, hosted, job, via } = await this.route(scope, settings, body.model);
    const guard = new StallGuard(this.stallTimeoutMs, signal);
    const call = provider.chat({ model, hosted, body: { ...body, messages }, signal: guard.signal });
    const facts = chatCallFacts({ scope, provider: provider.name, named: via, model: body.model, streamed: body.stream ?? false, job });
    const answer = await guard.answer(call, provider.title, meter(facts));
    // The caller sees the model it asked for, not the endpoint or deployment that served it.
    const named = answer.stream ? { ...answer, model: body.model } : { ...answer, completion: { ...answer.completion, model: body.model } };
    return { answer: named, includeUsage: body.stream_options?.include_usage ?? false, choices: body.n ?? 1 };
  }

  /** The messages with their partials expanded in text content, within the limits (which hold for messages without partials too). */
  private async expand(scope: LazyScope, messages: ChatRequestMessage[]): Promise<ChatRequestMessage[]> {
    const slugs = partialSlugs(messages);
    if (!slugs.length) return expandPartials(messages, new Map(), this.expansionLimits);
    const workspace = await scope();
    const texts = await this.cache.partialTexts(workspace.workspaceId, slugs, (missing) => this.partials.defaultTexts(workspace, missing));
    return expandPartials(messages, texts, this.expansionLimits);
  }

  /** The provider to call, the model to ask it for, and what named the provider (`via`: the header, or the `@slug` of `model`). */
  private async route(
    scope: LazyScope,
    settings: RequestHeaders,
    model: string,
  ): Promise<{ provider: ProviderClient; model: string; hosted: boolean; job?: HostedJob; via?: string }> {
    const named = settings[PROVIDER_HEADER];
    if (named !== undefined) return { provider: await this.clientMode.provider(scope, settings), model, hosted: false, via: named };
    const slugged = integrationModel(model);
    if (slugged) {
      const provider = await this.clientMode.integrationProvider(scope, slugged.ref, settings, 'model');
      return { provider, model: slugged.model, hosted: false, via: slugged.ref };
    }
    const workspace = await scope();
    const { job, integration } = await this.cache.route(workspace.workspaceId, model, async () => {
      const serving = await this.models.servingJob(workspace, model);
      return { job: serving, integration: await this.integrations.resolve(workspace, `@${serving.integrationSlug}`, 'model') };
    });
    // The job's integration and settings, then the request's (non-secret) ones on top.
    const provider = this.integrations.hostedClient(job, integration, 'model', settings);
    return { provider, model: job.servingModel ?? job.fineTunedModel ?? model, hosted: true, job };
  }
}

/**
 * `@slug/<provider model id>`: a model of a stored integration, without client-mode headers (as other
 * gateways spell it). The id is everything after the first slash, so it may hold slashes itself
 * (`accounts/fireworks/models/…`); the slug is checked when the integration is looked up.
 */
function integrationModel(model: string): { ref: string; model: string } | undefined {
  if (!model.startsWith('@')) return undefined;
  const slash = model.indexOf('/');
  const id = slash < 0 ? '' : model.slice(slash + 1);
  if (!id.trim()) throw invalidField('model', 'names a stored integration as "@slug/<provider model id>"; the model id after the slash is missing');
  return { ref: model.slice(0, slash), model: id };
}
