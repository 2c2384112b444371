import type { Database } from '../../db/database';
import type { NotificationListener } from '../../db/notifications';
import type { Logger } from '../../logger';
import type { HostedCache } from '../chat/hosted.cache';
import { API_KEY_CHANNEL, type ApiKeyCache } from './api-key.cache';

/**
 * Keeps the in-memory caches in step with the database: every change the database announces (a
 * revocation through any replica or the admin CLI, a deleted workspace, a rotated integration) drops
 * the entries it concerns. One connection hears them all: the acknowledgements that let an author wait
 * for every replica count every listening connection (see `listenPostgres`). While the listener is
 * down the caches are off, so a change is never missed, only a few statements spent.
 */
export function listenForKeyChanges(db: Database, keys: ApiKeyCache, hosted: HostedCache, logger: Logger): Promise<NotificationListener> {
  // The hosted cache takes its own payloads; every other one is the key cache's (which empties itself on one it does not know).
  const owner = (payload: string) => (hosted.handles(payload) ? hosted : keys);
  return db.listen(API_KEY_CHANNEL, {
    onNotification: (payload) => owner(payload).applyNotification(payload),
    isAwaited: (payload) => owner(payload).isAwaited(payload),
    onDelivered: (payload) => owner(payload).delivered(payload),
    onListening: (listening, err) => {
      const was = keys.isActive;
      keys.setActive(listening);
      hosted.setActive(listening);
      if (listening && !was) logger.debug('API key and hosted chat caches on: listening for changes');
      if (!listening && was) logger.warn({ err }, 'API key and hosted chat caches off: lost the connection that hears of changes; reconnecting');
    },
  });
}
