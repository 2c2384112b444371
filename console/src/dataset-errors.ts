/**
 * The API refuses a dataset with one message naming its first bad lines
 * (`Invalid fine-tune dataset: line 3: reason; line 7: reason (and 2 more lines with errors)`);
 * the files page lists them one per line.
 */
export function lineErrors(message: string): string[] {
  return [...message.matchAll(/line \d+: .*?(?=; line \d+: |$)/g)].map((m) => m[0]);
}
