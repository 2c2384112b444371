/** What of OpenAI's chat request generateContent carries; a caller's image URL would make the gateway fetch it. */
import type { ChatSupport } from '../chat-fields';

export const VERTEX_CHAT_SUPPORT: ChatSupport = {
  fields: ['max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'seed', 'stream_options'],
  unknownFields: false,
};
