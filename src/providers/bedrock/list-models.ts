/**
 * ListFoundationModels: the base models Converse answers on demand in the integration's region with
 * text out (what `@slug/<model id>` can call without a deployment). Bedrock gives no creation time.
 */
import { ListFoundationModelsCommand } from '@aws-sdk/client-bedrock';
import type { ProviderModel } from '../types';
import type { BedrockConnection } from './connection';

export async function listModels(conn: BedrockConnection): Promise<ProviderModel[]> {
  const command = new ListFoundationModelsCommand({ byOutputModality: 'TEXT', byInferenceType: 'ON_DEMAND' });
  const listed = await conn.call('Amazon Bedrock', () => conn.control().send(command));
  return (listed.modelSummaries ?? []).flatMap((m) => (m.modelId ? [{ id: m.modelId, created: 0, ownedBy: m.providerName || 'bedrock' }] : []));
}
