/** Fireworks AI's fine-tuning job options (`provider_options`). */
import { z } from 'zod';

export const fireworksJobOptions = z.object({
  learningRate: z.number().positive().max(1).optional().describe('The absolute learning rate (Fireworks takes no multiplier).'),
});
