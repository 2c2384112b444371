/**
 * Compiled (never run) by service-inputs.test.ts: an error's code is a key of ERROR_CODES of the
 * error's kind, so a free string, a misspelling or a code of another kind (another HTTP status) fails
 * `tsc`; a provider's own code is relayed only as a ProviderCode.
 */
import { badRequest, conflict, GatewayError, invalidField, providerCode } from '../../src/errors';

export function errorCodes() {
  // @ts-expect-error not a code of the table
  badRequest('x', null, 'no_such_code');
  // @ts-expect-error `label_name_taken` is a conflict (409), not a bad request
  invalidField('name', 'is taken', 'label_name_taken');
  // @ts-expect-error `invalid_cursor` is a bad request (400), not a conflict
  conflict('x', 'after', 'invalid_cursor');
  // @ts-expect-error a provider's code is not one of the gateway's
  new GatewayError('provider', 'x', { code: 'ThrottlingException' });
  // @ts-expect-error and only provider errors relay one
  new GatewayError('invalid_request', 'x', { code: providerCode('ThrottlingException') });

  // The right codes compile.
  conflict('x', 'name', 'label_name_taken');
  invalidField('after', 'names no job', 'invalid_cursor');
  return new GatewayError('provider', 'x', { code: providerCode('ThrottlingException') });
}
