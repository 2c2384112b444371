/** What both runners share: reading the input file into one `batch_lines` row per request, failing a batch at validation, the errors of unrun requests. */
import type { Scope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { FileService } from '../files/file.service';
import { readBatchFile } from './batch-file';
import type { BatchLines } from './batch-lines.repository';
import type { BatchError, GatewayBatch } from './batch.model';
import type { BatchRepository, EventDraft } from './batch.repository';

/** Requests read from the input file per insert. */
const LOAD_CHUNK = 500;

/**
 * Loads the requests (again after a crash: rows already there are kept) and records how many there
 * are on the batch; that number, or why the batch fails (its input file was deleted, or no longer
 * reads as a batch file).
 */
export async function loadRequests(
  files: Pick<FileService, 'find' | 'openContent'>,
  lines: Pick<BatchLines, 'add' | 'recordTotal'>,
  scope: Scope,
  batch: GatewayBatch,
): Promise<{ total: number } | { error: BatchError }> {
  if (!(await files.find(scope, batch.inputFileId))) {
    return { error: { code: 'invalid_input_file', message: `The input file '${batch.inputFileId}' has been deleted`, param: 'input_file_id', line: null } };
  }
  try {
    for await (const chunk of readBatchFile(await files.openContent(scope, batch.inputFileId), LOAD_CHUNK)) await lines.add(scope, batch.id, chunk);
  } catch (err) {
    if (!(err instanceof GatewayError) || err.kind !== 'invalid_request') throw err;
    return { error: { code: 'invalid_batch_file', message: err.message, param: 'input_file_id', line: null } };
  }
  return { total: await lines.recordTotal(scope, batch.id) };
}

/**
 * A batch cancelled before its requests were read (while `validating`): reads them now, so that each
 * is counted and published as `batch_cancelled`. An unreadable input file leaves nothing to publish.
 */
export async function loadCancelled(
  files: Pick<FileService, 'find' | 'openContent'>,
  lines: Pick<BatchLines, 'add' | 'recordTotal'>,
  scope: Scope,
  batch: GatewayBatch,
): Promise<void> {
  if (batch.status === 'cancelling' && batch.requestCounts.total === 0) await loadRequests(files, lines, scope, batch);
}

/** validating → failed, with the reason as the batch's `errors`. */
export async function failValidation(batches: BatchRepository, scope: Scope, batch: GatewayBatch, error: BatchError): Promise<null> {
  const event: EventDraft = { level: 'error', message: `Batch failed: ${error.message}` };
  await batches.transition(scope, batch.id, ['validating'], 'failed', event, { errors: [{ ...error }] });
  return null;
}

/** The error lines of requests a batch never ran. */
export const EXPIRED = { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' };
export const CANCELLED = { code: 'batch_cancelled', message: 'This request was not sent: the batch was cancelled first.' };
