// Configuration: defaults give the embedded set-up; a bad value names its variable; the docs' tables of
// variables are the one table in src/config.ts.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  loadConfig,
  shownDefault,
  VARIABLES,
  type Variable,
  type VariableName,
} from '../src/config.js';

describe('loadConfig', () => {
  test('defaults are the embedded set-up', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.baseUrl, 'http://localhost:8080');
    assert.equal(c.siteDomain, 'localhost:8080');
    assert.equal(c.siteHost, 'localhost');
    assert.equal(c.database.dialect, 'sqlite');
    assert.equal(c.blobs.provider, 'disk');
    assert.equal(c.mail.transport, 'dev');
    assert.equal(c.redisUrl, undefined);
    assert.deepEqual(c.rateLimits, { anonymous: 5, free: 60, hobby: 200 });
    assert.deepEqual(c.signInLimits, { codesPerEmail: 5, codesPerIp: 20, checksPerIp: 30 });
    assert.equal(c.proxyEnabled, false);
    assert.equal(c.payments.provider, 'test');
    assert.equal(c.cnameTarget, 'localhost');
    assert.equal(c.mailFrom, 'Slipway <no-reply@localhost>');
  });

  test('PORT feeds the BASE_URL and SITE_DOMAIN defaults', () => {
    const c = loadConfig({ PORT: '9000' });
    assert.equal(c.baseUrl, 'http://localhost:9000');
    assert.equal(c.siteDomain, 'localhost:9000');
  });

  test('production-like values', () => {
    const c = loadConfig({
      BASE_URL: 'https://slipway.example.com/',
      SITE_DOMAIN: 'slipway.site',
      DATABASE_URL: 'postgres://u@db/slipway',
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      PLAN_FREE_MAX_SITES: '3',
    });
    assert.equal(c.baseUrl, 'https://slipway.example.com');
    assert.equal(c.scheme, 'https');
    assert.equal(c.siteHost, 'slipway.site');
    assert.deepEqual(c.database, { dialect: 'postgres', url: 'postgres://u@db/slipway' });
    assert.equal(c.secretsKey?.length, 32);
    assert.deepEqual(c.planOverrides, { free: { maxSites: 3 } });
  });

  test("TRUST_PROXY: off, a number of hops (true = 1), or the proxies' addresses and CIDRs", () => {
    const trust = (value?: string) =>
      loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).trustProxy;
    assert.deepEqual(trust(), { hops: 0 });
    assert.deepEqual(trust('false'), { hops: 0 });
    assert.deepEqual(trust('0'), { hops: 0 });
    assert.deepEqual(trust('true'), { hops: 1 });
    assert.deepEqual(trust('1'), { hops: 1 });
    assert.deepEqual(trust('2'), { hops: 2 });
    const list = trust(' 127.0.0.1, 10.0.0.0/8 ,::1,2001:db8::/32');
    assert.ok('proxies' in list);
    for (const [address, family, expected] of [
      ['127.0.0.1', 'ipv4', true],
      ['127.0.0.2', 'ipv4', false],
      ['10.200.0.1', 'ipv4', true],
      ['::1', 'ipv6', true],
      ['2001:db8:ffff::1', 'ipv6', true],
      ['2001:db9::1', 'ipv6', false],
    ] as const) {
      assert.equal(list.proxies.check(address, family), expected, address);
    }
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ BASE_URL: 'not a url' }, 'BASE_URL'],
    [{ BASE_URL: 'ftp://x' }, 'BASE_URL'],
    [{ BASE_URL: 'http://x/path' }, 'BASE_URL'],
    [{ SITE_DOMAIN: 'http://x' }, 'SITE_DOMAIN'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ SMTP_URL: 'nope' }, 'SMTP_URL'],
    [{ SECRETS_KEY: 'c2hvcnQ=' }, 'SECRETS_KEY'],
    [{ PAYMENT_PROVIDER: 'razorpay' }, 'RAZORPAY_KEY_ID'],
    [{ PAYMENT_PROVIDER: 'stripe' }, 'PAYMENT_PROVIDER'],
    [{ RATE_LIMIT_FREE: '-1' }, 'RATE_LIMIT_FREE'],
    [{ RATE_LIMIT_SIGNIN_EMAIL: '0' }, 'RATE_LIMIT_SIGNIN_EMAIL'],
    [{ RATE_LIMIT_SIGNIN_IP: 'many' }, 'RATE_LIMIT_SIGNIN_IP'],
    [{ RATE_LIMIT_SIGNIN_CHECKS: '-3' }, 'RATE_LIMIT_SIGNIN_CHECKS'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '-1' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '1.5' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '99' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '300.0.0.1' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/8/8' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '127.0.0.1,' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'caddy.internal' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0.0.0.0/0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::/0' }, 'TRUST_PROXY'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DNS_SERVERS: 'dns.example.com' }, 'DNS_SERVERS'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'S3_BUCKET'],
  ];
  for (const [env, variable] of bad) {
    test(`${JSON.stringify(env)} is refused naming ${variable}`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) =>
          err instanceof ConfigError && err.variable === variable && err.message.startsWith(variable),
      );
    });
  }

  test('a bad value stops start-up with one line naming the variable', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(res.status, 1);
    const lines = res.stderr.trim().split('\n');
    assert.equal(lines.length, 1, res.stderr);
    assert.match(lines[0]!, /PORT/);
  });
});

