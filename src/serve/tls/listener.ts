// The TLS listener (TLS_PORT): a node:tls server whose secure sockets are handed to the app's one
// node:http server (`emit('connection')`), so the site fast path, its memo, node:http and Fastify serve
// them exactly as plain ones. Certificates are chosen per handshake (SNI) from memory: the files'
// (reloaded when they change), then those obtained on demand (core/certificates.ts). A name with neither
// fails the handshake: there is no default certificate.

import { type StatsListener, unwatchFile, watchFile } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type SecureContext, type TLSSocket, type Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { HandshakeAnswer } from '../../core/certificates.js';
import {
  type Certificate,
  CertificateBook,
  certificateOf,
  readCertificateFiles,
  TLS_PROFILE,
} from './certificates.js';

/** What the listener asks for a name no file covers (core/certificates.ts's CertificateIssuer). */
export interface OnDemandCertificates {
  certificateForHandshake(servername: string): Promise<HandshakeAnswer | null>;
}

export interface TlsFrontOptions {
  httpServer: HttpServer;
  /** Session-ticket keys (48 bytes) shared by the node's workers, so a ticket resumes on any of them. */
  ticketKeys?: Buffer;
  files: { cert: string; key: string } | undefined;
  onDemand: OnDemandCertificates | undefined;
  /** Called once per name (per process) served from the files (a custom domain's sslStatus). */
  servedFromFiles?: (name: string) => void;
  /** Called with a name whose cached certificate must be dropped, or null for all (change events). */
  subscribeDropped?: (drop: (name: string | null) => void) => () => void;
  logger: Logger;
  /** How often the certificate files are polled for changes (default 2 s). */
  watchIntervalMs?: number;
  /** Epoch ms (the service clock): expired on-demand certificates are looked up again. */
  now: () => number;
}

export interface TlsFront {
  listen(port: number, host: string): Promise<void>;
  /** The port listened on (after listen). */
  port(): number;
  close(): Promise<void>;
  /** The server itself (tests read its options). */
  readonly server: TlsServer;
}

/** A name refused (may not have a certificate) is not looked up again for this long. */
const REFUSED_TTL_MS = 5_000;
const REFUSED_MAX = 10_000;
const ISSUED_MAX = 50_000;

