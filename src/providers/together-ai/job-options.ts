/** Together AI's fine-tuning job options (`provider_options`). */
import { z } from 'zod';

export const togetherJobOptions = z.object({
  learningRate: z.number().positive().max(1).optional().describe('The absolute learning rate (Together takes no multiplier).'),
  trainingType: z.string().min(1).max(64).optional().describe('"lora" (the default) or "full".'),
});
