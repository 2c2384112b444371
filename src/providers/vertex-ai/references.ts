/**
 * The provider references Vertex AI ids are made of, checked before they reach a URL: datasets are
 * `gs://bucket/object` URIs (the file operations keep to the configured bucket and the gateway's
 * prefix in it), tuning jobs and endpoints are resource names (`projects/{p}/locations/{l}/…`) whose
 * every segment is matched by a strict pattern, so an id can never point a call elsewhere.
 */
import { GatewayError, invalidField } from '../../errors';
import { urlPath } from '../url';
import { parentPath, type VertexConnection } from './connection';

/** Where the gateway keeps the datasets it uploads, in the configured bucket. */
export const FILE_PREFIX = 'gateway-files/';

export const BUCKET_HEADER = 'x-gateway-vertex-storage-bucket-name';

/** A project id or number, and a region, as they appear in resource names. */
const PROJECT = '(?:[a-z][a-z0-9-]{4,28}[a-z0-9]|\\d{1,20})';
const LOCATION = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const resourceName = (collection: string) => new RegExp(`^projects/${PROJECT}/locations/${LOCATION}/${collection}/\\d{1,20}$`);

const TUNING_JOB_NAME = resourceName('tuningJobs');
export const ENDPOINT_NAME = resourceName('endpoints');
const NUMERIC_ID = /^\d{1,20}$/;

/** The project pattern settings use (ids are letters, digits and "-"; legacy `domain:project` ids are not accepted). */
export const PROJECT_PATTERN = new RegExp(`^${PROJECT}$`);

/** The resource name of a tuning job given by its name or its numeric id (in the connection's project and region). */
export function tuningJobName(conn: VertexConnection, id: string): string {
  if (TUNING_JOB_NAME.test(id)) return id;
  if (NUMERIC_ID.test(id)) return `${parentPath(conn)}/tuningJobs/${id}`;
  throw new GatewayError('not_found', `Vertex AI has no tuning job '${id}': ids are resource names like projects/…/locations/…/tuningJobs/123`, {
    code: 'not_found',
  });
}

/** The numeric id at the end of a resource name. */
export const resourceId = (name: string) => name.slice(name.lastIndexOf('/') + 1);

export interface GcsLocation {
  bucket: string;
  object: string;
}

const GS_URI = /^gs:\/\/([a-z0-9][a-z0-9_.-]{1,220}[a-z0-9])\/(.+)$/;

export const gsUri = ({ bucket, object }: GcsLocation) => `gs://${bucket}/${object}`;

/** A dataset a job may name: any `gs://` object (400 naming the field otherwise). */
export function datasetUri(value: string, field: string): string {
  if (!GS_URI.test(value)) throw invalidField(field, 'must be a gs://bucket/object URI of a dataset (the id of a file uploaded through the gateway)');
  return value;
}

/** The configured bucket (the settings require it for every file operation). */
export function bucketOf(conn: VertexConnection): string {
  if (conn.bucket) return conn.bucket;
  throw new GatewayError('invalid_request', 'is required for files', { param: BUCKET_HEADER, aboutField: true, code: 'missing_setting' });
}

/** A file of the gateway's: a `gs://` object under its prefix in the configured bucket (404 otherwise, as for an unknown file). */
export function gatewayFile(conn: VertexConnection, id: string): GcsLocation {
  const match = GS_URI.exec(id);
  const bucket = bucketOf(conn);
  if (!match || match[1] !== bucket || !match[2].startsWith(FILE_PREFIX)) {
    throw new GatewayError('not_found', `No such file '${id}': Vertex AI files are gs://${bucket}/${FILE_PREFIX}… objects`, { code: 'not_found' });
  }
  return { bucket: match[1], object: match[2] };
}

/** The JSON API path of an object: names are one URL-encoded segment each (`/` as %2F). */
export const objectPath = ({ bucket, object }: GcsLocation) => urlPath`storage/v1/b/${bucket}/o/${object}`;
