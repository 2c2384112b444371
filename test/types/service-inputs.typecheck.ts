/**
 * Compiled (never run) by service-inputs.test.ts: service methods take their typed inputs, so a
 * misspelled or unknown field is a compile error for typed callers (GraphQL, the CLI, tests), while
 * raw REST input must come through the face's edge (`fromRest`) to be accepted.
 */
import type { Scope } from '../../src/auth/scope';
import type { Services } from '../../src/services';

export async function misspelledFields(services: Services, scope: Scope) {
  // @ts-expect-error `colour` is not a field of CreateLabelInput
  await services.labels.create(scope, { name: 'x', colour: '#112233' });
  // @ts-expect-error `pagesize` is not a field of ListLabelsInput
  await services.labels.list(scope, { pagesize: 10 });
  // @ts-expect-error `strng` is not a field of CreatePartialInput
  await services.partials.create(scope, { name: 'x', strng: 'text' });
  // @ts-expect-error `trainingfile` is not a field of CreateJobInput
  await services.fineTuning.create(scope, { model: 'm', trainingfile: 'f' });
  // @ts-expect-error nested fields are checked too: `epochs` is not a hyperparameter
  await services.fineTuning.create(scope, { model: 'm', trainingFile: 'f', method: { type: 'supervised', supervised: { hyperparameters: { epochs: 2 } } } });
  // @ts-expect-error a raw object is not typed input; REST bodies enter through fromRest()
  await services.labels.create(scope, JSON.parse('{}') as Record<string, unknown>);

  // The typed spellings compile.
  await services.labels.create(scope, { name: 'x', colorCode: '#112233' });
  await services.fineTuning.create(scope, { model: 'm', trainingFile: 'f', method: { type: 'supervised', supervised: { hyperparameters: { nEpochs: 2 } } } });
}
