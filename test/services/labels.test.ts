import { randomUUID } from 'node:crypto';
import { createTestServices, type TestServices } from '../support/services';

/** Service-level tests: the services over a real database, no HTTP in between. */
let t: TestServices;
beforeAll(async () => {
  t = await createTestServices();
});
afterAll(() => t.close());

it('getting a label that does not exist is not_found, naming the id', async () => {
  const id = randomUUID();
  await expect(t.services.labels.get(t.scope, id)).rejects.toMatchObject({ kind: 'not_found', status: 404, message: expect.stringContaining(id) });
});
