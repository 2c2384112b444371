/** Vertex AI's fine-tuning job options (`provider_options`). */
import { z } from 'zod';

export const vertexJobOptions = z.object({
  learningRate: z.number().positive().max(1).optional().describe('The absolute learning rate, for open models; Gemini models take learning_rate_multiplier.'),
});
