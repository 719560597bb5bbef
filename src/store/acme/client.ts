// The ACME certificate authority (RFC 8555) through `acme-client`: one order for one DNS name, its
// challenges handed to the caller to publish (HTTP-01 on the plain port, TLS-ALPN-01 on the TLS port),
// the certificate chain back. Keys are ECDSA P-256 (smaller, faster handshakes than RSA).

import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import acme from 'acme-client';

export type ChallengeKind = 'http-01' | 'tls-alpn-01';

export interface ChallengeHooks {
  /** Publish a challenge: http-01 `token` -> `keyAuthorization`, or tls-alpn-01 certificate and key. */
  publish(challenge: PublishedChallenge): Promise<void>;
  /** Withdraw it (the order moved on, successfully or not). */
  withdraw(challenge: PublishedChallenge): Promise<void>;
}

export type PublishedChallenge =
  | { kind: 'http-01'; name: string; token: string; keyAuthorization: string }
  | { kind: 'tls-alpn-01'; name: string; certPem: string; keyPem: string };

export interface IssuedCertificate {
  /** PEM chain, leaf first. */
  certPem: string;
  keyPem: string;
}

export interface AcmeCa {
  /** A new account key (PEM), for a directory that has none stored yet. */
  createAccountKey(): Promise<string>;
  /** Orders, validates and downloads a certificate for `name` with the account of `accountKeyPem`. */
  issue(name: string, accountKeyPem: string, hooks: ChallengeHooks): Promise<IssuedCertificate>;
}

export interface AcmeCaOptions {
  directoryUrl: string;
  email: string | undefined;
  /** Extra CA (PEM file) trusted for the directory's own TLS connection (a test CA such as Pebble's). */
  caFile: string | undefined;
  /** Which challenge to answer when the CA offers several (default HTTP-01 first). */
  challengePriority?: ChallengeKind[];
  /** Per request to the CA (default 30 s): a CA that stops answering fails the order instead of hanging it. */
  requestTimeoutMs?: number;
}

export function createAcmeCa(options: AcmeCaOptions): AcmeCa {
  // acme-client's one axios instance is the process's: this service talks to one directory.
  acme.axios.defaults.timeout = options.requestTimeoutMs ?? 30_000;
  // acme-client retries a CA that errs or is unreachable 5 times over 75 s; once after 2 s is enough
  // here: a failed order is retried with the issuer's own backoff (core/certificates.ts), and a
  // handshake should learn soon that none is coming.
  const settings = (acme.axios.defaults as { acmeSettings?: Record<string, number> }).acmeSettings;
  if (settings !== undefined) {
    settings.retryMaxAttempts = 1;
    settings.retryDefaultDelay = 2;
  }
  if (options.caFile !== undefined) {
    acme.axios.defaults.httpsAgent = new Agent({ ca: readFileSync(options.caFile), keepAlive: true });
  }
  acme.setLogger(() => {});
  const priority = options.challengePriority ?? ['http-01', 'tls-alpn-01'];
  return {
    async createAccountKey() {
      return (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();
    },
    async issue(name, accountKeyPem, hooks) {
      // Poll an order's status from 1 s on (acme-client's default first wait is 5 s: a handshake waits on it).
      const client = new acme.Client({
        directoryUrl: options.directoryUrl,
        accountKey: accountKeyPem,
        backoffMin: 1_000,
        backoffMax: 10_000,
      });
      const [key, csr] = await acme.crypto.createCsr(
        { commonName: name, altNames: [name] },
        await acme.crypto.createPrivateEcdsaKey('P-256'),
      );
      const published = new Map<string, PublishedChallenge>();
      const challengeOf = async (
        authz: { identifier: { value: string } },
        challenge: { type: string; token: string },
        keyAuthorization: string,
      ): Promise<PublishedChallenge> => {
        const id = `${challenge.type}:${challenge.token}`;
        const known = published.get(id);
        if (known !== undefined) return known;
        let made: PublishedChallenge;
        if (challenge.type === 'http-01') {
          made = { kind: 'http-01', name: authz.identifier.value, token: challenge.token, keyAuthorization };
        } else if (challenge.type === 'tls-alpn-01') {
          const [alpnKey, alpnCert] = await acme.crypto.createAlpnCertificate(
            authz as Parameters<typeof acme.crypto.createAlpnCertificate>[0],
            keyAuthorization,
          );
          made = {
            kind: 'tls-alpn-01',
            name: authz.identifier.value,
            certPem: alpnCert.toString(),
            keyPem: alpnKey.toString(),
          };
        } else {
          throw new Error(`unsupported challenge type ${challenge.type}`);
        }
        published.set(id, made);
        return made;
      };
      const certPem = await client
        .auto({
          csr,
          ...(options.email === undefined ? {} : { email: options.email }),
          termsOfServiceAgreed: true,
          challengePriority: priority,
          // The CA checks; a self-check from here would resolve names through this host's own view of DNS.
          skipChallengeVerification: true,
          challengeCreateFn: async (authz, challenge, keyAuthorization) =>
            hooks.publish(await challengeOf(authz, challenge, keyAuthorization)),
          challengeRemoveFn: async (authz, challenge, keyAuthorization) =>
            hooks.withdraw(await challengeOf(authz, challenge, keyAuthorization)),
        })
        .catch((err: unknown) => {
          // acme-client's retry of an unreachable CA ends in a TypeError on the missing response.
          if (err instanceof TypeError || (err as { isAxiosError?: boolean }).isAxiosError) {
            throw new Error(
              `the ACME directory ${options.directoryUrl} did not answer (${(err as Error).message})`,
            );
          }
          throw err;
        });
      return { certPem, keyPem: key.toString() };
    },
  };
}
