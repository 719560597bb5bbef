// The secret scanner's rule table (src/core/scan/rules.ts): every detected type in several embeddings with
// its exact type and line, the public values and placeholders that must never block a publish, and the
// promise that secretlint's whole recommended preset finds nothing our scan misses.

import assert from 'node:assert/strict';
import { createHash, createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { rules as presetRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintCoreConfig } from '@secretlint/types';
import {
  anySecretlintTriggered,
  SECRETLINT_TRIGGERS,
  secretlintTriggered,
} from '../../src/core/scan/rules.js';
import { type Finding, scanText } from '../../src/core/scan/scanner.js';

// ---------------------------------------------------------------------------------------------------------
// Fixture material: random-looking but derived from a label, so every run scans the same text.

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64URL = `${B62}_-`;
const HEX = '0123456789abcdef';
const LETTERS = B62.slice(0, 52);
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const DIGITS = '0123456789';

/** `length` characters of `alphabet`, uniformly distributed, the same for the same label. */
function chars(label: string, length: number, alphabet: string): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  for (let block = 0; out.length < length; block++) {
    for (const byte of createHash('sha256').update(`${label}#${block}`).digest()) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** `length` bytes, the same for the same label. */
function bytes(label: string, length: number): Buffer {
  const blocks = Array.from({ length: Math.ceil(length / 32) }, (_, i) =>
    createHash('sha256').update(`${label}#${i}`).digest(),
  );
  return Buffer.concat(blocks).subarray(0, length);
}

const uuid = (label: string) => chars(label, 32, HEX).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** PEM armour around DER bytes, 64 base64 characters a line (RFC 7468). */
function pem(label: string, der: Buffer, width = 64): string {
  const body = der
    .toString('base64')
    .match(new RegExp(`.{1,${width}}`, 'g'))
    ?.join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/** The TLVs inside a DER SEQUENCE, each as its whole encoding (tag, length and content). */
function derChildren(der: Buffer): { tag: number; tlv: Buffer; content: Buffer }[] {
  const header = (at: number) => {
    const first = der[at + 1] ?? 0;
    if (first < 0x80) return { length: first, contentAt: at + 2 };
    let length = 0;
    for (let i = 0; i < (first & 0x7f); i++) length = length * 256 + (der[at + 2 + i] ?? 0);
    return { length, contentAt: at + 2 + (first & 0x7f) };
  };
  const outer = header(0);
  const out = [];
  for (let at = outer.contentAt; at < outer.contentAt + outer.length; ) {
    const { length, contentAt } = header(at);
    out.push({
      tag: der[at] ?? 0,
      tlv: der.subarray(at, contentAt + length),
      content: der.subarray(contentAt, contentAt + length),
    });
    at = contentAt + length;
  }
  return out;
}

function derSequence(children: Buffer[]): Buffer {
  const content = Buffer.concat(children);
  const n = content.length;
  const length =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([0x30]), length, content]);
}

/** A DSA key in OpenSSL's traditional `DSA PRIVATE KEY` form: SEQUENCE { 0, p, q, g, y, x }. */
function traditionalDsaKey(): string {
  const { privateKey, publicKey } = generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 });
  const pkcs8 = derChildren(privateKey.export({ format: 'der', type: 'pkcs8' }));
  const [, algorithm, wrapped] = pkcs8;
  const params = derChildren(derChildren(algorithm!.tlv)[1]!.tlv).map((c) => c.tlv); // p, q, g
  const x = wrapped!.content; // OCTET STRING { INTEGER x }
  const spki = derChildren(publicKey.export({ format: 'der', type: 'spki' }));
  const y = spki[1]!.content.subarray(1); // BIT STRING: unused-bits byte, then INTEGER y
  return pem('DSA PRIVATE KEY', derSequence([Buffer.from([2, 1, 0]), ...params, y, x]));
}

/** An Ed25519 key in OpenSSH's own format (PROTOCOL.key), which node:crypto does not write. */
function opensshKey(): string {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const pk = Buffer.from(jwk.x ?? '', 'base64url');
  const sk = Buffer.from(jwk.d ?? '', 'base64url');
  const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  const str = (b: Buffer | string) => Buffer.concat([u32(Buffer.byteLength(b)), Buffer.from(b)]);
  const publicBlob = Buffer.concat([str('ssh-ed25519'), str(pk)]);
  const check = randomBytes(4);
  const secret = Buffer.concat([check, check, publicBlob, str(Buffer.concat([sk, pk])), str('deploy@ci')]);
  const padding = Buffer.from(Array.from({ length: (8 - (secret.length % 8)) % 8 }, (_, i) => i + 1));
  const blob = Buffer.concat([
    Buffer.from('openssh-key-v1\0'),
    str('none'),
    str('none'),
    str(''),
    u32(1),
    str(publicBlob),
    str(Buffer.concat([secret, padding])),
  ]);
  return pem('OPENSSH PRIVATE KEY', blob, 70);
}

const pkcs8Pem = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
  key.export({ format: 'pem', type: 'pkcs8' }).toString();

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KEYS = {
  rsa: rsa.privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
  ec: generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ format: 'pem', type: 'sec1' })
    .toString(),
  dsa: traditionalDsaKey(),
  dsaPkcs8: pkcs8Pem(generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 }).privateKey),
  openssh: opensshKey(),
  ed25519: pkcs8Pem(generateKeyPairSync('ed25519').privateKey),
  encrypted: rsa.privateKey
    .export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'correct horse battery' })
    .toString(),
  rsaPkcs8: pkcs8Pem(rsa.privateKey),
  rsaPublic: rsa.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
};

