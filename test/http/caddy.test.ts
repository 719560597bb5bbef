// Caddy in front of the service with on-demand TLS gated by GET /internal/tls-ask (CONTRACT "Custom
// domains", docs/deploy.md "Custom domains and automatic TLS"): Debian's real `caddy` binary, its own
// internal CA (`tls internal`), a real DNS server (dns2) for verification, HTTPS through real sockets.

import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { freePort, rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { seedSite } from '../helpers/seed.js';

const CNAME_TARGET = 'sites.test-target.example';
const DOMAIN = 'shop.customer-test.example';
const PENDING_DOMAIN = 'pending.other-customer.example';
const UNKNOWN_DOMAIN = 'unknown-domain.example';
const PAGE = '<!doctype html><h1>shop through caddy 4c1e</h1>';
const ENSURE_CADDY = fileURLToPath(new URL('../../scripts/ensure-caddy.sh', import.meta.url));
const DEPLOY_CADDYFILE = fileURLToPath(new URL('../../deploy/Caddyfile', import.meta.url));

interface Caddy {
  /** Where a plain-HTTP Caddy (startCaddy's `plainHttp`) listens. */
  httpPort: number;
  httpsPort: number;
  /** Caddy's internal root CA (PEM), the only CA the HTTPS client below trusts. */
  rootCa: string;
  /** Everything Caddy wrote to stderr (its log), for failure messages. */
  log: () => string;
  close(): Promise<void>;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * `caddy run` on free loopback ports with on-demand TLS from its internal CA, asking `appPort`; with
 * `plainHttp`, one plain-HTTP site on `httpPort` proxying to the app as the shipped Caddyfile does.
 */
async function startCaddy(dir: string, appPort: number, plainHttp = false): Promise<Caddy> {
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  const storage = join(dir, 'storage');
  const caddyfile = join(dir, 'Caddyfile');
  await writeFile(
    caddyfile,
    `{
	admin off
	storage file_system ${storage}
	skip_install_trust
	default_bind 127.0.0.1
	http_port ${httpPort}
	https_port ${httpsPort}
	on_demand_tls {
		ask http://127.0.0.1:${appPort}/internal/tls-ask
	}
}

${
  plainHttp
    ? `http://:${httpPort} {
	reverse_proxy 127.0.0.1:${appPort}
}`
    : `https:// {
	tls internal {
		on_demand
	}
	reverse_proxy 127.0.0.1:${appPort}
}`
}
`,
  );
  let log = '';
  // HOME/XDG point into the temp dir: Caddy writes autosave.json and its data nowhere else.
  const child: ChildProcess = spawn('caddy', ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
    env: {
      ...process.env,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_DATA_HOME: join(dir, 'data'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exited = code;
      resolve();
    }),
  );
  const close = async () => {
    if (exited === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    }
  };
  const rootPath = join(storage, 'pki', 'authorities', 'local', 'root.crt');
  const deadline = Date.now() + 15_000;
  const ready = async () =>
    plainHttp ? portOpen(httpPort) : (await portOpen(httpsPort)) && existsSync(rootPath);
  while (!(await ready())) {
    if (exited !== undefined) throw new Error(`caddy exited with ${exited}:\n${log}`);
    if (Date.now() > deadline) {
      await close();
      throw new Error(`caddy did not listen on ${httpsPort} within 15 s:\n${log}`);
    }
    await sleep(100);
  }
  const rootCa = plainHttp ? '' : await readFile(rootPath, 'utf8');
  return { httpPort, httpsPort, rootCa, log: () => log, close };
}

