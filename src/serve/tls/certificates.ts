// Certificates the TLS listener serves: a chain and key turned into a SecureContext of the house TLS
// profile, the names it covers (its subjectAltName DNS entries), and the book that answers "which context
// for this server name": the exact name, then the wildcard `*.<parent>`.

import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContext } from 'node:tls';

/**
 * Mozilla's "intermediate" profile (ssl-config.mozilla.org, v5.7): TLS 1.2 and 1.3; for TLS 1.2 only
 * ECDHE with AEAD ciphers (no DHE: no parameters to ship); TLS 1.3's suites are OpenSSL's defaults.
 * The client's preference decides (honorCipherOrder off), as the profile says.
 */
export const TLS_PROFILE = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: false,
} as const;

/**
 * Session-ticket keys of this process, shared by every context it serves (so a reloaded or newly issued
 * certificate does not end resumption). Per process: a restart costs one full handshake per client.
 */
const TICKET_KEYS = randomBytes(48);

export interface Certificate {
  context: SecureContext;
  /** Lowercase DNS names of its subjectAltName (`*.example.com` for a wildcard). */
  names: string[];
  /** Epoch ms after which it is no longer valid. */
  notAfter: number;
}

/** A context of the house profile for `certPem` (leaf first, then its chain) and `keyPem`; throws when they do not match. */
export function certificateOf(certPem: string | Buffer, keyPem: string | Buffer): Certificate {
  const leaf = new X509Certificate(certPem);
  const context = createSecureContext({
    ...TLS_PROFILE,
    cert: certPem,
    key: keyPem,
    ticketKeys: TICKET_KEYS,
  });
  return { context, names: dnsNames(leaf), notAfter: Date.parse(leaf.validTo) };
}

/** The DNS names a certificate covers (subjectAltName; the subject CN only when it has none). */
export function dnsNames(cert: X509Certificate): string[] {
  const san = cert.subjectAltName;
  if (san === undefined) {
    const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject)?.[1];
    return cn === undefined ? [] : [cn.toLowerCase()];
  }
  const names: string[] = [];
  for (const entry of san.split(', ')) {
    if (entry.startsWith('DNS:')) names.push(entry.slice(4).toLowerCase());
  }
  return names;
}

/** Reads TLS_CERT_FILE/TLS_KEY_FILE; throws an Error whose message names the file that is wrong. */
export function readCertificateFiles(files: { cert: string; key: string }): Certificate {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(files.cert);
  } catch (err) {
    throw new CertificateFileError('TLS_CERT_FILE', `cannot read ${files.cert}: ${(err as Error).message}`);
  }
  try {
    key = readFileSync(files.key);
  } catch (err) {
    throw new CertificateFileError('TLS_KEY_FILE', `cannot read ${files.key}: ${(err as Error).message}`);
  }
  try {
    new X509Certificate(cert);
  } catch {
    throw new CertificateFileError('TLS_CERT_FILE', `${files.cert} is not a PEM certificate`);
  }
  try {
    const loaded = certificateOf(cert, key);
    if (loaded.names.length === 0) {
      throw new CertificateFileError('TLS_CERT_FILE', `${files.cert} names no DNS name (subjectAltName)`);
    }
    return loaded;
  } catch (err) {
    if (err instanceof CertificateFileError) throw err;
    throw new CertificateFileError(
      'TLS_KEY_FILE',
      `${files.key} is not the private key of ${files.cert} (${(err as Error).message})`,
    );
  }
}

export class CertificateFileError extends Error {
  constructor(
    readonly variable: 'TLS_CERT_FILE' | 'TLS_KEY_FILE',
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'CertificateFileError';
  }
}

/** Contexts by the names they cover. A later `set` for a name replaces the earlier. */
export class CertificateBook {
  private readonly byName = new Map<string, Certificate>();

  /** Replaces every entry `previous` had with `next`'s (a reloaded file). */
  replace(previous: Certificate | undefined, next: Certificate): void {
    if (previous !== undefined) {
      for (const name of previous.names) if (this.byName.get(name) === previous) this.byName.delete(name);
    }
    for (const name of next.names) this.byName.set(name, next);
  }

  set(name: string, cert: Certificate): void {
    this.byName.set(name, cert);
  }

  delete(name: string): void {
    this.byName.delete(name);
  }

  /** The certificate for `servername`: its own, else the wildcard of its parent (one label only). */
  find(servername: string): Certificate | undefined {
    const exact = this.byName.get(servername);
    if (exact !== undefined) return exact;
    const dot = servername.indexOf('.');
    return dot > 0 ? this.byName.get(`*${servername.slice(dot)}`) : undefined;
  }
}
