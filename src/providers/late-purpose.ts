/**
 * The one place a pass-through upload's late `purpose` is dealt with. The OpenAI SDK sends `purpose`
 * after the file, and client mode streams the file on as it arrives, so an adapter may have to start
 * (or finish) sending the content before the purpose is known (`UploadInput.purpose` is then a
 * promise, settled once the whole request has been read). An adapter meets it in one of two ways:
 *
 * - the purpose is the provider's to judge, sent as a form field (`purposeForm`): before the file
 *   when known, after it otherwise;
 * - the gateway judges it (`withPurpose`): a known purpose is checked before anything is stored; a
 *   late one once the content is stored, which is removed again when the purpose is refused or the
 *   request ends without one.
 */
import type { Form, FormFile } from './multipart';
import type { UploadInput } from './types';

/** A multipart form with `purpose` among `fields` (first) when known, or sent after the file when it comes late. */
export function purposeForm(purpose: UploadInput['purpose'], fields: Readonly<Record<string, string>>, file: FormFile): Form {
  if (typeof purpose === 'string') return { fields: { purpose, ...fields }, file };
  return { fields, file, after: purpose.then((late) => ({ purpose: late })) };
}

export interface PurposeSteps<T> {
  /** Throws when the purpose is refused (a 400 naming `purpose`). */
  check?: (purpose: string) => void;
  /** Stores the content. */
  store: () => Promise<T>;
  /** Removes what `store` made; its own failure is ignored (the purpose's error is the answer). */
  undo: (stored: T) => Promise<unknown>;
}

/** Stores the upload with its purpose checked: first when known, else once it arrives (undoing the store if refused). */
export async function withPurpose<T>(purpose: UploadInput['purpose'], steps: PurposeSteps<T>): Promise<{ stored: T; purpose: string }> {
  if (typeof purpose === 'string') {
    steps.check?.(purpose);
    return { stored: await steps.store(), purpose };
  }
  const stored = await steps.store();
  try {
    const late = await purpose;
    steps.check?.(late);
    return { stored, purpose: late };
  } catch (err) {
    await steps.undo(stored).catch(() => undefined);
    throw err;
  }
}
