/**
 * Gemini's content shapes for the fake Vertex AI: `contents` / `parts` / `systemInstruction` as requests
 * and supervised-tuning datasets carry them (checked as Vertex checks them), the statistics Vertex reports
 * about a tuning dataset, and `GenerateContentResponse`s carrying the shared deterministic answer.
 */
import { randomBytes } from 'node:crypto';
import { countTokens, type ChatMessage, type FakeAnswer } from './chat';

export interface GeminiPart {
  text?: string;
  [kind: string]: unknown;
}

export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
}

/** The kinds of data a part may carry; exactly one per part. */
const PART_KINDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const ROLES = ['user', 'model'];
/** The fields of one line of a Gemini supervised-tuning dataset. */
const EXAMPLE_FIELDS = ['contents', 'systemInstruction', 'system_instruction', 'tools'];

const NO_PARTS = 'Unable to submit request because it must include at least one parts field, which describes the prompt input.';

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

function partProblem(part: unknown): string | null {
  if (!isObject(part)) return 'a part must be an object';
  const kinds = Object.keys(part).filter((key) => PART_KINDS.includes(key));
  if (kinds.length !== 1) return `a part must hold exactly one of ${PART_KINDS.join(', ')}`;
  if (kinds[0] === 'text' && typeof part.text !== 'string') return 'part.text must be a string';
  return null;
}

function partsProblem(parts: unknown): string | null {
  if (!Array.isArray(parts) || parts.length === 0) return NO_PARTS;
  for (const part of parts) {
    const problem = partProblem(part);
    if (problem) return problem;
  }
  return null;
}

/**
 * Why `contents` is not a valid conversation, or null. A request may leave a role out (it means `user`);
 * a tuning example may not.
 */
export function contentsProblem(contents: unknown, roleRequired: boolean): string | null {
  if (!Array.isArray(contents) || contents.length === 0) return NO_PARTS;
  for (const content of contents) {
    if (!isObject(content)) return 'contents must be a list of objects';
    if ((roleRequired || content.role !== undefined) && !ROLES.includes(content.role as string)) return 'Please use a valid role: user, model.';
    const problem = partsProblem(content.parts);
    if (problem) return problem;
  }
  return null;
}

export function systemInstructionProblem(instruction: unknown): string | null {
  if (instruction === undefined) return null;
  if (!isObject(instruction)) return 'systemInstruction must be a Content object';
  return partsProblem(instruction.parts);
}

/** Why one parsed line of a tuning dataset is not a Gemini example, or null. An OpenAI `messages` line fails here. */
export function tuningExampleProblem(example: unknown): string | null {
  if (!isObject(example)) return 'each line must be a JSON object';
  const unknown = Object.keys(example).find((key) => !EXAMPLE_FIELDS.includes(key));
  if (unknown) return `Unknown name "${unknown}": Cannot find field.`;
  const problem = contentsProblem(example.contents, true) ?? systemInstructionProblem(example.systemInstruction ?? example.system_instruction);
  if (problem) return problem;
  const contents = example.contents as GeminiContent[];
  return contents.at(-1)!.role === 'model' ? null : 'the last content of an example must have the role "model"';
}

const textOfParts = (parts: GeminiPart[] | undefined) => (parts ?? []).map((part) => part.text ?? '').join('');

/** A Gemini conversation as chat messages (`model` → `assistant`), for the shared fake answer. */
export function chatMessagesOf(contents: GeminiContent[], systemInstruction?: { parts?: GeminiPart[] }): ChatMessage[] {
  const system: ChatMessage[] = systemInstruction ? [{ role: 'system', content: textOfParts(systemInstruction.parts) }] : [];
  return [...system, ...contents.map((c) => ({ role: c.role === 'model' ? 'assistant' : 'user', content: textOfParts(c.parts) }))];
}

export interface DatasetStats {
  examples: number;
  characters: number;
  /** Per example: tokens of what the model reads (system + user turns) and of what it learns to write. */
  inputTokens: number[];
  outputTokens: number[];
  /** Per example: how many contents (turns) it holds. */
  turns: number[];
}

/** What Vertex reports about a (valid) dataset once tuning starts. */
export function datasetStats(examples: { contents: GeminiContent[]; systemInstruction?: { parts?: GeminiPart[] } }[]): DatasetStats {
  const stats: DatasetStats = { examples: examples.length, characters: 0, inputTokens: [], outputTokens: [], turns: [] };
  for (const example of examples) {
    let input = example.systemInstruction ? textOfParts(example.systemInstruction.parts) : '';
    let output = '';
    for (const content of example.contents) {
      if (content.role === 'model') output += textOfParts(content.parts);
      else input += textOfParts(content.parts);
    }
    stats.characters += input.length + output.length;
    stats.inputTokens.push(countTokens(input));
    stats.outputTokens.push(countTokens(output));
    stats.turns.push(example.contents.length);
  }
  return stats;
}

/** Vertex's `DatasetDistribution`: int64 sums as strings, the rest as numbers. */
export function distribution(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    sum: String(sum),
    billableSum: String(sum),
    min: sorted[0],
    max: sorted.at(-1),
    mean: sum / sorted.length,
    median: at(0.5),
    p5: at(0.05),
    p95: at(0.95),
  };
}

function usageMetadata(answer: FakeAnswer) {
  return {
    promptTokenCount: answer.promptTokens,
    candidatesTokenCount: answer.completionTokens,
    totalTokenCount: answer.promptTokens + answer.completionTokens,
    trafficType: 'ON_DEMAND',
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: answer.promptTokens }],
    candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: answer.completionTokens }],
  };
}

/** A whole `GenerateContentResponse`. */
export function generateContentResponse(modelVersion: string, answer: FakeAnswer) {
  return {
    candidates: [{ content: { role: 'model', parts: [{ text: answer.text }] }, finishReason: 'STOP' }],
    usageMetadata: usageMetadata(answer),
    modelVersion,
    createTime: new Date().toISOString(),
    responseId: randomBytes(15).toString('base64url'),
  };
}

/** The `GenerateContentResponse`s of a stream: one per piece of text; the last adds `finishReason` and the usage. */
export function streamedResponses(modelVersion: string, answer: FakeAnswer) {
  const createTime = new Date().toISOString();
  const responseId = randomBytes(15).toString('base64url');
  return answer.pieces.map((piece, i) => {
    const last = i === answer.pieces.length - 1;
    return {
      candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, ...(last ? { finishReason: 'STOP' } : {}) }],
      ...(last ? { usageMetadata: usageMetadata(answer) } : {}),
      modelVersion,
      createTime,
      responseId,
    };
  });
}
