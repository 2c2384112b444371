import type { MultipartUpload, MultipartUploadOptions } from '../../http/multipart';
import type { MultipartLimits } from '../../http/multipart-guard';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Scope } from '../../auth/scope';
import { badRequest, conflict, GatewayError, notFound } from '../../errors';
import type { Logger } from '../../logger';
import type { FileStore } from '../../storage/file-store';
import { isUuid, parseInput, type Input } from '../../validation/parse';
import type { IdempotentReplay } from '../idempotency/idempotency.service';
import { createDatasetCheck, JsonlScanner, type ContentCheck } from './dataset-validator';
import type { DeletionGuard, FileRepository, GatewayFile } from './file.repository';
import { filePurpose, listFilesSchema, MAX_FILENAME_LENGTH, type FilePurpose, type ListFilesInput } from './file.schemas';

export type { GatewayFile };

export interface UploadInput {
  filename: string;
  /** Validated here; an unknown purpose is a 400 before any byte is stored. */
  purpose: string;
  /** The content. The service reads it to the end on success and stops reading on failure; it never destroys it. */
  stream: NodeJS.ReadableStream;
}

/**
 * An upload whose bytes are stored but not yet recorded: the first half of an upload whose
 * purpose is not known while the content streams in (multipart clients may send `purpose` after
 * the file). `commit` records it or `discard` removes it; nothing else may be done with it.
 */
export interface StagedFile {
  readonly id: string;
  readonly storageKey: string;
  readonly filename: string;
  readonly bytes: number;
  readonly sha256: string;
  /** The content checks run while staging, by purpose: the staged purpose's, or every one when it was not known. */
  readonly checks: ReadonlyMap<FilePurpose, ContentCheck>;
}

export interface StageInput {
  filename: string;
  stream: NodeJS.ReadableStream;
  /** When already known: only that purpose's content check runs (if it has one). */
  purpose?: FilePurpose;
}

/** What a face gives the multipart upload workflow (`receive`): the body, the workspace, the idempotency key. */
export interface MultipartFileUpload {
  /** Parses the request's multipart body with these options: the file part is staged through them as it streams in. */
  body(options: MultipartUploadOptions<StagedFile>): Promise<MultipartUpload<StagedFile>>;
  /** The workspace the file goes to; `workspaceField` is the form's `workspace_id`, known only once the body is read. */
  scope(workspaceField: string | undefined): Promise<Scope>;
  /**
   * Claims the request's Idempotency-Key, when it sent one, for an upload identified by `identity`:
   * the first request's answer to replay, or null once this request holds the key.
   */
  claim?(identity: readonly string[]): Promise<IdempotentReplay | null>;
}

export type UploadOutcome = { kind: 'created'; file: GatewayFile } | IdempotentReplay;

/** The fields of an upload form besides the file. */
const UPLOAD_FIELDS = ['purpose', 'workspace_id'];

export interface FileServiceOptions {
  /** Largest accepted upload (config.uploadLimitBytes); beyond it `payload_too_large` (413). */
  maxUploadBytes: number;
  /** Parts and non-file bytes of a multipart upload (config.multipart), for the faces that receive them. */
  multipart: MultipartLimits;
}

export interface FilePage {
  items: GatewayFile[];
  hasMore: boolean;
}

/** Gateway-hosted files: bytes in a FileStore, metadata in the database. */
export class FileService {
  private readonly deletionGuards: DeletionGuard[] = [];
  /** How uploads of a purpose are checked: `fine-tune` here, others registered by the module that reads them. */
  private readonly contentChecks = new Map<FilePurpose, () => ContentCheck>([['fine-tune', createDatasetCheck]]);

