// Certificates for TLS tests, made with openssl at test time: a CA and leaf certificates (ECDSA P-256)
// for the names asked, plus a client that speaks TLS to the app's TLS listener.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type PeerCertificate, type TLSSocket } from 'node:tls';

export interface TestCa {
  certPem: string;
  keyPem: string;
}

export interface TestCertificate {
  /** Leaf first, then the CA (a chain as TLS_CERT_FILE holds it). */
  chainPem: string;
  keyPem: string;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });

export function makeCa(name = 'Slipway Test CA'): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-ca-'));
  try {
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.pem',
        '-days',
        '30',
        '-subj',
        `/CN=${name}`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
    return {
      certPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
      keyPem: readFileSync(join(dir, 'ca.key'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function issueCertificate(ca: TestCa, names: string[], days = 30): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-cert-'));
  try {
    writeFileSync(join(dir, 'ca.pem'), ca.certPem);
    writeFileSync(join(dir, 'ca.key'), ca.keyPem);
    writeFileSync(
      join(dir, 'ext.cnf'),
      `subjectAltName=${names.map((n) => (n.startsWith('IP:') ? n : `DNS:${n}`)).join(',')}\n`,
    );
    openssl(
      [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'leaf.key',
        '-out',
        'leaf.csr',
        '-subj',
        `/CN=${names[0]}`,
      ],
      dir,
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        'leaf.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        'leaf.pem',
        '-days',
        String(days),
        '-extfile',
        'ext.cnf',
      ],
      dir,
    );
    return {
      chainPem: readFileSync(join(dir, 'leaf.pem'), 'utf8') + ca.certPem,
      keyPem: readFileSync(join(dir, 'leaf.key'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Handshake {
  ok: boolean;
  error?: string;
  peer?: PeerCertificate;
  alpn?: string | false | null;
  protocol?: string | null;
  socket?: TLSSocket;
}

/** One TLS handshake to `port` naming `servername`, verified against `ca`; the socket is closed after. */
export function handshake(
  port: number,
  servername: string,
  options: {
    ca?: string | string[];
    ALPNProtocols?: string[];
    minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2';
    maxVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
    timeoutMs?: number;
  } = {},
): Promise<Handshake> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername,
      ca: options.ca,
      ALPNProtocols: options.ALPNProtocols ?? ['http/1.1'],
      ...(options.minVersion ? { minVersion: options.minVersion } : {}),
      ...(options.maxVersion ? { maxVersion: options.maxVersion } : {}),
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, error: 'timeout' });
    }, options.timeoutMs ?? 30_000);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const result: Handshake = {
        ok: true,
        peer: socket.getPeerCertificate(),
        alpn: socket.alpnProtocol,
        protocol: socket.getProtocol(),
      };
      socket.end();
      resolve(result);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ok: false, error: err.message });
    });
  });
}

/** An HTTPS request to the TLS port for `host` (SNI and Host), verified against `ca`. */
export function tlsRequest(
  port: number,
  options: {
    host: string;
    path: string;
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | string;
    ca: string | string[];
  },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const hostname = options.host.replace(/:\d+$/, '');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        servername: hostname,
        path: options.path,
        method: options.method ?? 'GET',
        headers: { host: options.host, ...options.headers },
        ca: options.ca,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
