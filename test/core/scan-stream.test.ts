// The scanner's streaming (src/core/scan/scanner.ts): files scanned in bounded windows whatever their size
// and chunking, each secret reported once at its line, and which files are scanned at all.

import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Finding, isScannable, ScanSession, scanStream, scanText } from '../../src/core/scan/scanner.js';

/** scanner.ts scans windows of this many characters, each overlapping the previous one by OVERLAP_CHARS. */
const WINDOW_CHARS = 1 << 20;
const OVERLAP_CHARS = 1 << 15;

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';

/** `length` characters of `alphabet`, the same for the same label. */
function chars(label: string, length: number, alphabet = B62): string {
  let out = '';
  for (let block = 0; out.length < length; block++) {
    for (const byte of createHash('sha256').update(`${label}#${block}`).digest()) {
      if (byte < 256 - (256 % alphabet.length)) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

const githubToken = (label: string) => `ghp_${chars(label, 36)}`;
const stripeKey = (label: string) => `sk_live_51${chars(label, 97)}`;

/** Stylesheet lines that hold no secret, `length` characters in all, ending in a line break. */
function filler(length: number): string {
  let out = '';
  for (let i = 0; out.length < length; i++) out += `.c${i}{margin:0 auto;padding:4px 8px;color:#333}\n`;
  return `${out.slice(0, length - 1)}\n`;
}

/** 1-based line of the character at `offset`. */
const lineAt = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

const brief = (findings: Finding[]) => findings.map((f) => ({ type: f.type, line: f.line }));

/** Feeds `text` to a ScanSession in chunks of `size` bytes (splitting multi-byte characters). */
async function scanInChunks(text: string, size: number): Promise<Finding[]> {
  const bytes = Buffer.from(text);
  const session = new ScanSession();
  for (let at = 0; at < bytes.length; at += size) await session.push(bytes.subarray(at, at + size));
  return session.finish();
}

/** `text` with `secret` written over it at `offset` (the filler around it keeps its line breaks). */
function place(text: string, offset: number, secret: string): string {
  return text.slice(0, offset) + secret + text.slice(offset + secret.length);
}

// First, while the heap is still small: later tests grow it, which would hide the growth measured here.
describe('scanStream: memory', () => {
  test('scanStream scans a 200 MB stream with RSS growth under 64 MB and finds the secret near its end', async (t) => {
    setFlagsFromString('--expose-gc');
    const gc = (globalThis.gc ?? runInNewContext('gc')) as () => void;
    const chunk = Buffer.from(filler(64 * 1024));
    const linesPerChunk = chunk.toString().split('\n').length - 1;
    const chunks = Math.ceil(200e6 / chunk.length);
    const secretChunk = chunks - 3;
    const token = stripeKey('memory');
    let peak = 0;
    async function* body() {
      for (let i = 0; i < chunks; i++) {
        if (i !== secretChunk) yield chunk;
        else yield Buffer.from(place(chunk.toString(), 5000, `\n${token}\n`));
        if (i % 64 === 0) peak = Math.max(peak, process.memoryUsage().rss);
      }
    }
    gc();
    const before = process.memoryUsage().rss;
    peak = before;
    const found = await scanStream(body());
    gc();
    peak = Math.max(peak, process.memoryUsage().rss);
    const line = secretChunk * linesPerChunk + lineAt(chunk.toString(), 5000) + 1;
    assert.deepEqual(brief(found), [{ type: 'stripe_secret_key', line }]);
    const growthMB = (peak - before) / 2 ** 20;
    t.diagnostic(`RSS grew by ${growthMB.toFixed(1)} MB at most`);
    assert.ok(growthMB < 64, `RSS grew by ${growthMB.toFixed(1)} MB`);
  });
});

describe('ScanSession: window boundaries', () => {
  test('ScanSession reports a secret that straddles the 1 MiB window boundary once, at its line', async () => {
    const token = githubToken('straddle');
    const at = WINDOW_CHARS - token.length / 2;
    const text = place(filler(WINDOW_CHARS + 4096), at, `\n${token}\n`);
    assert.deepEqual(brief(await scanText(text)), [{ type: 'github_token', line: lineAt(text, at + 1) }]);
  });

  test('ScanSession reports a secret in the overlap of two windows once', async () => {
    for (const at of [
      WINDOW_CHARS - OVERLAP_CHARS - 60,
      WINDOW_CHARS - OVERLAP_CHARS / 2,
      WINDOW_CHARS - 100,
    ]) {
      const token = stripeKey(`overlap-${at}`);
      const text = place(filler(WINDOW_CHARS + 8192), at, `\n${token}\n`);
      assert.deepEqual(
        brief(await scanText(text)),
        [{ type: 'stripe_secret_key', line: lineAt(text, at + 1) }],
        `secret at ${at}`,
      );
    }
  });

  test('ScanSession reports secrets on both sides of every window boundary of a 3.5 MiB file once each', async () => {
    let text = filler(3.5 * WINDOW_CHARS);
    // Window k (from 1) ends near k * (WINDOW_CHARS - OVERLAP_CHARS) + OVERLAP_CHARS.
    const offsets: number[] = [];
    for (let k = 1; k <= 3; k++) {
      const end = k * (WINDOW_CHARS - OVERLAP_CHARS) + OVERLAP_CHARS;
      for (const delta of [-OVERLAP_CHARS - 200, -OVERLAP_CHARS + 200, -300, -25, 25, 300])
        offsets.push(end + delta);
    }
    for (const [i, at] of offsets.entries()) text = place(text, at, `\n${githubToken(`every-${i}`)}\n`);
    const expected = offsets.map((at) => ({ type: 'github_token', line: lineAt(text, at + 1) }));
    assert.deepEqual(brief(await scanText(text)), expected);
  });

  test('ScanSession finds a PEM key that opens at the end of a 32 KiB minified line and crosses the window boundary', async () => {
    const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ format: 'pem', type: 'pkcs1' })
      .toString();
    const minified = `!function(){${'var a=1,b=2;'.repeat(3000)}var pem=\``;
    const keyAt = WINDOW_CHARS - 600; // the window ends inside the key's body
    const head = filler(keyAt - minified.length);
    const text = `${head}${minified}${key}\`}();\n${filler(8192)}`;
    assert.deepEqual(brief(await scanText(text)), [{ type: 'private_key', line: lineAt(text, head.length) }]);
  });

  test('ScanSession reports a service-account key whose "type" line precedes the window cut once, as google_service_account_key', async () => {
    const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const account = JSON.stringify(
      {
        type: 'service_account',
        project_id: 'storefront-4821',
        private_key_id: chars('sa-id', 40, HEX),
        private_key: key,
        client_email: 'deployer@storefront-4821.iam.gserviceaccount.com',
      },
      null,
      2,
    );
    // Slide the JSON over the cut (the first line start at or after WINDOW_CHARS - OVERLAP_CHARS, or the
    // last one before it): every placement must give one finding.
    for (const shift of [-120, -60, -30, -10, 0, 10, 30]) {
      const at = WINDOW_CHARS - OVERLAP_CHARS + shift;
      const head = filler(at);
      const text = `${head}${account}\n${filler(OVERLAP_CHARS + 8192)}`;
      assert.deepEqual(
        brief(await scanText(text)),
        [{ type: 'google_service_account_key', line: lineAt(text, text.indexOf('"private_key":')) }],
        `JSON at ${at}`,
      );
    }
  });

  test('ScanSession reports a Twilio auth token whose accountSid precedes the window cut once, as twilio_auth_token', async () => {
    const config = `const twilio = {\n  accountSid: "AC${chars('sid', 32, HEX)}",\n  authToken: "${chars('auth', 32, HEX)}",\n};\n`;
    for (const shift of [-60, -40, -20, 0, 20]) {
      const at = WINDOW_CHARS - OVERLAP_CHARS + shift;
      const text = `${filler(at)}${config}${filler(OVERLAP_CHARS + 8192)}`;
      assert.deepEqual(
        brief(await scanText(text)),
        [{ type: 'twilio_auth_token', line: lineAt(text, text.indexOf('authToken')) }],
        `config at ${at}`,
      );
    }
  });
});

describe('ScanSession: chunking', () => {
  // Multi-byte characters (2, 3 and 4 bytes in UTF-8) before each secret, so a chunk boundary falls inside
  // them and the decoder must carry their bytes over for the line numbers to stay right.
  const prose = 'Crème brûlée, 東京, 😀 — ';
  let text = filler(2.3 * WINDOW_CHARS).replace(/color:#333}\n/g, (m, at: number) =>
    at % 97 === 0 ? `${m}/* ${prose} */\n` : m,
  );
  const offsets = [
    10_000,
    WINDOW_CHARS - OVERLAP_CHARS + 10,
    WINDOW_CHARS - 21,
    2 * WINDOW_CHARS - OVERLAP_CHARS - 13,
  ];
  for (const [i, at] of offsets.entries()) text = place(text, at, `\n${prose}${githubToken(`chunk-${i}`)}\n`);
  const expected = offsets.map((at) => ({ type: 'github_token', line: lineAt(text, at + 1) }));

  test('scanText reports each secret of a 2.3 MiB text with multi-byte characters at its line', async () => {
    assert.deepEqual(brief(await scanText(text)), expected);
  });
  for (const size of [1, 7, 64 * 1024]) {
    test(`ScanSession fed ${size}-byte chunks reports the same findings as the whole text`, async () => {
      assert.deepEqual(brief(await scanInChunks(text, size)), expected);
    });
  }
  test('scanStream accepts string chunks as well as bytes', async () => {
    const strings = Array.from({ length: Math.ceil(text.length / 65536) }, (_, i) =>
      text.slice(i * 65536, (i + 1) * 65536),
    );
    async function* chunks() {
      yield* strings;
    }
    assert.deepEqual(brief(await scanStream(chunks())), expected);
  });
});

describe('ScanSession: inline source maps', () => {
  /** A bundle whose source map is inlined as base64 (its sources hold `secrets` at the given offsets). */
  function bundleWithInlineMap(sourceChars: number, secrets: [offset: number, secret: string][]) {
    let source = filler(sourceChars);
    for (const [offset, secret] of secrets) source = place(source, offset, `\nconst t = "${secret}";\n`);
    const map = JSON.stringify({
      version: 3,
      sources: ['src/app.ts'],
      sourcesContent: [source],
      mappings: 'AAAA',
    });
    const head = `${filler(50_000)}console.log("app");\n`;
    return {
      text: `${head}//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(map).toString('base64')}\n`,
      line: lineAt(head, head.length),
    };
  }

  test('a secret in an inline base64 source map is reported once, at the line of its comment', async () => {
    const { text, line } = bundleWithInlineMap(100_000, [[60_000, githubToken('inline-small')]]);
    assert.deepEqual(brief(await scanText(text)), [{ type: 'github_token', line }]);
  });

  test('an inline map whose base64 runs over several windows is decoded whole, in any chunking', async () => {
    // About 4 MiB of base64 from the comment on: the secrets sit at its start, across the first window's
    // end and near its end.
    const { text, line } = bundleWithInlineMap(3_000_000, [
      [1_000, githubToken('inline-start')],
      [(WINDOW_CHARS * 3) / 4 - 200, stripeKey('inline-boundary')],
      [2_990_000, githubToken('inline-end')],
    ]);
    assert.ok(text.length > 3 * WINDOW_CHARS);
    const expected = [
      { type: 'github_token', line },
      { type: 'github_token', line },
      { type: 'stripe_secret_key', line },
    ];
    for (const size of [64 * 1024, 100_003]) {
      assert.deepEqual(brief(await scanInChunks(text, size)), expected, `chunks of ${size} bytes`);
    }
  });
});

describe('isScannable(path, contentType)', () => {
  const cases: [string, string, boolean][] = [
    ['index.html', 'text/html', true],
    ['assets/app.js', 'text/javascript', true],
    ['assets/app.mjs', 'text/javascript', true],
    ['server/bundle.cjs', 'application/node', true],
    ['assets/site.css', 'text/css', true],
    ['data/config.json', 'application/json', true],
    ['assets/app.js.map', 'application/json', true],
    ['robots.txt', 'text/plain', true],
    ['sitemap.xml', 'application/xml', true],
    ['logo.svg', 'image/svg+xml', true],
    ['site.webmanifest', 'application/manifest+json', true],
    ['README.md', 'text/markdown', true],
    ['exports/orders.csv', 'text/csv', true],
    ['config.yaml', 'application/yaml', true],
    ['.env', 'application/octet-stream', true],
    ['config/.env', '', true],
    ['ASSETS/APP.JS', 'application/octet-stream', true],
    ['download', 'text/plain; charset=utf-8', true],
    ['api/data', 'application/json', true],
    ['logo.png', 'image/png', false],
    ['fonts/inter.woff2', 'font/woff2', false],
    ['archive.bin', 'application/octet-stream', false],
    ['photo.jpg', 'image/jpeg', false],
  ];
  for (const [path, contentType, expected] of cases) {
    test(`isScannable('${path}', '${contentType}') is ${expected}`, () => {
      assert.equal(isScannable(path, contentType), expected);
    });
  }
});