/** Reads the files now (throws CertificateFileError naming the variable) and builds the listener. */
export function createTlsFront(options: TlsFrontOptions): TlsFront {
  const { logger } = options;
  const book = new CertificateBook();
  let fromFiles: Certificate | undefined;
  if (options.files !== undefined) {
    fromFiles = readCertificateFiles(options.files);
    book.replace(undefined, fromFiles);
    logger.info({ names: fromFiles.names }, 'TLS certificate files loaded');
  }
  /** On-demand certificates by name (filled on first handshake, dropped by change events). */
  const issued = new Map<string, Certificate>();
  const refused = new Map<string, number>();
  /** Names already reported to servedFromFiles. */
  const servedNames = new Set<string>();

  const onDemand = options.onDemand;
  const unsubscribe = options.subscribeDropped?.((name) => {
    if (name === null) {
      issued.clear();
      refused.clear();
      return;
    }
    issued.delete(name);
    refused.delete(name);
  });

  const fail = (cb: (err: Error | null, ctx?: SecureContext) => void, servername: string, why: string) => {
    logger.debug({ servername, why }, 'TLS handshake refused');
    cb(new Error(`no certificate for ${servername}: ${why}`));
  };

  const sniCallback = (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void): void => {
    const name = servername.toLowerCase().replace(/\.$/, '');
    const fileCert = book.find(name);
    if (fileCert !== undefined) {
      if (options.servedFromFiles !== undefined && !servedNames.has(name)) {
        if (servedNames.size >= ISSUED_MAX) servedNames.clear();
        servedNames.add(name);
        options.servedFromFiles(name);
      }
      cb(null, fileCert.context);
      return;
    }
    const cached = issued.get(name);
    if (cached !== undefined && cached.notAfter > options.now()) {
      cb(null, cached.context);
      return;
    }
    if (onDemand === undefined) {
      fail(cb, name, 'no certificate file covers it and on-demand certificates are off');
      return;
    }
    const refusedUntil = refused.get(name);
    if (refusedUntil !== undefined && refusedUntil > Date.now()) {
      fail(cb, name, 'may not have a certificate');
      return;
    }
    onDemand.certificateForHandshake(name).then(
      (answer) => {
        if (answer === null) {
          if (refused.size >= REFUSED_MAX) refused.clear();
          refused.set(name, Date.now() + REFUSED_TTL_MS);
          fail(cb, name, 'may not have a certificate');
          return;
        }
        let cert: Certificate;
        try {
          cert = certificateOf(answer.certPem, answer.keyPem);
        } catch (err) {
          logger.error({ err, servername: name }, 'a stored certificate does not load');
          fail(cb, name, 'its stored certificate does not load');
          return;
        }
        if (answer.kind === 'certificate') {
          if (issued.size >= ISSUED_MAX) issued.clear();
          issued.set(name, cert);
        }
        cb(null, cert.context);
      },
      (err: Error) => {
        // The CA or the database failing is worth a line; a name still waiting for its order is not.
        if (err.name !== 'CertificateUnavailable')
          logger.warn({ err, servername: name }, 'certificate look-up failed');
        fail(cb, name, err.message);
      },
    );
  };

  const server = createServer(
    {
      ...TLS_PROFILE,
      SNICallback: sniCallback,
      // TLS-ALPN-01 validation (RFC 8737) negotiates acme-tls/1; browsers get http/1.1 (no h2: decisions.md).
      ALPNProtocols: ['http/1.1', 'acme-tls/1'],
      handshakeTimeout: 30_000,
      // As node:http and node:https servers do (tls.Server alone leaves Nagle on): a response's last
      // segment is not held back waiting for the client's ACK.
      noDelay: true,
    },
    (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'acme-tls/1') {
        // The CA's validation needs the handshake only (RFC 8737 §3).
        socket.destroy();
        return;
      }
      options.httpServer.emit('connection', socket);
    },
  );
  if (options.ticketKeys) server.setTicketKeys(options.ticketKeys);
  server.on('tlsClientError', (err, socket) => {
    logger.debug({ err: err.message, remote: socket.remoteAddress }, 'TLS client error');
    socket.destroy();
  });

  // Reload the files when either changes (polling stat survives editors and certbot replacing them).
  const watchers: Array<[string, StatsListener]> = [];
  if (options.files !== undefined) {
    const files = options.files;
    let timer: NodeJS.Timeout | undefined;
    const reload = () => {
      try {
        const next = readCertificateFiles(files);
        book.replace(fromFiles, next);
        fromFiles = next;
        logger.info({ names: next.names }, 'TLS certificate files reloaded');
      } catch (err) {
        logger.warn(
          { err: (err as Error).message },
          'TLS certificate files changed but do not load; kept the previous',
        );
      }
    };
    const onChange: StatsListener = (curr, prev) => {
      if (curr.mtimeMs === prev.mtimeMs && curr.ino === prev.ino && curr.size === prev.size) return;
      // Certificate and key are usually written one after the other: settle first.
      clearTimeout(timer);
      timer = setTimeout(reload, 200);
      timer.unref();
    };
    for (const file of [files.cert, files.key]) {
      watchFile(file, { interval: options.watchIntervalMs ?? 2_000, persistent: false }, onChange);
      watchers.push([file, onChange]);
    }
  }

  return {
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    port() {
      return (server.address() as AddressInfo).port;
    },
    async close() {
      unsubscribe?.();
      for (const [file, listener] of watchers) unwatchFile(file, listener);
      if (!server.listening) return;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
