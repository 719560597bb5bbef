// An HTTPS server on loopback standing in for a proxy upstream (an API such as api.stripe.com), with a
// certificate made by openssl for the hostnames it answers. The proxy under test trusts it through its
// `ca` (in-process apps) or NODE_EXTRA_CA_CERTS (service processes).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type UpstreamHandler = (req: RecordedRequest, res: ServerResponse) => void;

export interface Upstream {
  port: number;
  /** PEM of the self-signed certificate (its own CA). */
  ca: string;
  caFile: string;
  requests: RecordedRequest[];
  handle: UpstreamHandler;
  close(): Promise<void>;
}

/** A self-signed certificate (CA:TRUE) valid for `hostnames`; openssl is part of every Debian install. */
export function makeCertificate(hostnames: string[]): { key: string; cert: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-upstream-'));
  const san = hostnames.map((h) => `DNS:${h}`).join(',');
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', `/CN=${hostnames[0]}`, '-addext', `subjectAltName=${san}`,
      '-addext', 'basicConstraints=critical,CA:TRUE',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], // biome-ignore format: an argument list
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    dir,
  };
}

export const echoJson: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(req));
};

export async function startUpstream(
  hostnames: string[],
  handler: UpstreamHandler = echoJson,
): Promise<Upstream> {
  const { key, cert, dir } = makeCertificate(hostnames);
  const requests: RecordedRequest[] = [];
  const upstream: Upstream = {
    port: 0,
    ca: cert,
    caFile: join(dir, 'cert.pem'),
    requests,
    handle: handler,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      upstream.handle(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.port = (server.address() as AddressInfo).port;
  return upstream;
}
