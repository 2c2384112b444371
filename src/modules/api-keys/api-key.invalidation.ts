import type { Database } from '../../db/database';
import type { NotificationListener } from '../../db/notifications';
import type { Logger } from '../../logger';
import { API_KEY_CHANNEL, type ApiKeyCache } from './api-key.cache';

/**
 * Keeps the key cache in step with the database: every change the database announces (a revocation
 * through any replica or the admin CLI, a deleted workspace) drops the keys it concerns. While the
 * listener is down the cache is off, so a revocation is never missed, only a few statements spent.
 */
export function listenForKeyChanges(db: Database, cache: ApiKeyCache, logger: Logger): Promise<NotificationListener> {
  return db.listen(API_KEY_CHANNEL, {
    onNotification: (payload) => cache.applyNotification(payload),
    isAwaited: (payload) => cache.isAwaited(payload),
    onDelivered: (payload) => cache.delivered(payload),
    onListening: (listening, err) => {
      const was = cache.isActive;
      cache.setActive(listening);
      if (listening && !was) logger.debug('API key cache on: listening for key changes');
      if (!listening && was) logger.warn({ err }, 'API key cache off: lost the connection that hears of key changes; reconnecting');
    },
  });
}
