/**
 * Gemini's content shapes for the fake Vertex AI: `contents` / `parts` / `systemInstruction` as requests
 * and supervised-tuning datasets carry them (checked as Vertex checks them), the statistics Vertex reports
 * about a tuning dataset, and `GenerateContentResponse`s carrying the shared deterministic answer.
 */
import { randomBytes } from 'node:crypto';
import { countTokens } from './chat';
import { describeBytes, type FakeAnswer, type FakeConversation, type FakeTurn } from './fake-model';

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

/** What a user's part says to the fake model: its text, or its inline image described. */
function partText(part: GeminiPart): string {
  const inline = part.inlineData as { mimeType?: string; data?: string } | undefined;
  return inline ? describeBytes(String(inline.mimeType), Buffer.from(inline.data ?? '', 'base64').length) : (part.text ?? '');
}

/** A generate request as the fake model's conversation, checked as Gemini does: function responses answer the calls of the turn before. */
export function geminiConversation(request: Record<string, any>): FakeConversation {
  const turns: FakeTurn[] = request.systemInstruction ? [{ role: 'system', text: textOfParts(request.systemInstruction.parts) }] : [];
  let calls: string[] = [];
  for (const content of request.contents as GeminiContent[]) {
    const responses = content.parts.filter((p) => p.functionResponse);
    if (responses.length && responses.length !== calls.length) {
      throw new Error('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
    }
    for (const part of responses) {
      const response = part.functionResponse as { name?: string; response?: { content?: unknown } };
      turns.push({ role: 'tool', text: typeof response.response?.content === 'string' ? response.response.content : JSON.stringify(response.response) });
    }
    const said = content.parts
      .filter((p) => !p.functionResponse && !p.functionCall)
      .map(partText)
      .join('');
    if (said || !responses.length) turns.push({ role: content.role === 'model' ? 'assistant' : 'user', text: said });
    calls = content.role === 'model' ? content.parts.flatMap((p) => (p.functionCall ? [String((p.functionCall as { name?: unknown }).name)] : [])) : [];
  }
  const declarations = ((request.tools ?? []) as { functionDeclarations?: { name: string; parameters?: unknown }[] }[]).flatMap(
    (t) => t.functionDeclarations ?? [],
  );
  const config = request.toolConfig?.functionCallingConfig as { mode?: string; allowedFunctionNames?: string[] } | undefined;
  const generation = (request.generationConfig ?? {}) as Record<string, any>;
  return {
    turns,
    tools: declarations.map((d) => ({ name: d.name, schema: d.parameters })),
    toolChoice:
      config?.mode === 'NONE'
        ? 'none'
        : config?.mode === 'ANY'
          ? config.allowedFunctionNames?.length
            ? { name: config.allowedFunctionNames[0] }
            : 'required'
          : 'auto',
    json: generation.responseMimeType === 'application/json' ? { schema: generation.responseSchema } : undefined,
  };
}

/** What of the generation config shapes the answer: candidates and log probabilities. */
export interface GeminiShape {
  candidates: number;
  /** Top candidates per token, when `responseLogprobs` asked for log probabilities. */
  logprobs?: number;
}

export const geminiShapeOf = (request: Record<string, any>): GeminiShape => {
  const generation = (request.generationConfig ?? {}) as Record<string, any>;
  return { candidates: generation.candidateCount ?? 1, logprobs: generation.responseLogprobs ? (generation.logprobs ?? 0) : undefined };
};

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

const logprobsResult = (pieces: string[], top: number) => ({
  chosenCandidates: pieces.map((token) => ({ token, logProbability: -0.25 })),
  topCandidates: pieces.map((token) => ({
    candidates: Array.from({ length: top }, (_, i) => ({ token: i ? `${token}~${i}` : token, logProbability: -0.25 * (i + 1) })),
  })),
});

/** A candidate of the answer holding `pieces` of its text (and, on the last, its function calls and finish reason). */
function candidate(index: number, answer: FakeAnswer, pieces: string[], last: boolean, shape: GeminiShape) {
  const calls = last ? answer.toolCalls.map((c) => ({ functionCall: { name: c.name, args: JSON.parse(c.arguments) as unknown } })) : [];
  // Gemini has no refusal field: a refusal is its text.
  const text = pieces.join('') || (last && answer.refusal ? answer.refusal : '');
  return {
    index,
    content: { role: 'model', parts: [...(text ? [{ text }] : []), ...calls] },
    ...(shape.logprobs !== undefined && pieces.length ? { logprobsResult: logprobsResult(pieces, shape.logprobs) } : {}),
    ...(last ? { finishReason: 'STOP' } : {}),
  };
}

/** A whole `GenerateContentResponse`. */
export function generateContentResponse(modelVersion: string, answer: FakeAnswer, shape: GeminiShape = { candidates: 1 }) {
  return {
    candidates: Array.from({ length: shape.candidates }, (_, i) => candidate(i, answer, answer.pieces, true, shape)),
    usageMetadata: usageMetadata(answer),
    modelVersion,
    createTime: new Date().toISOString(),
    responseId: randomBytes(15).toString('base64url'),
  };
}

/** The `GenerateContentResponse`s of a stream: one per piece of text (function calls come whole, in the last); the last adds `finishReason` and the usage. */
export function streamedResponses(modelVersion: string, answer: FakeAnswer, shape: GeminiShape = { candidates: 1 }) {
  const createTime = new Date().toISOString();
  const responseId = randomBytes(15).toString('base64url');
  const pieces: string[][] = answer.pieces.length ? answer.pieces.map((p) => [p]) : [[]];
  return pieces.map((piece, i) => {
    const last = i === pieces.length - 1;
    return {
      candidates: Array.from({ length: shape.candidates }, (_, index) => candidate(index, answer, piece, last, shape)),
      ...(last ? { usageMetadata: usageMetadata(answer) } : {}),
      modelVersion,
      createTime,
      responseId,
    };
  });
}
