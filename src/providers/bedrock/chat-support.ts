/**
 * What of OpenAI's chat request Converse carries (declared apart from ./chat.ts, which loads the AWS
 * SDK on the first Bedrock call). Converse has no seed, penalties, token biases, log probabilities or
 * several choices; JSON mode is a forced tool (./chat-mappers.ts); a caller's image URL would make
 * the gateway fetch it, so images come as `data:` URLs only.
 */
import type { ChatSupport } from '../chat-fields';

export const BEDROCK_CHAT_SUPPORT: ChatSupport = {
  fields: [
    'tools',
    'tool_choice',
    'response_format.json_object',
    'response_format.json_schema',
    'image_url (data: URL)',
    'max_tokens',
    'max_completion_tokens',
    'temperature',
    'top_p',
    'stop',
    'stream_options',
  ],
  unknownFields: false,
};