/** GET over HTTPS through Caddy with SNI and Host `host`, trusting only Caddy's root CA. */
function httpsGet(
  caddy: Caddy,
  host: string,
  path = '/',
): Promise<{ status: number; body: string; certNames: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: caddy.httpsPort,
        servername: host,
        path,
        headers: { host },
        ca: caddy.rootCa,
        agent: false,
        timeout: 15_000,
      },
      (res) => {
        const cert = (res.socket as import('node:tls').TLSSocket).getPeerCertificate();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            certNames: cert.subjectaltname ?? '',
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`HTTPS request for ${host} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** A bare TLS handshake with SNI `host`: resolves with the error it failed with, or null if it succeeded. */
function handshake(caddy: Caddy, host: string): Promise<Error | null> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: caddy.httpsPort,
      servername: host,
      // Verification off on purpose: the point is whether Caddy presents any certificate at all.
      rejectUnauthorized: false,
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(new Error('handshake timed out'));
    }, 15_000);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(null);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      resolve(err);
    });
  });
}

/** Statuses the service answered to GET /internal/tls-ask?domain=<domain>, from its request log. */
function askAnswers(t: TestApp, domain: string): number[] {
  const lines = t.logs.map((l) => {
    try {
      return JSON.parse(l) as { reqId?: string; req?: { url?: string }; res?: { statusCode?: number } };
    } catch {
      return {};
    }
  });
  const asked = new Set(
    lines
      .filter((l) => l.req?.url === `/internal/tls-ask?domain=${encodeURIComponent(domain)}`)
      .map((l) => l.reqId),
  );
  return lines.filter((l) => asked.has(l.reqId) && l.res?.statusCode).map((l) => l.res?.statusCode as number);
}

/** askAnswers once the service's log has the answer (the log line follows the response by a tick). */
async function askAnswersSettled(t: TestApp, domain: string): Promise<number[]> {
  const deadline = Date.now() + 2000;
  while (askAnswers(t, domain).length === 0 && Date.now() < deadline) await sleep(20);
  return askAnswers(t, domain);
}

/** A refused handshake: a TLS alert from Caddy (or the connection cut), not a timeout. */
function assertRefused(err: Error | null, what: string) {
  assert.ok(err, `the TLS handshake for ${what} must fail`);
  const code = (err as NodeJS.ErrnoException).code ?? '';
  assert.match(code, /^(ERR_SSL_|ECONNRESET)/, err.message);
}

describe('Caddy on-demand TLS in front of the service (tls internal, ask /internal/tls-ask)', () => {
  let dns: DnsPeer;
  let t: TestApp;
  let caddy: Caddy;
  let dir: string;
  let key: string;
  let slug: string;
  let otherKey: string;

  before(async () => {
    // A fresh machine's CI has no caddy: the project's own script installs Debian's package.
    execFileSync('bash', [ENSURE_CADDY], { stdio: ['ignore', 'inherit', 'inherit'] });
    dns = await startDnsPeer({});
    t = await startTestApp({ DNS_SERVERS: dns.server, CNAME_TARGET });
    dir = await mkdtemp(join(tmpdir(), 'slipway-caddy-'));

    key = await signIn(t, 'shop-owner@example.com');
    slug = assertPublished(await publish(t, { 'index.html': PAGE }, { key })).slug;
    const added = await t.api('/api/v1/domains', { method: 'POST', key, body: { domain: DOMAIN } });
    assert.equal(added.status, 201, added.text);
    const records = added.body.dns.records as Array<{ type: string; name: string; value: string }>;
    const txt = records.find((r) => r.type === 'TXT');
    const cname = records.find((r) => r.type === 'CNAME');
    assert.deepEqual(cname && { name: cname.name, value: cname.value }, {
      name: DOMAIN,
      value: CNAME_TARGET,
    });
    assert.ok(txt, added.text);
    dns.records[txt.name] = { TXT: [txt.value] };
    dns.records[DOMAIN] = { CNAME: CNAME_TARGET };
    const verified = await t.api(`/api/v1/domains/${DOMAIN}/verify`, { method: 'POST', key });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.status, 'active', verified.text);
    const link = await t.api('/api/v1/links', {
      method: 'POST',
      key,
      body: { slug, domain: DOMAIN, location: '/' },
    });
    assert.equal(link.status, 201, link.text);

    // Another account's domain, added but never verified (the free plan allows one domain each).
    otherKey = await signIn(t, 'pending-owner@example.com');
    const pending = await t.api('/api/v1/domains', {
      method: 'POST',
      key: otherKey,
      body: { domain: PENDING_DOMAIN },
    });
    assert.equal(pending.status, 201, pending.text);

    caddy = await startCaddy(dir, t.port);
  });

  after(async () => {
    await caddy?.close();
    await t?.close();
    await dns?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function sslStatusOf(domain: string, apiKey: string): Promise<string | undefined> {
    const res = await t.api('/api/v1/domains', { key: apiKey });
    assert.equal(res.status, 200, res.text);
    return (res.body.domains as Array<{ domain: string; sslStatus: string }>).find((d) => d.domain === domain)
      ?.sslStatus;
  }

  test('an active custom domain gets a certificate on its first HTTPS request and serves its site', async () => {
    assert.equal(await sslStatusOf(DOMAIN, key), 'provisioning', 'verified, not asked for yet');
    const res = await httpsGet(caddy, DOMAIN).catch((err: Error) => {
      throw new Error(`${err.message}\ncaddy log:\n${caddy.log()}`);
    });
    assert.equal(res.status, 200, res.body);
    assert.equal(res.body, PAGE);
    // Node verified the chain against Caddy's root and the name against the SNI; say it outright too.
    assert.match(res.certNames, new RegExp(`DNS:${DOMAIN.replaceAll('.', '\\.')}(,|$)`));
    const answers = await askAnswersSettled(t, DOMAIN);
    assert.ok(
      answers.length > 0 && answers.every((s) => s === 200),
      `Caddy asked and was allowed: ${answers}`,
    );
    assert.equal(await sslStatusOf(DOMAIN, key), 'active', 'the front end asked and was allowed');
    assert.ok(existsSync(join(dir, 'storage', 'certificates', 'local', DOMAIN)), 'certificate stored');
    // A second connection reuses the stored certificate.
    const again = await httpsGet(caddy, DOMAIN, '/');
    assert.equal(again.status, 200);
    assert.equal(again.body, PAGE);
  });

  test('the host of a live site also gets a certificate', async () => {
    const host = `${slug}.localhost`;
    const res = await httpsGet(caddy, host);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.body, PAGE);
    assert.match(res.certNames, new RegExp(`DNS:${host.replaceAll('.', '\\.')}(,|$)`));
  });

  test('an unknown domain gets no certificate: the TLS handshake fails', async () => {
    assertRefused(await handshake(caddy, UNKNOWN_DOMAIN), 'an unknown domain');
    // Caddy did ask, and the service said no.
    assert.ok(
      (await askAnswersSettled(t, UNKNOWN_DOMAIN)).includes(404),
      'the service was asked about the unknown domain',
    );
    assert.ok(!askAnswers(t, UNKNOWN_DOMAIN).includes(200));
    const viaHttps = await httpsGet(caddy, UNKNOWN_DOMAIN).then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(viaHttps, 'an HTTPS request for an unknown domain must fail');
    assert.ok(
      !existsSync(join(dir, 'storage', 'certificates', 'local', UNKNOWN_DOMAIN)),
      'no certificate stored',
    );
  });

  test('a pending (unverified) domain gets no certificate and stays pending', async () => {
    assertRefused(await handshake(caddy, PENDING_DOMAIN), 'a pending domain');
    assert.ok(
      (await askAnswersSettled(t, PENDING_DOMAIN)).includes(404),
      'the service was asked about the pending domain',
    );
    assert.ok(!askAnswers(t, PENDING_DOMAIN).includes(200));
    assert.ok(
      !existsSync(join(dir, 'storage', 'certificates', 'local', PENDING_DOMAIN)),
      'no certificate stored',
    );
    assert.equal(await sslStatusOf(PENDING_DOMAIN, otherKey), 'pending');
  });

  test('the shipped deploy/Caddyfile is valid for this caddy', () => {
    // validate provisions every module (on_demand_tls ask, tls, reverse_proxy) without binding ports.
    const out = execFileSync('caddy', ['validate', '--adapter', 'caddyfile', '--config', DEPLOY_CADDYFILE], {
      env: {
        ...process.env,
        HOME: dir,
        XDG_CONFIG_HOME: join(dir, 'config'),
        XDG_DATA_HOME: join(dir, 'data'),
      },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    assert.match(out, /Valid configuration/);
  });
});

// Issue 19 items 4 and 6 (docs/deploy.md "Client addresses", "The site domain"): behind Caddy as shipped,
// with TRUST_PROXY=127.0.0.1, an X-Forwarded-For written by the client never names the client (Caddy
// replaces it with the address it saw), and a browser's full cookie jar reaches a site.
describe('Caddy in front: the client address and large cookie jars', () => {
  let t: TestApp;
  let caddy: Caddy;
  let dir: string;

  before(async () => {
    execFileSync('bash', [ENSURE_CADDY], { stdio: ['ignore', 'inherit', 'inherit'] });
    t = await startTestApp({ TRUST_PROXY: '127.0.0.1', RATE_LIMIT_ANONYMOUS: '3' });
    dir = await mkdtemp(join(tmpdir(), 'slipway-caddy-'));
    caddy = await startCaddy(dir, t.port, true);
  });

  after(async () => {
    await caddy?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('rotating forged X-Forwarded-For entries through Caddy does not open new rate-limit windows', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`http://127.0.0.1:${caddy.httpPort}/api/v1/nothing-here`, {
        headers: { 'x-forwarded-for': `192.0.2.${i + 1}` },
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [404, 404, 404, 429, 429], caddy.log());
    // The service counted the address Caddy saw (this test's loopback), not a forged one.
    const logged = t.logs
      .filter((l) => l.includes('"remoteAddress"'))
      .map((l) => JSON.parse(l).req.remoteAddress);
    assert.ok(logged.length > 0 && logged.every((a: string) => a === '127.0.0.1'), String(logged));
  });

  test('a site request carrying a full browser cookie jar (180 x 4096 bytes) passes Caddy and answers 200', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'through caddy' } });
    const cookie = Array.from({ length: 180 }, (_, i) => `c${i}=${'v'.repeat(4096 - `c${i}`.length)}`).join(
      '; ',
    );
    const res = await rawRequest(caddy.httpPort, {
      host: `${slug}.localhost`,
      path: '/',
      headers: { cookie },
    });
    assert.equal(res.status, 200, caddy.log());
    assert.equal(res.body.toString(), 'through caddy');
  });
});