  constructor(
    private readonly files: FileRepository,
    private readonly store: FileStore,
    private readonly options: FileServiceOptions,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  get maxUploadBytes(): number {
    return this.options.maxUploadBytes;
  }

  get multipartLimits(): MultipartLimits {
    return this.options.multipart;
  }

  /** Stores, checks and records an upload; nothing is kept when any step fails. */
  async upload(scope: Scope, input: UploadInput): Promise<GatewayFile> {
    const purpose = checkPurpose(input.purpose);
    const staged = await this.stage({ filename: input.filename, stream: input.stream, purpose });
    return this.commit(scope, staged, purpose);
  }

  /**
   * The multipart upload (REST `POST /v1/files`): the file is staged as it streams in (its purpose may
   * come after it), the workspace and the idempotency key are settled once the whole body is read, then
   * the file is recorded. A duplicate of an answered request gets that answer, and nothing of a
   * refused or duplicate upload is kept.
   */
  async receive(upload: MultipartFileUpload): Promise<UploadOutcome> {
    const { fields, file: staged } = await upload.body({
      maxFileBytes: this.maxUploadBytes,
      limits: this.multipartLimits,
      allowedFields: UPLOAD_FIELDS,
      onFile: ({ filename, stream }) => this.stage({ filename, stream }),
      onDiscard: (file) => this.discard(file),
    });
    let scope: Scope;
    try {
      scope = await upload.scope(fields.workspace_id);
      // The same upload again: the same bytes, purpose and workspace (and, the face adds, route and provider).
      const replay = (await upload.claim?.([staged.sha256, fields.purpose ?? '', fields.workspace_id ?? ''])) ?? null;
      if (replay) {
        // This copy's bytes go before the answer does: once answered, nothing of it is left.
        await this.discard(staged);
        return replay;
      }
    } catch (err) {
      await this.discard(staged);
      throw err;
    }
    return { kind: 'created', file: await this.commit(scope, staged, fields.purpose) };
  }

  /**
   * Streams the content into the store, counting and hashing it and (unless the purpose is known
   * not to need it) checking its lines on the way. Never buffers the whole file.
   */
  async stage(input: StageInput): Promise<StagedFile> {
    const filename = checkFilename(input.filename);
    const id = randomUUID();
    const storageKey = id;
    const checks = new Map<FilePurpose, ContentCheck>();
    for (const [purpose, create] of this.contentChecks) if (input.purpose === undefined || input.purpose === purpose) checks.set(purpose, create());
    // put() attaches to the stream synchronously, before the 'data' listener below sets it flowing.
    const stored = this.store.put(storageKey, input.stream, { maxBytes: this.options.maxUploadBytes });
    const scanner = checks.size ? new JsonlScanner([...checks.values()]) : null;
    if (scanner) {
      const feed = (chunk: Buffer | string) => scanner.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      input.stream.on('data', feed);
      void stored.finally(() => input.stream.removeListener('data', feed)).catch(() => undefined);
    }
    const { bytes, sha256 } = await stored;
    scanner?.finish();
    return { id, storageKey, filename, bytes, sha256, checks };
  }

  /** Records a staged upload under `purpose`, or removes its bytes and throws why it was refused. */
  async commit(scope: Scope, staged: StagedFile, purpose: unknown): Promise<GatewayFile> {
    try {
      const checked = checkPurpose(purpose);
      if (staged.bytes === 0) throw badRequest('The file is empty', 'file', 'empty_file');
      if (this.contentChecks.has(checked)) {
        const check = staged.checks.get(checked);
        if (!check) throw new Error(`A ${checked} upload was staged without its content check`);
        check.verdict(staged.bytes);
      }
      return await this.files.create(scope, {
        id: staged.id,
        filename: staged.filename,
        purpose: checked,
        bytes: staged.bytes,
        sha256: staged.sha256,
        storageKey: staged.storageKey,
      });
    } catch (err) {
      await this.discard(staged);
      throw err;
    }
  }

  /** Stores and records a file the gateway writes itself (a batch's output): no upload limit, no content check. */
  async write(scope: Scope, input: { filename: string; purpose: FilePurpose; stream: NodeJS.ReadableStream }): Promise<GatewayFile> {
    const id = randomUUID();
    const { bytes, sha256 } = await this.store.put(id, input.stream, { maxBytes: Number.MAX_SAFE_INTEGER });
    const staged: StagedFile = { id, storageKey: id, filename: input.filename, bytes, sha256, checks: new Map() };
    try {
      return await this.files.create(scope, { id, filename: input.filename, purpose: input.purpose, bytes, sha256, storageKey: id });
    } catch (err) {
      await this.discard(staged);
      throw err;
    }
  }

  /** Removes a staged upload's bytes. Idempotent. */
  async discard(staged: StagedFile): Promise<void> {
    try {
      await this.store.delete(staged.storageKey);
    } catch (err) {
      this.logger.warn({ err, storageKey: staged.storageKey }, 'could not remove the bytes of a refused upload');
    }
  }

  async list(scope: Scope, input: Input<ListFilesInput> = {}): Promise<FilePage> {
    const { purpose, limit, order, after } = parseInput(listFilesSchema, input);
    let cursor: { createdAt: Date; id: string } | undefined;
    if (after !== undefined) {
      const file = isUuid(after) ? await this.files.findById(scope, after) : null;
      if (!file) throw badRequest(`after: no file with id '${after}'`, 'after', 'invalid_cursor');
      cursor = { createdAt: file.createdAt, id: file.id };
    }
    const rows = await this.files.page(scope, { purpose, order, after: cursor, take: limit + 1 });
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  async get(scope: Scope, id: string): Promise<GatewayFile> {
    const file = await this.find(scope, id);
    if (!file) throw notFound('File', id);
    return file;
  }

  /** The file, or null when the scope has none with this id. */
  find(scope: Scope, id: string): Promise<GatewayFile | null> {
    return isUuid(id) ? this.files.findById(scope, id) : Promise.resolve(null);
  }

  /** The files of the scope among `ids` (unknown ids are left out), for DataLoaders. */
  findMany(scope: Scope, ids: readonly string[]): Promise<GatewayFile[]> {
    const valid = ids.filter(isUuid);
    return valid.length ? this.files.findManyByIds(scope, valid) : Promise.resolve([]);
  }

  /** The file's content as a stream (the caller consumes or destroys it). */
  async openContent(scope: Scope, id: string): Promise<NodeJS.ReadableStream> {
    return (await this.download(scope, id)).stream;
  }

  /** The file and its content, for answers that need both (length and type headers). */
  async download(scope: Scope, id: string): Promise<{ file: GatewayFile; stream: NodeJS.ReadableStream }> {
    const file = await this.get(scope, id);
    try {
      return { file, stream: await this.store.open(file.storageKey) };
    } catch (err) {
      if (err instanceof GatewayError && err.kind === 'not_found') {
        this.logger.warn({ fileId: file.id, storageKey: file.storageKey }, 'a recorded file has no stored content');
        throw notFound('File content', id);
      }
      throw err;
    }
  }

  /** Another module's check of uploads with `purpose` (the batches module's of `batch` files). */
  checkContent(purpose: FilePurpose, create: () => ContentCheck): void {
    this.contentChecks.set(purpose, create);
  }

  /** Other modules' say on deleting a file they may still need (the fine-tuning jobs not yet at their provider). */
  guardDeletion(guard: DeletionGuard): void {
    this.deletionGuards.push(guard);
  }

  /**
   * Deletes the record, then the bytes (a failure there leaves only unreachable bytes, logged); 409
   * `file_in_use` while something still needs them.
   */
  async delete(scope: Scope, id: string): Promise<GatewayFile> {
    const file = isUuid(id) ? await this.files.delete(scope, id, this.deletionGuards) : null;
    if (!file) throw notFound('File', id);
    if ('neededBy' in file) throw conflict(`File '${id}' is still needed: ${file.neededBy}`, 'id', 'file_in_use');
    try {
      await this.store.delete(file.storageKey);
    } catch (err) {
      this.logger.warn({ err, fileId: file.id, storageKey: file.storageKey }, 'deleted a file record but could not remove its bytes');
    }
    return file;
  }
}

const purposeField = z.object({ purpose: filePurpose });

/** 400 naming `purpose` when it is missing or not one of FILE_PURPOSES. */
export function checkPurpose(purpose: unknown): FilePurpose {
  return parseInput(purposeField, { purpose }).purpose;
}

/** The name without any directory part (some clients send a path), 'file' when there is none. */
export function checkFilename(raw: string): string {
  const filename = raw.split(/[/\\]/).pop()?.trim() || 'file';
  if (filename.length > MAX_FILENAME_LENGTH) throw badRequest(`The filename must be at most ${MAX_FILENAME_LENGTH} characters`, 'file', 'invalid_filename');
  if (/\p{Cc}/u.test(filename)) throw badRequest('The filename must not contain control characters', 'file', 'invalid_filename');
  return filename;
}