/** A signed HS256 JWT with this payload (Supabase keys are such JWTs). */
function jwt(payload: Record<string, unknown>): string {
  const unsigned = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}`;
  return `${unsigned}.${createHmac('sha256', chars('jwt-secret', 40, B62))
    .update(unsigned)
    .digest('base64url')}`;
}
const SUPABASE_REF = 'abcdefghijklmnopqrst';
const supabaseKey = (role: string) =>
  jwt({ iss: 'supabase', ref: SUPABASE_REF, role, iat: 1717000000, exp: 2032576000 });

function serviceAccountJson(): string {
  const project = 'storefront-prod-4821';
  const email = `deployer@${project}.iam.gserviceaccount.com`;
  const account = {
    type: 'service_account',
    project_id: project,
    private_key_id: chars('sa-key-id', 40, HEX),
    private_key: KEYS.rsaPkcs8,
    client_email: email,
    client_id: chars('sa-client-id', 21, DIGITS).replace(/^0/, '1'),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
    universe_domain: 'googleapis.com',
  };
  return JSON.stringify(account, null, 2);
}

// ---------------------------------------------------------------------------------------------------------
// Embeddings: where a secret sits in a site's files. Each takes the value and the name it is assigned to.

/** Code around a value in a minified bundle: long, and full of `token` and `password` words. */
const MINIFIED_CODE = Array.from(
  { length: 30 },
  (_, i) =>
    `function f${i}(e,t){return e.token=t.token,e.type="password"===t.type?"text":t.type,e.passwordField="#pw",e.id=${i}}`,
).join(';');

const envName = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

type Embed = (value: string, name: string) => string;

const envFile = (v: string, name: string) =>
  `# Production settings\nNODE_ENV=production\n${envName(name)}=${v.includes('\n') ? JSON.stringify(v) : v}\n`;
const moduleSource = (v: string, name: string) =>
  `// Storefront settings.\nexport const ${name} = ${JSON.stringify(v)};\nexport const region = "eu";\n`;

/** A source map (one JSON line) whose sourcesContent holds `content` as the source `source`. */
const sourceMap = (source: string, content: string) =>
  `${JSON.stringify({ version: 3, file: 'app.min.js', sources: [source], sourcesContent: [content], names: [], mappings: 'AAAA;AACA' })}\n`;

/** A bundle line with its source map inlined as a base64 data: URL. */
const inlineSourceMap = (content: string) =>
  `!function(){var c=window.app={};c.start()}();\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(sourceMap('../src/config.ts', content)).toString('base64')}\n`;

const EMBEDDINGS: Record<string, Embed> = {
  'a JS string literal': (v, name) =>
    `import { createClient } from './client.js';\n\nconst ${name} = ${JSON.stringify(v)};\nexport const client = createClient({ ${name} });\n`,
  'a JSON file': (v, name) =>
    `${JSON.stringify({ name: 'storefront', version: '2.3.1', [name]: v, debug: false }, null, 2)}\n`,
  'an inline <script> in HTML': (v, name) =>
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Shop</title>\n<script>\n  window.CONFIG = { region: "eu", ${name}: ${JSON.stringify(v)} };\n</script>\n</head>\n<body><div id="app"></div></body>\n</html>\n`,
  'a minified bundle line': (v, name) =>
    `/*! storefront v2.3.1 | MIT */\n!function(){"use strict";${MINIFIED_CODE};var c={region:"eu",${name}:${JSON.stringify(v)}};${MINIFIED_CODE};window.app=c}();\n//# sourceMappingURL=app.min.js.map\n`,
  'a template literal': (v, name) =>
    `const region = 'eu';\nconst ${name} = \`${v}\`;\nexport default { region, ${name} };\n`,
  'a source map': (v, name) => sourceMap('../src/config.ts', moduleSource(v, name)),
  'a .env line': envFile,
  'a YAML line': (v, name) =>
    `service:\n  region: eu-west-1\n  ${envName(name).toLowerCase()}: ${v.includes('\n') ? JSON.stringify(v) : v}\n`,
  // ASP.NET's default JavaScriptEncoder and other HTML-safe serializers write `"` as `\u0022`.
  'JSON with \\u0022 quotes in HTML': (v, name) =>
    `<!doctype html>\n<html>\n<body>\n<script>\n  window.__CONFIG__ = JSON.parse("${JSON.stringify({ region: 'eu', [name]: v }).replace(/"/g, '\\u0022')}");\n</script>\n</body>\n</html>\n`,
  // A .env file a build bundled as text (a raw import): its lines sit in sourcesContent behind `\n` escapes.
  "a .env file in a source map's sourcesContent": (v, name) =>
    sourceMap('../.env.production', envFile(v, name)),
  // Dev builds inline the map as a data: URL (webpack's inline-source-map, esbuild --sourcemap=inline).
  'an inline base64 source map': (v, name) => inlineSourceMap(moduleSource(v, name)),
};
const ALL_EMBEDDINGS = Object.keys(EMBEDDINGS);

/** Where a finding is expected when the value is not in the text as is: the inline map's comment. */
const EMBEDDED_AT: Record<string, string> = { 'an inline base64 source map': '//# sourceMappingURL=' };

/** 1-based line of the first occurrence of `needle`. */
function lineOf(text: string, needle: string): number {
  const at = text.indexOf(needle);
  assert.ok(at >= 0, `fixture does not contain ${needle}`);
  return text.slice(0, at).split('\n').length;
}

const brief = (findings: Finding[]) => findings.map((f) => ({ type: f.type, line: f.line }));

// ---------------------------------------------------------------------------------------------------------
// Positives: a value of each type and the name it is assigned to, each tried in every embedding.

interface Positive {
  type: string;
  label: string;
  value: string;
  name: string;
}

const ANTHROPIC = `sk-ant-api03-${chars('anthropic', 93, B64URL)}AA`;
const OPENAI_PROJECT = `sk-proj-${chars('openai-proj', 156, B64URL)}`;
const STRIPE_LIVE = `sk_live_51${chars('stripe-live', 97, B62)}`;
const DISCORD_ID = '803672348201992262';
const AWS_ACCESS_KEY_ID = `AKIA${chars('aws-id', 16, BASE32)}`;
const AWS_SECRET = chars('aws-secret', 40, `${B62}/+`);
const TWILIO_SID = `AC${chars('twilio-sid', 32, HEX)}`;

const PRIVATE_KEYS: Positive[] = [
  { label: 'PEM RSA (PKCS#1)', value: KEYS.rsa, name: 'signingKey' },
  { label: 'PEM EC P-256 (SEC1)', value: KEYS.ec, name: 'ecKey' },
  { label: 'PEM DSA', value: KEYS.dsa, name: 'dsaKey' },
  { label: 'PKCS#8 DSA', value: KEYS.dsaPkcs8, name: 'dsaKey' },
  { label: 'OpenSSH', value: KEYS.openssh, name: 'deployKey' },
  { label: 'PKCS#8 Ed25519', value: KEYS.ed25519, name: 'edKey' },
  { label: 'encrypted PKCS#8', value: KEYS.encrypted, name: 'wrappedKey' },
].map((k) => ({ ...k, type: 'private_key' }));

