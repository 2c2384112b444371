/**
 * The console's pure logic (no browser needed): the loss points a chart draws, the version diff, the
 * `{{>partial}}` preview and the dataset line errors the files page lists.
 */
import { lineErrors } from '../../console/src/dataset-errors';
import { diffLines } from '../../console/src/diff';
import { lossPoints } from '../../console/src/loss';
import { expandPartials, partialSlugs } from '../../console/src/partial-refs';

describe('lossPoints', () => {
  it('takes checkpoints and metrics events, one point per step in step order, checkpoints winning', () => {
    const points = lossPoints(
      [
        { stepNumber: 30, metrics: { step: 30, train_loss: 0.4 } },
        { stepNumber: 10, metrics: { step: 10, train_loss: 0.9 } },
        { stepNumber: 40, metrics: { train_mean_token_accuracy: 0.9 } },
      ],
      [
        { type: 'metrics', data: { step: 20, train_loss: 0.65 } },
        { type: 'metrics', data: { step: 10, loss: 1.5 } },
        { type: 'message', data: { step: 25, train_loss: 0.1 } },
        { type: 'metrics', data: null },
      ],
    );
    expect(points).toEqual([
      { step: 10, loss: 0.9 },
      { step: 20, loss: 0.65 },
      { step: 30, loss: 0.4 },
    ]);
  });
});

describe('diffLines', () => {
  it('marks removed and added lines around the common ones', () => {
    expect(diffLines('Hello.\nBe polite.\nBye.', 'Hello.\nBe very polite.\nBye.\nPS')).toEqual([
      { kind: 'same', text: 'Hello.' },
      { kind: 'removed', text: 'Be polite.' },
      { kind: 'added', text: 'Be very polite.' },
      { kind: 'same', text: 'Bye.' },
      { kind: 'added', text: 'PS' },
    ]);
  });

  it('finds nothing to change between equal texts', () => {
    expect(diffLines('a\nb', 'a\nb').every((line) => line.kind === 'same')).toBe(true);
  });
});

describe('partial references', () => {
  it('lists each referenced slug once and expands the known ones', () => {
    const text = '{{>tone}} Hi {{> tone }} and {{>missing}} but {{not-a-ref}}';
    expect(partialSlugs(text)).toEqual(['tone', 'missing']);
    expect(expandPartials(text, new Map([['tone', 'Be brief.']]))).toBe('Be brief. Hi Be brief. and {{>missing}} but {{not-a-ref}}');
  });
});

describe('lineErrors', () => {
  it('splits the API message into one entry per bad line', () => {
    const message = 'Invalid fine-tune dataset: line 1: not valid JSON; line 12: no assistant message (and 2 more lines with errors)';
    expect(lineErrors(message)).toEqual(['line 1: not valid JSON', 'line 12: no assistant message (and 2 more lines with errors)']);
  });

  it('finds none in another error', () => {
    expect(lineErrors('Invalid fine-tune dataset: the file has 3 examples; at least 10 are required')).toEqual([]);
  });
});
