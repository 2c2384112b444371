/**
 * One spelling per face: services name an offending field by its path, and each face renders it in
 * its own spelling — REST snake_case, GraphQL its own argument and field names.
 */
import { api, gql, useTestGateway } from '../support/gateway';

const gw = useTestGateway();

describe('errors name the caller’s own field', () => {
  it('labels paging: `current_page` on REST, `page` on GraphQL', async () => {
    const rest = await api(gw, 'GET', '/v1/labels?current_page=-1');
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({ param: 'current_page', message: 'current_page: must be an integer between 0 and 1000000' });
    const graphql = await gql(gw, '{ labels(page: -1) { total } }');
    expect(graphql.body.errors[0]).toMatchObject({
      message: 'page: must be an integer between 0 and 1000000',
      extensions: { code: 'BAD_USER_INPUT', param: 'page' },
    });
  });

  it('a label colour: `color_code` on REST, `colorCode` on GraphQL', async () => {
    const rest = await api(gw, 'POST', '/v1/labels', { body: { name: 'x', color_code: 'red' } });
    expect(rest.body.error).toMatchObject({ param: 'color_code', message: expect.stringMatching(/^color_code: /) });
    const graphql = await gql(gw, 'mutation { createLabel(input: {name: "x", colorCode: "red"}) { id } }');
    expect(graphql.body.errors[0]).toMatchObject({ message: expect.stringMatching(/^colorCode: /), extensions: { param: 'colorCode' } });
  });

  it('a nested hyperparameter: REST `method.supervised.hyperparameters.n_epochs`, GraphQL `method.hyperparameters.nEpochs`', async () => {
    const body = { model: 'm', training_file: 'f', method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 0 } } } };
    const rest = await api(gw, 'POST', '/v1/fine_tuning/jobs', { body });
    expect(rest.body.error).toMatchObject({ param: 'method.supervised.hyperparameters.n_epochs' });
    const graphql = await gql(
      gw,
      'mutation { createFineTuningJob(input: {model: "m", trainingFile: "f", method: {type: SUPERVISED, hyperparameters: {nEpochs: 0}}}) { id } }',
    );
    expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'method.hyperparameters.nEpochs' });
  });

  it('a camelCase key sent over REST is named as it was sent', async () => {
    const rest = await api(gw, 'POST', '/v1/labels', { body: { name: 'x', colorCode: '#112233' } });
    expect(rest.body.error).toMatchObject({ param: 'colorCode', message: 'colorCode: is not a known field' });
  });
});
