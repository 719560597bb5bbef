// Entry point: read the configuration, build the stores and the app, listen, and shut down cleanly. With
// WORKERS > 1 this process becomes the node's primary (src/workers/primary.ts), and each worker it forks
// runs the same file as one of them.

import cluster from 'node:cluster';
import { composeService, prepareNode } from './compose.js';
import { ConfigError, loadConfig } from './config.js';
import { boundHeapGrowth } from './shared/heap-growth.js';
import { runPrimary } from './workers/primary.js';

async function main(): Promise<void> {
  // The serving budget bounds what is live; this keeps what the heap holds near it (shared/heap-growth.ts).
  boundHeapGrowth();
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`slipway: configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  if (config.workers > 1 && cluster.isPrimary) {
    try {
      await runPrimary(config, { prepare: () => prepareNode(config) });
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`slipway: configuration error: ${err.message}\n`);
        process.exit(1);
      }
      throw err;
    }
    return;
  }
  const worker = cluster.isWorker;
  let service: Awaited<ReturnType<typeof composeService>>;
  try {
    service = await composeService(config, { worker });
  } catch (err) {
    // A certificate file that does not load is bad configuration too: one line naming the variable.
    if (err instanceof ConfigError) {
      process.stderr.write(`slipway: configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const { app } = service;
  const { logger } = service.stores;
  await app.listen({ port: config.port, host: config.host });
  if (service.tls !== undefined && config.tls !== undefined) {
    await service.tls.listen(config.tls.port, config.host);
    logger.info({ tlsPort: config.tls.port }, 'TLS listening');
  }
  logger.info(
    { baseUrl: config.baseUrl, siteDomain: config.siteDomain, dataDir: config.dataDir },
    worker ? 'worker ready' : 'slipway ready',
  );
  const sweeper = service.startSweeper();
  const webhooks = service.startWebhooks();
  service.listening();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // The deadline first: nothing below (not even a log line to a closed stdout) may keep the process up.
    const timer = setTimeout(() => process.exit(1), 10_000);
    timer.unref();
    try {
      logger.info({ signal }, 'shutting down');
    } catch {
      // stdout gone (the parent closed the pipe): shut down all the same.
    }
    await sweeper.stop();
    await webhooks.stop();
    await service.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // A worker whose primary is gone stops: nothing would replace it or answer its rate and lease requests.
  if (worker) process.on('disconnect', () => void stop('disconnect'));
}

main().catch((err) => {
  process.stderr.write(`slipway: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
