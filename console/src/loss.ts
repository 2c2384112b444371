/** Training-loss points of a job, from its checkpoints' metrics and its `metrics` events. */
export interface LossPoint {
  step: number;
  loss: number;
}

interface CheckpointLike {
  stepNumber: number;
  metrics: Record<string, unknown>;
}

interface EventLike {
  type?: string | null;
  data?: unknown;
}

const LOSS_KEYS = ['train_loss', 'loss', 'training_loss'];

function lossOf(values: Record<string, unknown>): number | undefined {
  for (const key of LOSS_KEYS) {
    const value = values[key];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return undefined;
}

/** One point per step (a checkpoint wins over an event of the same step), in step order. */
export function lossPoints(checkpoints: CheckpointLike[], events: EventLike[]): LossPoint[] {
  const byStep = new Map<number, number>();
  for (const event of events) {
    if (event.type !== 'metrics' || typeof event.data !== 'object' || event.data === null) continue;
    const data = event.data as Record<string, unknown>;
    const loss = lossOf(data);
    if (typeof data.step === 'number' && loss !== undefined) byStep.set(data.step, loss);
  }
  for (const checkpoint of checkpoints) {
    const loss = lossOf(checkpoint.metrics);
    if (loss !== undefined) byStep.set(checkpoint.stepNumber, loss);
  }
  return [...byStep.entries()].sort(([a], [b]) => a - b).map(([step, loss]) => ({ step, loss }));
}