const POSITIVES: Positive[] = [
  ...PRIVATE_KEYS,
  { type: 'stripe_secret_key', label: 'sk_live_', value: STRIPE_LIVE, name: 'stripeKey' },
  {
    type: 'stripe_secret_key',
    label: 'sk_test_',
    value: `sk_test_${chars('stripe-test', 24, B62)}`,
    name: 'stripe',
  },
  {
    type: 'stripe_restricted_key',
    label: 'rk_live_',
    value: `rk_live_51${chars('rk-live', 97, B62)}`,
    name: 'rk',
  },
  {
    type: 'stripe_restricted_key',
    label: 'rk_test_',
    value: `rk_test_${chars('rk-test', 24, B62)}`,
    name: 'rk',
  },
  { type: 'openai_api_key', label: 'sk-proj-', value: OPENAI_PROJECT, name: 'openai' },
  {
    type: 'openai_api_key',
    label: 'legacy sk-…T3BlbkFJ…',
    value: `sk-${chars('openai-a', 20, B62)}T3BlbkFJ${chars('openai-b', 20, B62)}`,
    name: 'openai',
  },
  { type: 'anthropic_api_key', label: 'sk-ant-api03-', value: ANTHROPIC, name: 'anthropic' },
  { type: 'github_token', label: 'ghp_', value: `ghp_${chars('ghp', 36, B62)}`, name: 'gh' },
  {
    type: 'github_token',
    label: 'github_pat_',
    value: `github_pat_${chars('pat-a', 22, B62)}_${chars('pat-b', 59, B62)}`,
    name: 'gh',
  },
  { type: 'gitlab_token', label: 'glpat-', value: `glpat-${chars('glpat', 20, B64URL)}`, name: 'gitlab' },
  {
    type: 'slack_token',
    label: 'xoxb-',
    value: `xoxb-123456789012-1234567890123-${chars('slack', 24, B62)}`,
    name: 'slack',
  },
  {
    type: 'slack_token',
    label: 'xapp- (app-level)',
    value: `xapp-1-A0${chars('xapp-id', 9, BASE32)}-4567890123456-${chars('xapp', 64, HEX)}`,
    name: 'slackApp',
  },
  {
    type: 'slack_webhook_url',
    label: 'hooks.slack.com',
    value: `https://hooks.slack.com/services/T0${chars('slack-t', 8, BASE32)}/B0${chars('slack-b', 9, BASE32)}/${chars('slack-hook', 24, B62)}`,
    name: 'slackHook',
  },
  {
    type: 'sendgrid_api_key',
    label: 'SG.',
    value: `SG.${chars('sg-a', 22, B64URL)}.${chars('sg-b', 43, B64URL)}`,
    name: 'mail',
  },
  { type: 'twilio_api_key', label: 'SK + 32 hex', value: `SK${chars('twilio-sk', 32, HEX)}`, name: 'twilio' },
  { type: 'mailgun_api_key', label: 'key-', value: `key-${chars('mailgun', 32, HEX)}`, name: 'mailgun' },
  { type: 'npm_token', label: 'npm_', value: `npm_${chars('npm', 36, B62)}`, name: 'npm' },
  { type: 'huggingface_token', label: 'hf_', value: `hf_${chars('hf', 34, LETTERS)}`, name: 'hf' },
  { type: 'groq_api_key', label: 'gsk_', value: `gsk_${chars('groq', 52, B62)}`, name: 'groq' },
  {
    type: 'shopify_access_token',
    label: 'shpat_',
    value: `shpat_${chars('shopify', 32, HEX)}`,
    name: 'shop',
  },
  {
    type: 'discord_bot_token',
    label: 'base64 id . 6 . 27+',
    value: `${b64url(DISCORD_ID)}.${chars('discord-ts', 6, B64URL)}.${chars('discord-hmac', 38, B64URL)}`,
    name: 'bot',
  },
  {
    type: 'discord_webhook_url',
    label: 'discord.com/api/webhooks',
    value: `https://discord.com/api/webhooks/${DISCORD_ID}/${chars('discord-hook', 68, B64URL)}`,
    name: 'hook',
  },
  {
    type: 'telegram_bot_token',
    label: '123456789:AA',
    value: `123456789:AA${chars('telegram', 33, B64URL)}`,
    name: 'bot',
  },
  {
    type: 'database_connection_string',
    label: 'postgres://',
    value: 'postgres://app:S3cr3tPw9x@db.example.net:5432/app',
    name: 'db',
  },
  {
    type: 'database_connection_string',
    label: 'mongodb+srv://',
    value: `mongodb+srv://shop:${chars('mongo', 16, B62)}@cluster0.a1b2c.mongodb.net/shop?retryWrites=true&w=majority`,
    name: 'db',
  },
  {
    type: 'database_connection_string',
    label: 'mysql://',
    value: `mysql://root:${chars('mysql', 14, B62)}@10.0.3.12:3306/orders`,
    name: 'db',
  },
  {
    type: 'supabase_service_role_key',
    label: 'role service_role',
    value: supabaseKey('service_role'),
    name: 'supabase',
  },
];

describe('scanText: each secret type in each embedding', () => {
  for (const p of POSITIVES) {
    for (const where of ALL_EMBEDDINGS) {
      const text = EMBEDDINGS[where]!(p.value, p.name);
      const line = lineOf(text, EMBEDDED_AT[where] ?? p.value.slice(0, 12));
      test(`scanText reports ${p.type} (${p.label}) in ${where} at line ${line}`, async () => {
        assert.deepEqual(brief(await scanText(text)), [{ type: p.type, line }]);
      });
    }
  }
});

// ---------------------------------------------------------------------------------------------------------
// Types that need context around them: pairs, whole files, names.

interface Case {
  name: string;
  text: string;
  expect: Partial<Finding>[];
}

const SERVICE_ACCOUNT = serviceAccountJson();
const AWS_PAIR_ENV = `# deploy\nAWS_REGION=eu-west-1\nAWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID}\nAWS_SECRET_ACCESS_KEY=${AWS_SECRET}\n`;

const SERVICE_ACCOUNT_MAP = `${JSON.stringify({
  version: 3,
  file: 'app.min.js',
  sources: ['../src/credentials.json', '../src/app.ts'],
  sourcesContent: [
    SERVICE_ACCOUNT,
    "import credentials from './credentials.json';\ninitializeApp({ credentials });\n",
  ],
  names: [],
  mappings: 'AAAA;AACA',
})}\n`;
const PEM_IN_PRETTY_MAP = `${JSON.stringify(
  {
    version: 3,
    sources: ['a.js', 'b.js'],
    sourcesContent: [
      'export const a = 1;\n',
      `export const b = 2;\nconst pem = ${JSON.stringify(KEYS.ec)};\n`,
    ],
    mappings: 'AAAA',
  },
  null,
  2,
)}\n`;

