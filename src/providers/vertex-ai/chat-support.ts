/**
 * What of OpenAI's chat request generateContent carries (translated in ./chat-mappers.ts). Gemini has
 * no token biases, reasoning effort, metadata, storage or service tiers, and no way to forbid
 * parallel calls; a caller's image URL would make the gateway fetch it, so images come as `data:` URLs.
 */
import { allChatFieldsBut, type ChatSupport } from '../chat-fields';

export const VERTEX_CHAT_SUPPORT: ChatSupport = {
  fields: allChatFieldsBut(
    'image_url (https URL)',
    'input_audio',
    'file',
    'parallel_tool_calls',
    'logit_bias',
    'reasoning_effort',
    'metadata',
    'store',
    'service_tier',
    'user',
  ),
  unknownFields: false,
};