// ---- the docs' tables are the table's (src/config.ts VARIABLES) ----------------------------------------

/** One row per documented meaning: a variable and the ones documented `with` it. */
function docRows(): Array<{ names: VariableName[]; specs: Variable<unknown>[] }> {
  const names = Object.keys(VARIABLES) as VariableName[];
  return names
    .filter((name) => VARIABLES[name].with === undefined)
    .map((lead) => {
      const group = [lead, ...names.filter((name) => VARIABLES[name].with === lead)];
      return { names: group, specs: group.map((name) => VARIABLES[name] as Variable<unknown>) };
    });
}

const cellOfNames = (names: string[]) => names.map((n) => `\`${n}\``).join(', ');
function cellOfDefaults(specs: Variable<unknown>[]): string {
  const shown = [...new Set(specs.map(shownDefault))];
  return shown.join(', ');
}

/** The markdown table that follows `heading` (a line of the file), header row included. */
function tableAfter(file: string, heading: string): string {
  const lines = readFileSync(file, 'utf8').split('\n');
  const at = lines.indexOf(heading);
  assert.ok(at >= 0, `${file} has the line ${heading}`);
  const start = lines.findIndex((line, i) => i > at && line.startsWith('|'));
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  return lines.slice(start, end).join('\n');
}

/** The cells of a markdown table row (a `|` inside backticks is text). */
function cells(row: string): string[] {
  const out: string[] = [];
  let cell = '';
  let code = false;
  for (const ch of row.trim().slice(1, -1)) {
    if (ch === '`') code = !code;
    if (ch === '|' && !code) {
      out.push(cell.trim());
      cell = '';
    } else cell += ch;
  }
  out.push(cell.trim());
  return out;
}

describe('the configuration docs', () => {
  test("README.md's table is the variables table", () => {
    const expected = [
      '| variable | default | meaning |',
      '|---|---|---|',
      ...docRows().map(
        ({ names, specs }) => `| ${cellOfNames(names)} | ${cellOfDefaults(specs)} | ${specs[0]!.doc} |`,
      ),
    ].join('\n');
    assert.equal(tableAfter('README.md', '## Configuration'), expected);
  });

  test("docs/deploy.md's table of the scale-out set is the variables table's", () => {
    const expected = [
      '| variable | example |',
      '|---|---|',
      ...docRows()
        .filter(({ specs }) => specs[0]!.scaleOut !== undefined)
        .map(({ names, specs }) => `| ${cellOfNames(names)} | ${specs[0]!.scaleOut} |`),
    ].join('\n');
    assert.equal(tableAfter('docs/deploy.md', 'Every node gets the same configuration:'), expected);
  });

  /** Variables CONTRACT.md names for features not built yet: nothing reads them (remove one once it is). */
  const NOT_YET_READ = ['WEBHOOK_RETRY_BASE_S'];

  test("every variable of CONTRACT.md's table is in the table with the default CONTRACT gives", (t) => {
    // CONTRACT.md lives in the team's shared folder beside the checkout, not in the repository: a clone
    // elsewhere has nothing to compare with, and says so rather than passing.
    const contractFile = fileURLToPath(new URL('../../shared/CONTRACT.md', import.meta.url));
    if (!existsSync(contractFile)) {
      t.skip(`${contractFile} is not beside this checkout`);
      return;
    }
    const contract = tableAfter(contractFile, '## Configuration (environment variables)');
    const problems: string[] = [];
    for (const row of contract.split('\n').slice(2)) {
      const [namesCell = '', defaultCell = ''] = cells(row);
      const names = [...namesCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!);
      const wanted = defaultCell.replace(/^unset = /, '').trim();
      // `5`, `60`, `200`: one default per name; otherwise one default for the row.
      const each = wanted.split(', ');
      names.forEach((name, i) => {
        if (NOT_YET_READ.includes(name)) return;
        if (!(name in VARIABLES)) {
          problems.push(`${name}: not in VARIABLES`);
          return;
        }
        const spec = VARIABLES[name as VariableName] as Variable<unknown>;
        const contractDefault = each.length === names.length ? each[i]! : i === 0 ? wanted : undefined;
        if (
          contractDefault !== undefined &&
          contractDefault !== '' &&
          shownDefault(spec) !== contractDefault
        ) {
          problems.push(`${name}: default ${shownDefault(spec)}, CONTRACT says ${contractDefault}`);
        }
      });
    }
    for (const name of NOT_YET_READ)
      if (name in VARIABLES) problems.push(`${name}: read now, drop it from NOT_YET_READ`);
    assert.deepEqual(problems, []);
  });

  test('a constant default is the value loadConfig reads when the variable is unset', () => {
    const c = loadConfig({});
    assert.equal(shownDefault(VARIABLES.PORT), `\`${c.port}\``);
    assert.equal(shownDefault(VARIABLES.SERVE_CACHE_MB), `\`${c.serveCacheBytes / 1024 / 1024}\``);
    assert.equal(shownDefault(VARIABLES.RATE_LIMIT_FREE), `\`${c.rateLimits.free}\``);
    assert.equal(shownDefault(VARIABLES.S3_CHECKSUM), '`WHEN_REQUIRED`');
  });
});