const CONTEXT_CASES: Case[] = [
  {
    name: 'database_connection_string whose user name is a placeholder but whose password is real',
    text: `const url = "postgres://USER:${chars('pg-real', 18, B62)}@db.example.net:5432/app";\n`,
    expect: [{ type: 'database_connection_string', line: 1 }],
  },
  {
    name: 'aws_access_key_id and aws_secret_access_key as a .env pair at lines 3 and 4',
    text: AWS_PAIR_ENV,
    expect: [
      { type: 'aws_access_key_id', line: 3, variableName: 'AWS_ACCESS_KEY_ID' },
      { type: 'aws_secret_access_key', line: 4, variableName: 'AWS_SECRET_ACCESS_KEY' },
    ],
  },
  {
    name: 'aws_access_key_id and aws_secret_access_key as an S3 client config in JS',
    text: `import { S3Client } from '@aws-sdk/client-s3';\nconst s3 = new S3Client({\n  region: 'eu-west-1',\n  credentials: {\n    accessKeyId: '${AWS_ACCESS_KEY_ID}',\n    secretAccessKey: '${AWS_SECRET}',\n  },\n});\n`,
    expect: [
      { type: 'aws_access_key_id', line: 5 },
      { type: 'aws_secret_access_key', line: 6 },
    ],
  },
  {
    name: 'aws_access_key_id and aws_secret_access_key in a minified bundle line',
    text: `!function(){${MINIFIED_CODE};var s=new S3({accessKeyId:"${AWS_ACCESS_KEY_ID}",secretAccessKey:"${AWS_SECRET}",region:"eu-west-1"})}();\n`,
    expect: [
      { type: 'aws_access_key_id', line: 1 },
      { type: 'aws_secret_access_key', line: 1 },
    ],
  },
  {
    name: 'google_service_account_key as a service-account JSON file at the private_key line',
    text: SERVICE_ACCOUNT,
    expect: [
      {
        type: 'google_service_account_key',
        line: lineOf(SERVICE_ACCOUNT, '"private_key":'),
        variableName: 'GOOGLE_SERVICE_ACCOUNT_KEY',
        proxyHosts: ['oauth2.googleapis.com'],
      },
    ],
  },
  {
    name: 'google_service_account_key as an object literal in a JS module',
    text: `// Firestore admin.\nexport const credentials = ${SERVICE_ACCOUNT};\n`,
    expect: [{ type: 'google_service_account_key', line: 1 + lineOf(SERVICE_ACCOUNT, '"private_key":') }],
  },
  {
    name: 'google_service_account_key inside a source map whose sourcesContent holds the JSON file',
    text: SERVICE_ACCOUNT_MAP,
    expect: [{ type: 'google_service_account_key', line: 1 }],
  },
  {
    name: "google_service_account_key as a bundled JSON.parse('…') module on line 2",
    text: `/*! storefront */\n(self.webpackChunk=self.webpackChunk||[]).push([[179],{4821:e=>{"use strict";e.exports=JSON.parse('${JSON.stringify(JSON.parse(SERVICE_ACCOUNT)).replace(/\\/g, '\\\\')}')}}]);${MINIFIED_CODE}\n`,
    expect: [{ type: 'google_service_account_key', line: 2 }],
  },
  {
    name: 'twilio_auth_token as authToken next to an accountSid in JS',
    text: `const twilio = {\n  accountSid: "${TWILIO_SID}",\n  authToken: "${chars('twilio-auth', 32, HEX)}",\n};\n`,
    expect: [
      {
        type: 'twilio_auth_token',
        line: 3,
        variableName: 'TWILIO_AUTH_TOKEN',
        proxyHosts: ['api.twilio.com'],
      },
    ],
  },
  {
    name: 'twilio_auth_token as TWILIO_AUTH_TOKEN next to TWILIO_ACCOUNT_SID in .env',
    text: `TWILIO_ACCOUNT_SID=${TWILIO_SID}\nTWILIO_AUTH_TOKEN=${chars('twilio-auth-2', 32, HEX)}\n`,
    expect: [{ type: 'twilio_auth_token', line: 2 }],
  },
  {
    name: 'private_key inside a source map whose source holds the key with \\n escapes (\\\\n in the map)',
    text: PEM_IN_PRETTY_MAP,
    expect: [
      {
        type: 'private_key',
        line: lineOf(PEM_IN_PRETTY_MAP, 'export const b'),
        variableName: 'PRIVATE_KEY',
        proxyHosts: [],
      },
    ],
  },
  {
    name: 'telegram_bot_token inside an api.telegram.org/bot<token>/ URL',
    text: `const chat = 42;\nfetch(\`https://api.telegram.org/bot123456789:AA${chars('telegram-url', 33, B64URL)}/sendMessage?chat_id=\${chat}\`);\n`,
    expect: [{ type: 'telegram_bot_token', line: 2, variableName: 'TELEGRAM_BOT_TOKEN' }],
  },
  {
    name: 'private_key whose base64 body holds `your`, `XXXX` and `dummy` by chance',
    text: `const pem = \`${KEYS.rsa
      .replace(/^(.{200})..../ms, '$1XXXX')
      .replace(/^(.{400}).{4}/ms, '$1your')
      .replace(/^(.{600}).{5}/ms, '$1dummy')}\`;\n`,
    expect: [{ type: 'private_key', line: 1 }],
  },
  {
    name: 'openai_api_key and stripe_secret_key whose random parts hold `xxxx` and `Your` by chance',
    text: `const a = "sk-proj-${chars('oa-1', 60, B64URL)}xxxx${chars('oa-2', 40, B64URL)}Your${chars('oa-3', 48, B64URL)}";\nconst b = "sk_live_51${chars('st-1', 40, B62)}YOUR${chars('st-2', 53, B62)}";\n`,
    expect: [
      { type: 'openai_api_key', line: 1 },
      { type: 'stripe_secret_key', line: 2 },
    ],
  },
  {
    name: 'github_token in URL-encoded JSON (%22 just before the token)',
    text: `<p>Share</p>\n<a href="/share?state=%7B%22token%22%3A%22ghp_${chars('urlenc', 36, B62)}%22%7D">link</a>\n`,
    expect: [{ type: 'github_token', line: 2 }],
  },
  {
    name: 'a real key on a line with a secretlint-disable comment (filter-comments is not run)',
    text: `const a = 1;\n// secretlint-disable-next-line\nconst token = "ghp_${chars('disabled', 36, B62)}"; // secretlint-disable-line\n`,
    expect: [{ type: 'github_token', line: 3 }],
  },
  {
    name: 'stripe_secret_key with variable STRIPE_SECRET_KEY and proxy host api.stripe.com',
    text: EMBEDDINGS['a JS string literal']!(STRIPE_LIVE, 'stripeKey'),
    expect: [
      {
        type: 'stripe_secret_key',
        line: 3,
        variableName: 'STRIPE_SECRET_KEY',
        proxyHosts: ['api.stripe.com'],
      },
    ],
  },
  {
    name: 'openai_api_key with variable OPENAI_API_KEY and proxy host api.openai.com',
    text: EMBEDDINGS['a .env line']!(OPENAI_PROJECT, 'openai'),
    expect: [
      { type: 'openai_api_key', line: 3, variableName: 'OPENAI_API_KEY', proxyHosts: ['api.openai.com'] },
    ],
  },
  {
    name: 'anthropic_api_key with variable ANTHROPIC_API_KEY and proxy host api.anthropic.com',
    text: EMBEDDINGS['a JSON file']!(ANTHROPIC, 'anthropic'),
    expect: [
      {
        type: 'anthropic_api_key',
        line: 4,
        variableName: 'ANTHROPIC_API_KEY',
        proxyHosts: ['api.anthropic.com'],
      },
    ],
  },
  {
    name: 'supabase_service_role_key with the project host from the JWT ref as proxy host',
    text: EMBEDDINGS['a JS string literal']!(supabaseKey('service_role'), 'supabaseKey'),
    expect: [
      {
        type: 'supabase_service_role_key',
        line: 3,
        variableName: 'SUPABASE_SERVICE_ROLE_KEY',
        proxyHosts: [`${SUPABASE_REF}.supabase.co`],
      },
    ],
  },
];

