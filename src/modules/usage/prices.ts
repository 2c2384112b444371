/**
 * The price table for `/v1/organization/costs`, from the JSON file GATEWAY_PRICES_FILE names: prices
 * per million tokens, per model as the ledger records it (the model the caller named).
 *
 *     { "currency": "usd",
 *       "models": { "gpt-4o-mini": { "input": 0.15, "cached_input": 0.075, "output": 0.6, "batch_discount": 0.5, "training": 3 } } }
 *
 * A model the table does not name has no price: its usage is reported as unpriced, never as 0.
 */
import fs from 'node:fs';
import { z } from 'zod';

const price = z.number().min(0).finite();

const modelPrices = z
  .object({
    input: price,
    /** Cached input tokens; the input price when absent. */
    cached_input: price.optional(),
    output: price,
    /** The fraction taken off batch calls (0.5: half price). */
    batch_discount: z.number().min(0).max(1).optional(),
    /** Fine-tuning, per trained token. */
    training: price.optional(),
  })
  .strict();

const priceFile = z.object({ currency: z.string().regex(/^[a-z]{3}$/), models: z.record(z.string().min(1), modelPrices) }).strict();

export interface ModelPrices {
  input: number;
  cachedInput: number;
  output: number;
  batchDiscount: number;
  training: number | null;
}

export interface PriceTable {
  currency: string;
  /** Prices per token of one model; undefined when the table has none. */
  of(model: string): ModelPrices | undefined;
}

const PER_MILLION = 1_000_000;

/** The table, or null without a file; a file that is missing or invalid stops the start with the reason. */
export function loadPrices(file: string | undefined): PriceTable | null {
  if (!file) return null;
  let parsed: z.infer<typeof priceFile>;
  try {
    parsed = priceFile.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (err) {
    const reason = err instanceof z.ZodError ? err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : (err as Error).message;
    throw new Error(`Invalid configuration: GATEWAY_PRICES_FILE: ${reason}`);
  }
  const models = new Map(
    Object.entries(parsed.models).map(([model, p]) => [
      model,
      {
        input: p.input / PER_MILLION,
        cachedInput: (p.cached_input ?? p.input) / PER_MILLION,
        output: p.output / PER_MILLION,
        batchDiscount: p.batch_discount ?? 0,
        training: p.training === undefined ? null : p.training / PER_MILLION,
      },
    ]),
  );
  return { currency: parsed.currency, of: (model) => models.get(model) };
}
