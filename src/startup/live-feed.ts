// A step of createServer (main.ts): the live feed and the metrics.

import type { Config } from '../config/config.ts';
import { Feed } from '../feed/feed.ts';
import { FEED_OBJECT_TYPES } from '../feed/feed-events.ts';
import { Metrics } from '../metrics/metrics.ts';
import type { ServerCore } from './core-services.ts';
import type { ServerBase } from './open-data.ts';

/** The live feed (fed by every commit, and by other nodes' commits) and the metrics, when asked for. */
export interface LiveParts {
  feed: Feed;
  metrics: Metrics | undefined;
}

export function buildFeed(
  config: Config,
  base: ServerBase,
  core: ServerCore,
  importRequests?: () => number,
): LiveParts {
  const { store, clock } = base;
  const { engine, cluster } = core;
  // The live feed hears of every commit; published after it, never for a rollback.
  const feed = new Feed({
    clock,
    zone: config.defaultTimeZone,
    retain: config.feedRetainEvents,
    clientBufferBytes: config.feedClientBufferBytes,
  });
  store.onCommit((committed) => {
    const items = feed.publish(committed);
    if (items.length > 0) cluster.tell({ k: 'feed', items });
  }, FEED_OBJECT_TYPES);
  engine.onClusterFeed((items) => feed.publishItems(items));
  const metrics = config.metrics
    ? new Metrics({ store, hub: engine.hub, ...(importRequests ? { importRequests } : {}) })
    : undefined;
  if (metrics) engine.deadlines.onRaised((kind) => metrics.deadlineAlert(kind));
  return { feed, metrics };
}