/** A generic secret: a high-entropy value assigned to a secret-sounding name, with the name suggested. */
const generic = (name: string, text: string, line: number, variableName: string): Case => ({
  name,
  text,
  expect: [{ type: 'generic_secret', line, variableName, proxyHosts: [] }],
});

const GENERIC_CASES: Case[] = [
  generic(
    'generic_secret: `stripeSecret:` in a JS object suggests STRIPE_SECRET',
    `const cfg = {\n  stripeSecret: '${chars('g-stripe', 32, B62)}',\n};\n`,
    2,
    'STRIPE_SECRET',
  ),
  generic(
    'generic_secret: `JWT_SECRET=` unquoted in a .env line suggests JWT_SECRET',
    `PORT=8080\nJWT_SECRET=${chars('g-jwt', 48, B62)}\n`,
    2,
    'JWT_SECRET',
  ),
  generic(
    'generic_secret: `"client_secret":` in JSON suggests CLIENT_SECRET',
    `{\n  "client_id": "storefront",\n  "client_secret": "${chars('g-client', 40, B64URL)}"\n}\n`,
    3,
    'CLIENT_SECRET',
  ),
  generic(
    'generic_secret: `data-api-key=` in an HTML attribute suggests API_KEY',
    `<!doctype html>\n<body>\n<div id="map" data-api-key="${chars('g-data', 32, B62)}"></div>\n</body>\n`,
    3,
    'API_KEY',
  ),
  generic(
    'generic_secret: `password:` quoted in JS suggests PASSWORD',
    `login({\n  user: 'admin',\n  password: '${chars('g-pw', 18, B62)}',\n});\n`,
    3,
    'PASSWORD',
  ),
  generic(
    'generic_secret: `const api_key =` in JS suggests API_KEY',
    `const base = '/v1';\nconst api_key = "${chars('g-apikey', 32, HEX)}";\n`,
    2,
    'API_KEY',
  ),
  generic(
    'generic_secret: `e.apiKey=` in a minified bundle line suggests API_KEY',
    `/*! v1 */\n!function(e){${MINIFIED_CODE};e.apiKey="${chars('g-min', 40, B62)}";${MINIFIED_CODE}}(window);\n`,
    2,
    'API_KEY',
  ),
  generic(
    'generic_secret: `token:` in a YAML line suggests TOKEN',
    `deploy:\n  branch: main\n  token: ${chars('g-yaml', 40, B62)}\n`,
    3,
    'TOKEN',
  ),
  generic(
    'generic_secret: `secret` in a template literal suggests SECRET',
    `const a = 1;\nconst secret = \`${chars('g-tpl', 40, B62)}\`;\n`,
    2,
    'SECRET',
  ),
  generic(
    'generic_secret: `apiKey` with escaped quotes inside a source map suggests API_KEY',
    EMBEDDINGS['a source map']!(chars('g-map', 32, B62), 'apiKey'),
    1,
    'API_KEY',
  ),
  generic(
    'generic_secret: `clientSecret` in HTML-safe JSON with \\u0022 quotes suggests CLIENT_SECRET',
    EMBEDDINGS['JSON with \\u0022 quotes in HTML']!(chars('g-u0022', 40, B62), 'clientSecret'),
    5,
    'CLIENT_SECRET',
  ),
  generic(
    "generic_secret: `API_KEY=` in a .env file inside a source map's sourcesContent suggests API_KEY",
    EMBEDDINGS["a .env file in a source map's sourcesContent"]!(chars('g-env-map', 40, B62), 'apiKey'),
    1,
    'API_KEY',
  ),
  generic(
    "generic_secret: `token:` in a YAML file inside a source map's sourcesContent suggests TOKEN",
    sourceMap('../deploy.yml', `deploy:\n  branch: main\n  token: ${chars('g-yaml-map', 40, B62)}\n`),
    1,
    'TOKEN',
  ),
  generic(
    'generic_secret: `apiKey` in an inline base64 source map suggests API_KEY',
    EMBEDDINGS['an inline base64 source map']!(chars('g-inline', 32, B62), 'apiKey'),
    2,
    'API_KEY',
  ),
  generic(
    'generic_secret: a passphrase of words and digits (not a dotted name) suggests PASSWORD',
    `login({\n  user: 'admin',\n  password: 'correct-horse-battery-staple-42',\n});\n`,
    3,
    'PASSWORD',
  ),
  generic(
    'generic_secret: an Algolia admin key next to the application id and search key',
    `ALGOLIA_APP_ID=BH4D9OD16A\nALGOLIA_SEARCH_API_KEY=${chars('algolia-search', 32, HEX)}\nALGOLIA_ADMIN_API_KEY=${chars('algolia-admin', 32, HEX)}\n`,
    3,
    'ALGOLIA_ADMIN_API_KEY',
  ),
  generic(
    'generic_secret: a Datadog API key next to the RUM client token and application id',
    `DD_CLIENT_TOKEN=pub${chars('dd-pub-env', 32, HEX)}\nDD_APPLICATION_ID=${uuid('dd-app-env')}\nDD_API_KEY=${chars('dd-api', 32, HEX)}\n`,
    3,
    'DD_API_KEY',
  ),
  generic(
    'generic_secret: a PostHog personal API key (phx_) next to the project key (phc_)',
    `POSTHOG_KEY=phc_${chars('phc-env', 43, B62)}\nPOSTHOG_PERSONAL_API_KEY=phx_${chars('phx', 43, B62)}\n`,
    2,
    'POSTHOG_PERSONAL_API_KEY',
  ),
  generic(
    'generic_secret: a Mixpanel API secret next to mixpanel.init',
    `mixpanel.init("${chars('mp-token-2', 32, HEX)}");\nconst mixpanelApiSecret = "${chars('mp-secret', 32, HEX)}";\n`,
    2,
    'MIXPANEL_API_SECRET',
  ),
];

