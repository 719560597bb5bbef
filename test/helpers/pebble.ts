// Pebble, Let's Encrypt's ACME test server (Debian's `pebble`), on loopback for issuance tests: its own
// HTTPS certificate from a test CA (ACME_CA_FILE), validation against the app's plain and TLS ports,
// names resolved by a test DNS peer. Counts the orders it received (from its request log).

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './app.js';
import { issueCertificate, makeCa } from './tls.js';

const ENSURE_PEBBLE = fileURLToPath(new URL('../../scripts/ensure-pebble.sh', import.meta.url));

export interface Pebble {
  directoryUrl: string;
  /** The CA of Pebble's own HTTPS certificate (ACME_CA_FILE). */
  caFile: string;
  caPem: string;
  /** Orders received since start (POSTs to its new-order endpoint). */
  orders(): number;
  /** The root its certificates chain to (random per run). */
  root(): Promise<string>;
  log(): string;
  /** Stops it (the CA is down) / starts it again on the same ports. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Pebble's address and CA, known before it starts (the app is configured with them first). */
export interface PebbleSetup {
  directoryUrl: string;
  caFile: string;
  /** Starts Pebble validating against the app's plain (`httpPort`) and TLS (`tlsPort`) ports. */
  start(ports: { httpPort: number; tlsPort: number }): Promise<Pebble>;
}

export async function preparePebble(options: { dnsServer: string }): Promise<PebbleSetup> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'slipway-pebble-'));
  const ca = makeCa('Pebble listener CA');
  writeFileSync(join(dir, 'ca.pem'), ca.certPem);
  return {
    directoryUrl: `https://127.0.0.1:${port}/dir`,
    caFile: join(dir, 'ca.pem'),
    start: (ports) => startPebble({ ...options, ...ports, port, dir, ca }),
  };
}

async function startPebble(options: {
  httpPort: number;
  tlsPort: number;
  dnsServer: string;
  port: number;
  dir: string;
  ca: { certPem: string; keyPem: string };
}): Promise<Pebble> {
  execFileSync('bash', [ENSURE_PEBBLE], { stdio: ['ignore', 'inherit', 'inherit'] });
  const { dir, ca, port } = options;
  const cert = issueCertificate(ca, ['localhost', 'IP:127.0.0.1']);
  writeFileSync(join(dir, 'cert.pem'), cert.chainPem);
  writeFileSync(join(dir, 'key.pem'), cert.keyPem);
  const mgmtPort = await freePort();
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${mgmtPort}`,
        certificate: join(dir, 'cert.pem'),
        privateKey: join(dir, 'key.pem'),
        httpPort: options.httpPort,
        tlsPort: options.tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        // 40 days: 11 days on the movable clock bring a certificate into its renewal window.
        certificateValidityPeriod: 40 * 86_400,
      },
    }),
  );
  let child: ChildProcess | undefined;
  const output: string[] = [];
  const countOrders = () => (output.join('').match(/POST \/order-plz/g) ?? []).length;

  const start = async () => {
    child = spawn('pebble', ['-config', join(dir, 'config.json'), '-dnsserver', options.dnsServer], {
      env: {
        ...process.env,
        PEBBLE_VA_NOSLEEP: '1',
        PEBBLE_VA_ALWAYS_VALID: '0',
        PEBBLE_WFE_NONCEREJECT: '0',
        PEBBLE_AUTHZREUSE: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
    child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`pebble exited:\n${output.join('')}`);
      try {
        await get(`https://127.0.0.1:${port}/dir`, ca.certPem);
        return;
      } catch {}
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`pebble did not start:\n${output.join('')}`);
  };
  const stop = async () => {
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  await start();

  return {
    directoryUrl: `https://127.0.0.1:${port}/dir`,
    caFile: join(dir, 'ca.pem'),
    caPem: ca.certPem,
    orders: countOrders,
    root: () => get(`https://127.0.0.1:${mgmtPort}/roots/0`, ca.certPem),
    log: () => output.join(''),
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function get(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 400) reject(new Error(`${url}: ${res.statusCode}`));
        else resolve(Buffer.concat(chunks).toString());
      });
    });
    req.on('error', reject);
    req.end();
  });
}
