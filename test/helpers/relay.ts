// A TCP relay in front of a backing service (PostgreSQL, Redis, an S3 endpoint) that a test can cut: every
// open connection is reset and new ones are refused (the listening socket closes), as a database restart,
// a failover or a dropped network path does; restore() listens on the same port again.

import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Relay {
  /** Port on 127.0.0.1 that clients use instead of the service's own. */
  readonly port: number;
  /** Connections accepted since start (a reconnecting client shows up here). */
  readonly accepted: number;
  /** Resets every open connection (RST) and refuses new ones until restore(). */
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startRelay(targetPort: number, targetHost = '127.0.0.1'): Promise<Relay> {
  const open = new Set<Socket>();
  let accepted = 0;
  let server: Server;

  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const srv = createServer((client) => {
        accepted++;
        const upstream = connect(targetPort, targetHost);
        open.add(client);
        open.add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          open.delete(client);
          open.delete(upstream);
        };
        client.on('error', drop);
        upstream.on('error', drop);
        client.on('close', drop);
        upstream.on('close', drop);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => resolve(srv));
    });

  server = await listen(0);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const resetAll = () => {
    for (const socket of open) socket.resetAndDestroy();
    open.clear();
  };

  return {
    port,
    get accepted() {
      return accepted;
    },
    async cut() {
      const closed = closeServer();
      resetAll();
      await closed;
    },
    async restore() {
      // The port was ours a moment ago; retry briefly in case the kernel has not released it yet.
      for (let attempt = 0; ; attempt++) {
        try {
          server = await listen(port);
          return;
        } catch (err) {
          if (attempt >= 50) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    async close() {
      resetAll();
      if (server.listening) await closeServer();
    },
  };
}