describe('scanText: secrets found by context and name', () => {
  for (const c of [...CONTEXT_CASES, ...GENERIC_CASES]) {
    test(`scanText reports ${c.name}`, async () => {
      const found = await scanText(c.text);
      const keys = new Set(c.expect.flatMap((e) => Object.keys(e))) as Set<keyof Finding>;
      const picked = found.map((f) => Object.fromEntries([...keys].map((k) => [k, f[k]])));
      assert.deepEqual(picked, c.expect);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------
// Negatives: public values, placeholders, hashes and ordinary code. Each must give no finding.

const CERTIFICATE = pem(
  'CERTIFICATE',
  Buffer.concat([Buffer.from('308203', 'hex'), bytes('certificate', 760)]),
);
const SHA256 = createHash('sha256').update('app.js').digest('hex');
const GIT_SHA = createHash('sha1').update('commit').digest('hex');
const ALGOLIA_KEY = chars('algolia', 32, HEX);
const PNG = `iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9h${chars('png', 600, `${B62}+/`)}==`;

const NEGATIVES: [string, string][] = [
  [
    'Stripe publishable keys pk_live_/pk_test_',
    `Stripe('pk_live_51${chars('pk-live', 97, B62)}');\nconst stripeTest = "pk_test_${chars('pk-test', 24, B62)}";\nconst publishableKey = 'pk_live_${chars('pk-live-2', 40, B62)}';\n`,
  ],
  [
    'a Firebase web config object',
    `const firebaseConfig = {\n  apiKey: "AIza${chars('firebase', 35, B64URL)}",\n  authDomain: "storefront-4821.firebaseapp.com",\n  projectId: "storefront-4821",\n  storageBucket: "storefront-4821.appspot.com",\n  messagingSenderId: "${chars('sender', 12, DIGITS)}",\n  appId: "1:${chars('sender', 12, DIGITS)}:web:${chars('appid', 22, HEX)}",\n  measurementId: "G-${chars('ga', 10, BASE32)}"\n};\n`,
  ],
  [
    'a Google Maps script tag with ?key=AIza…',
    `<script async src="https://maps.googleapis.com/maps/api/js?key=AIza${chars('maps', 35, B64URL)}&callback=initMap"></script>\n`,
  ],
  [
    'an Algolia DocSearch config',
    `docsearch({ appId: 'BH4D9OD16A', apiKey: '${ALGOLIA_KEY}', indexName: 'docs', container: '#search' });\n`,
  ],
  [
    'an algoliasearch client with a search-only key',
    `const client = algoliasearch('BH4D9OD16A', '${ALGOLIA_KEY}');\nconst index = client.initIndex('products');\n`,
  ],
  [
    'a Sentry DSN',
    `Sentry.init({ dsn: "https://${chars('sentry', 32, HEX)}@o123456.ingest.sentry.io/1234567", tracesSampleRate: 0.1 });\n`,
  ],
  [
    'a Mapbox public token pk.eyJ…',
    `mapboxgl.accessToken = 'pk.${b64url('{"u":"storefront","a":"clx4k2"}')}.${chars('mapbox', 22, B64URL)}';\n`,
  ],
  [
    'a reCAPTCHA site key in data-sitekey',
    `<div class="g-recaptcha" data-sitekey="6L${chars('recaptcha', 38, B64URL)}"></div>\n`,
  ],
  [
    'a reCAPTCHA site key in grecaptcha.render',
    `grecaptcha.render('captcha', { sitekey: '6L${chars('recaptcha-2', 38, B64URL)}', theme: 'light' });\n`,
  ],
  [
    'a Supabase anon JWT as supabaseKey and anonKey',
    `const supabaseKey = '${supabaseKey('anon')}';\nexport const anonKey = "${supabaseKey('anon')}";\nconst supabase = createClient('https://${SUPABASE_REF}.supabase.co', supabaseKey);\n`,
  ],
  ['a -----BEGIN PUBLIC KEY----- block', `const publicKey = \`${KEYS.rsaPublic}\`;\n`],
  ['a -----BEGIN CERTIFICATE----- block', `{"ca": ${JSON.stringify(CERTIFICATE)}}\n`],
  [
    'sk_live_xxxx and sk_live_... placeholders',
    `// Set your key: sk_live_xxxx\nconst stripe = Stripe('sk_live_...');\nconst secretKey = 'sk_live_xxxxxxxxxxxxxxxxxxxxxxxx';\n`,
  ],
  [
    'YOUR_API_KEY placeholders',
    `fetch('/v1/items?api_key=YOUR_API_KEY');\nconst config = { apiKey: "YOUR_API_KEY" };\nOPENAI_API_KEY=YOUR_API_KEY\n`,
  ],
  [
    '<your-token> and xoxb-your-bot-token',
    `const token = "<your-token>";\nconst slack = 'xoxb-your-bot-token';\n`,
  ],
  [
    'a truncated MIIE... inside BEGIN/END PRIVATE KEY',
    `const key = "-----BEGIN PRIVATE KEY-----\\nMIIE...\\n-----END PRIVATE KEY-----";\n`,
  ],
  [
    `password: "********" and token: "\${TOKEN}"`,
    `const form = { password: "********" };\nconst auth = { token: "\${TOKEN}" };\n`,
  ],
  [
    'postgres://user:password@localhost/db',
    `DATABASE_URL=postgres://user:password@localhost/db\nconst url = "postgres://user:password@localhost/db";\n`,
  ],
  [
    "AWS's documentation pair",
    `AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n`,
  ],
  [
    'a sha256 and a git sha in code not assigned to a secret name',
    `var v="${SHA256}",r="${GIT_SHA}";\nconst build = { commit: '${GIT_SHA}' };\n`,
  ],
  ['"hash": "<sha256>" in JSON', `{\n  "file": "app.js",\n  "hash": "${SHA256}"\n}\n`],
  [
    'an SRI integrity attribute',
    `<script src="https://cdn.example.net/lib.js" integrity="sha384-${bytes('sri', 48).toString('base64')}" crossorigin="anonymous"></script>\n`,
  ],
  [
    'UUIDs assigned to id and uuid',
    `const order = { id: "${uuid('order-id')}", uuid: '${uuid('order-uuid')}' };\n`,
  ],
  [
    'data: URIs with a base64 PNG',
    `.logo{background:url(data:image/png;base64,${PNG})}\n<img src="data:image/png;base64,${PNG}" alt="">\n`,
  ],
  [
    'token prefixes inside longer identifiers (risk_test_…, xghp_…, monkey-…)',
    `const risk_test_${chars('risk', 24, B62)} = 1;\nvar axghp_${chars('xghp', 36, B62)} = 2;\nconst monkey-${chars('monkey', 32, HEX)};\n`,
  ],
  [
    'placeholders after a \\u0022 escape',
    'JSON.parse("{\\u0022key\\u0022:\\u0022sk_live_xxxxxxxxxxxxxxxxxxxxxxxx\\u0022,\\u0022token\\u0022:\\u0022ghp_your_token_here\\u0022}")\n',
  ],
  [
    'minified code full of token and password words',
    `!function(){${MINIFIED_CODE};function tokenize(e){return e.split(/\\s+/)}var n={type:"password",passwordField:"#pw",tokenType:"Bearer",password_hint:"at least 12 characters"};e.token=t.token}();\n`,
  ],
  [
    'paths assigned to secret-sounding names (found by bench:scan)',
    `const routes = { token: '/api/v1/auth/token', reset: { password: "/account/v2/password/reset" } };\nthis.secretary = "/api/v1/staff/42"; var w = { tokenizer: "/workers/tokenizer.v2.js" };\n`,
  ],
  [
    'a secret-sounding word inside a longer word (secretary, tokenizer, authKeyboard)',
    `var a={secretary:"Xk29dLq81mZp4",tokenizer:"Qw83nVb27xLk9",authKeyboard:"Rt56yUi90oPa3"};\n`,
  ],
  [
    'a quoted word in a ternary',
    `e.type = visible ? 'password' : 'field-input-v2'; var k = x ? s.authKeyboard : "/api/v2/render/635";\n`,
  ],
  // Placeholder connection strings (issue 21): documentation shows the shape, the reader fills it in.
  [
    'a MongoDB Atlas connection string with <username>:<password>',
    `const uri = "mongodb+srv://<username>:<password>@cluster0.a1b2c.mongodb.net/?retryWrites=true&w=majority";\n`,
  ],
  [
    'connection strings with HTML-escaped &lt;password&gt;',
    `<pre><code>mongodb+srv://&lt;username&gt;:&lt;password&gt;@cluster0.a1b2c.mongodb.net/myFirstDatabase\nmongodb+srv://&lt;db_user&gt;:&lt;db_password&gt;@cluster0.a1b2c.mongodb.net/\npostgres://app:&#60;password&#62;@db.example.net/app\nmysql://root:&amp;lt;password&amp;gt;@localhost/shop</code></pre>\n`,
  ],
  [
    'connection strings with URL-encoded and JSON-escaped <password>',
    `<a href="/connect?url=postgres://%3Cuser%3E:%3Cpassword%3E@db.example.net/app">connect</a>\n{"uri":"mongodb+srv://\\u003cusername\\u003e:\\u003cpassword\\u003e@cluster0.a1b2c.mongodb.net"}\n`,
  ],
  [
    'connection strings with USER:PASSWORD, {user}:{password} and [user]:[password]',
    `DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DATABASE\npostgres://USERNAME:PASSWORD@HOSTNAME:PORT/DBNAME\npostgres://DB_USER:DB_PASS@db:5432/app\nconst url = \`postgres://{user}:{password}@{host}/{db}\`;\nmysql://[user]:[password]@localhost/shop\nredis://default:PASSWORD@redis-12345.c1.eu-west-1.redislabs.com:12345\n`,
  ],
  [
    'connection strings with a default account (postgres:postgres, guest:guest, root:root)',
    `DATABASE_URL=postgres://postgres:postgres@localhost:5432/postgres\nAMQP_URL=amqp://guest:guest@localhost:5672\nmysql://root:root@127.0.0.1:3306/test\n`,
  ],
  // Client tokens their vendors publish in the browser (issue 21).
  [
    'a Datadog RUM and browser-logs config with pub… client tokens',
    `datadogRum.init({applicationId:"${uuid('dd-app')}",clientToken:"pub${chars('dd-rum', 32, HEX)}",site:"datadoghq.com",service:"storefront",sessionSampleRate:100});\nDD_LOGS.init({ clientToken: 'pub${chars('dd-logs', 32, HEX)}', site: 'datadoghq.eu', forwardErrorsToLogs: true });\nDD_CLIENT_TOKEN=pub${chars('dd-env', 32, HEX)}\n`,
  ],
  [
    'a PostHog project API key phc_…',
    `posthog.init('phc_${chars('phc', 43, B62)}', { api_host: 'https://eu.i.posthog.com' });\nPOSTHOG_API_KEY=phc_${chars('phc-2', 43, B62)}\nconst config = { posthogToken: "phc_${chars('phc-3', 43, B62)}" };\n`,
  ],
  [
    'browser analytics and feature-flag keys next to them (Mixpanel, Amplitude, Bugsnag, Rollbar, Segment, LaunchDarkly)',
    `mixpanel.init("${chars('mp', 32, HEX)}", { token: "${chars('mp', 32, HEX)}", track_pageview: true });\namplitude.init({ apiKey: '${chars('amp', 32, HEX)}', defaultTracking: true });\nBugsnag.start({ apiKey: '${chars('bugsnag', 32, HEX)}' });\nvar _rollbarConfig = { accessToken: "${chars('rollbar', 32, HEX)}", captureUncaught: true, captureUnhandledRejections: true };\nconst env = { MIXPANEL_TOKEN: "${chars('mp-env', 32, HEX)}", AMPLITUDE_API_KEY: "${chars('amp-env', 32, HEX)}" };\nanalytics.load("${chars('segment', 32, B62)}");\nconst ldClient = LDClient.initialize('${chars('ld', 24, HEX)}', { kind: 'user', key: 'anonymous' });\n`,
  ],
  // Language grammars (issue 21): Monarch (monaco-editor) and Ace name each rule's token class.
  [
    'a Monarch grammar whose rules name token classes (monaco-editor basic languages)',
    `[/%([qws])\\(/,{token:"string.$1.delim",switchTo:"@qstring.$1.(.)"}],[/./,{cases:{"$#==$S4":{token:"string.$S2.delim",next:"@pop"}}}],[/[a-zA-Z_]\\w*/,{cases:{"@tagwords":{token:"keyword.tag-$0"},"@keywords":{token:"keyword.$0"},"@reservedConstNames":{token:"constant.reserved.$0"}}}]\n`,
  ],
  [
    'Ace highlight rules whose tokens are scope names',
    `this.$rules={start:[{token:"support.class.actionscript.2",regex:"\\\\b(?:R(?:ecordset)|Void)\\\\b"},{token:"punctuation.definition.string.begin.actionscript.2",regex:'"',push:[{token:"punctuation.definition.string.end.actionscript.2",regex:'"',next:"pop"},{defaultToken:"string.quoted.double.actionscript.2"}]},{token:"support.function.chars-and-bytes-io.logtalk",regex:"\\\\bnl\\\\b"}]};\n`,
  ],
  [
    'messages ending in "token:" or "password:" in minified code',
    `console.warn("Invalid token:",e),t.retry(3,1e3),n.emit("auth");alert("Wrong password:"+n.attempts2+"/"+n.max3);\n`,
  ],
];

describe('scanText: public values and placeholders', () => {
  for (const [name, text] of NEGATIVES) {
    test(`scanText reports nothing for ${name}`, async () => {
      assert.deepEqual(brief(await scanText(text)), []);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------
// secretlint's recommended preset, run whole, against the same positives.

secretLintProfiler.mark = () => {};

const PRESET_CONFIG: SecretLintCoreConfig = {
  rules: presetRules
    .filter((rule) => rule.meta.id !== '@secretlint/secretlint-rule-filter-comments')
    .map((rule) => ({ id: rule.meta.id, rule })),
};

/** Lines the whole preset flags, each as the span of lines its message covers (AWS account ids dropped). */
async function presetFlags(text: string): Promise<{ rule: string; from: number; to: number }[]> {
  const result = await lintSource({
    source: { filePath: 'site-file', content: text, ext: '', contentType: 'text' },
    options: { config: PRESET_CONFIG, maskSecrets: true, noPhysicFilePath: true },
  });
  return result.messages
    .filter((m) => m.messageId !== 'AWSAccountID')
    .map((m) => ({ rule: `${m.ruleId}:${m.messageId}`, from: m.loc.start.line, to: m.loc.end.line }));
}

const PRESET_FIXTURES: [string, string][] = [
  ...POSITIVES.flatMap((p) =>
    ALL_EMBEDDINGS.map((where): [string, string] => [
      `${p.type} (${p.label}) in ${where}`,
      EMBEDDINGS[where]!(p.value, p.name),
    ]),
  ),
  ...[...CONTEXT_CASES, ...GENERIC_CASES].map((c): [string, string] => [c.name, c.text]),
];

describe('secretlint preset-recommend against our scan', () => {
  test('scanText reports a finding on every line the whole preset flags in the positive fixtures', async (t) => {
    const missed: string[] = [];
    let flagged = 0;
    for (const [name, text] of PRESET_FIXTURES) {
      const lines = (await scanText(text)).map((f) => f.line);
      for (const flag of await presetFlags(text)) {
        flagged++;
        if (!lines.some((line) => line >= flag.from && line <= flag.to)) {
          missed.push(`${flag.rule} flags lines ${flag.from}-${flag.to} of "${name}", scanText: [${lines}]`);
        }
      }
    }
    t.diagnostic(`the preset flagged ${flagged} findings in ${PRESET_FIXTURES.length} fixtures`);
    assert.deepEqual(missed, []);
    assert.ok(flagged > 50, `the preset flagged only ${flagged} findings: is it running?`);
  });

  test('anySecretlintTriggered is true exactly when some preset rule is triggered', () => {
    const texts = [
      'const a = 1; // no trigger here: glc, lin_api, hvs, vcp, dckr_pat',
      ...Object.values(SECRETLINT_TRIGGERS).flatMap((trigger) =>
        trigger instanceof RegExp
          ? ['fetch("https://deploy:hunter2@example.net/")']
          : trigger.map((l) => `x=${l}y`),
      ),
    ];
    for (const text of texts) {
      const some = Object.keys(SECRETLINT_TRIGGERS).some((rule) => secretlintTriggered(rule, text));
      assert.equal(anySecretlintTriggered(text), some, text);
    }
    assert.equal(anySecretlintTriggered(texts[0]!), false);
  });

  const misses: [string, string][] = [
    [
      'an EC P-256 private key (its body starts MH, not MI)',
      EMBEDDINGS['a JS string literal']!(KEYS.ec, 'k'),
    ],
    [
      'a PKCS#8 Ed25519 private key (its body is under 100 characters)',
      EMBEDDINGS['a .env line']!(KEYS.ed25519, 'k'),
    ],
    ['an encrypted PKCS#8 private key', EMBEDDINGS['a template literal']!(KEYS.encrypted, 'k')],
    ['a Stripe secret key (no Stripe rule)', EMBEDDINGS['a JS string literal']!(STRIPE_LIVE, 'stripeKey')],
    ['a Supabase service_role JWT', EMBEDDINGS['a JS string literal']!(supabaseKey('service_role'), 'k')],
    [
      'a Discord bot token',
      EMBEDDINGS['a .env line']!(POSITIVES.find((p) => p.type === 'discord_bot_token')!.value, 'k'),
    ],
  ];
  for (const [name, text] of misses) {
    test(`the preset alone misses ${name}, which scanText reports`, async () => {
      assert.deepEqual(await presetFlags(text), []);
      assert.equal((await scanText(text)).length, 1);
    });
  }
});
