// `npm run bench:scan`: secret-scan throughput against DESIGN.md "Performance targets" (>= 50 MB/s of text),
// in interleaved rounds (medians, min-max), MB = 2^20 bytes:
// (1) a 50 MB "text site": ~1000 generated files (.html, .js readable and minified, .css, .json, .map,
//     .svg, .md; seeded, so every run scans the same bytes; no secrets), each through scanStream() in
//     64 KiB chunks, one after the other, as finalize would scan them; also MB/s per kind of file;
// (2) the real-bundle set (bench/lib/real-bundles.ts: library builds, editors and renderers installed as
//     dev dependencies, as sites publish them): MB/s per library and in total, and the number of
//     findings, which must be 0 (each one is a false positive: printed with its type and line; the same
//     set is a test, test/core/scan-real-bundles.test.ts);
// (3) one 200 MB generated text file through one ScanSession in 64 KiB chunks, in a fresh child process
//     per round: MB/s and the process's RSS growth (target < 64 MB: the scan holds one 1 MiB window).
// MB/s is wall time; next to it, MB per CPU-second (the scanner's own speed, less the waits for a core on a
// shared machine). Options: `-- --rounds N` (default 5).
// Prints a table, writes bench/out/scan.json. Also exports the text generator bench/publish.ts uses.

import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Finding } from '../src/core/scan/scanner.js';
import { resolveRealBundles } from './lib/real-bundles.js';
import { REPO_ROOT } from './lib/service.js';
import { type Stats, stats } from './lib/stats.js';

const ROUNDS = 5;
const MB = 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const SITE_FILES = 1000;
const SITE_BYTES = 50 * MB;
const SITE_SEED = 0x5ca1ab1e;
const BIG_BYTES = 200 * MB;
/** The 200 MB file is this much generated text streamed over and over (the bench's own memory is fixed). */
const BIG_POOL_BYTES = 16 * MB + 12_345;
const BIG_SEED = 0xb16f11e;
/** Each library is scanned until this many bytes went through, so small files are timed over > 1 ms. */
const LIBRARY_MIN_BYTES = 2 * MB;

const TARGETS = {
  scanMBps: 50,
  rssGrowthMB: 64,
};

// ---------------------------------------------------------------------------------------------------------
// Deterministic generated text: what a static site's build output looks like, without a single secret.

/** mulberry32: a small seeded generator; the same seed gives the same text on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type TextKind = 'html' | 'js' | 'min.js' | 'css' | 'json' | 'map' | 'svg' | 'md';

export const TEXT_CONTENT_TYPES: Record<TextKind, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  'min.js': 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json',
  map: 'application/json',
  svg: 'image/svg+xml',
  md: 'text/markdown; charset=utf-8',
};

/** How often each kind occurs in a generated site (a build's output: scripts, pages, styles, maps, data). */
const KIND_WEIGHTS: ReadonlyArray<readonly [TextKind, number]> = [
  ['html', 18],
  ['js', 16],
  ['min.js', 14],
  ['css', 12],
  ['json', 12],
  ['map', 10],
  ['svg', 10],
  ['md', 8],
];

export function pickTextKind(random: () => number): TextKind {
  const total = KIND_WEIGHTS.reduce((a, [, w]) => a + w, 0);
  let x = random() * total;
  for (const [kind, w] of KIND_WEIGHTS) {
    x -= w;
    if (x < 0) return kind;
  }
  return 'html';
}

const split = (s: string) => s.split(/\s+/).filter(Boolean);
const NOUNS =
  split(`user item list data value index count node element config options state props event handler
  request response cache token password key session auth query result error callback buffer stream offset width
  height color style theme route path label title content message status timer frame layer scale matrix vector
  point range filter field form input button modal menu panel grid row column cell page view model store action
  context provider ref id name type mode level depth size limit locale currency price cart order product account
  profile avatar chart axis tick series legend tooltip canvas texture shader mesh camera scene light tokenizer
  keyframe hotkey keyboard secretary password-strength`).map((w) =>
    w.replace(/-(.)/g, (_, c) => c.toUpperCase()),
  );
const VERBS =
  split(`get set is has handle on create update render parse format load save fetch build apply reset
  init compute resolve validate normalize merge toggle select read write emit subscribe dispatch`);
const PROSE =
  split(`the of and to in is you that it for are as with on be this by from or an your can all will one
  not more have use which their when what about if page time new they our there site how up out these may so some
  would other into like build deploy static files project release version guide install configure server browser
  request cache image layout theme plugin component feature support change update simple fast small module data
  example documentation reference chapter section note warning tip using default option value setting password
  account sign token key secure team pricing blog article author read more café naïve résumé`);
const DOMAINS = split('example.com example.org cdn.example.net images.example.com docs.example.io');
const CSS_PROPS =
  split(`display position top left right bottom margin padding border border-radius color background
  background-color font-size font-weight line-height width height max-width min-height opacity transform
  transition z-index box-shadow flex gap grid-template-columns align-items justify-content overflow cursor`);
const SECRET_SOUNDING =
  /secret|passw|pwd|token|credential|(?:api|access|auth|private|signing|encryption)[_-]?key/i;
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

class Gen {
  constructor(readonly random: () => number) {}
  int(n: number): number {
    return Math.floor(this.random() * n);
  }
  chance(p: number): boolean {
    return this.random() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  cap(w: string): string {
    return w.charAt(0).toUpperCase() + w.slice(1);
  }
  hex(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[this.int(16)];
    return s;
  }
  b64(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += B64[this.int(64)];
    return s;
  }
  plural(w: string): string {
    return this.chance(0.2) && !w.endsWith('s') ? `${w}s` : w;
  }
  ident(): string {
    const r = this.random();
    if (r < 0.4) return this.plural(this.pick(NOUNS));
    if (r < 0.75)
      return (
        this.pick(VERBS) + this.cap(this.pick(NOUNS)) + (this.chance(0.3) ? this.cap(this.pick(NOUNS)) : '')
      );
    return this.pick(NOUNS) + this.cap(this.pick(NOUNS));
  }
  kebab(): string {
    return this.ident()
      .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
      .toLowerCase();
  }
  num(): string {
    const r = this.random();
    if (r < 0.5) return String(this.int(100));
    if (r < 0.7) return String(this.int(100000));
    if (r < 0.85) return (this.random() * 10).toFixed(this.int(4) + 1);
    if (r < 0.95) return `0x${this.hex(2 + this.int(6))}`;
    return `${1 + this.int(9)}e${this.int(8)}`;
  }
  words(n: number): string {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.pick(PROSE));
    return out.join(' ');
  }
  sentence(min = 4, max = 14): string {
    return this.cap(this.words(min + this.int(max - min))) + this.pick(['.', '.', '.', '?', '!', ':']);
  }
  /**
   * A message as code quotes it: never ending in `:`. (`"Invalid token:",e` in minified code is a
   * generic_secret to the scanner: reported; not what this bench measures.)
   */
  message(min: number, max: number): string {
    return this.sentence(min, max).replace(/:$/, '.');
  }
  url(): string {
    const r = this.random();
    if (r < 0.4) return `/api/v${1 + this.int(3)}/${this.kebab()}s/${this.int(1000)}`;
    if (r < 0.7)
      return `https://${this.pick(DOMAINS)}/assets/${this.kebab()}.${this.hex(8)}.${this.pick(['js', 'css', 'png', 'webp', 'woff2'])}`;
    return `/${this.kebab()}/${this.kebab()}`;
  }
  /** A string literal's content, as code carries them: messages, class lists, URLs, event names, formats. */
  str(): string {
    const r = this.random();
    if (r < 0.25) return this.message(2, 9).replace(/["'\\]/g, '');
    if (r < 0.4)
      return `${this.kebab()} ${this.kebab()}${this.chance(0.5) ? ` is-${this.pick(['active', 'open', 'hidden'])}` : ''}`;
    if (r < 0.55) return this.url();
    if (r < 0.65)
      return this.pick(['click', 'keydown', 'input', 'change', 'submit', 'resize', 'scroll', 'load']);
    if (r < 0.72) return `#${this.hex(6)}`;
    if (r < 0.8)
      return this.pick(['YYYY-MM-DD', 'en-US', 'utf-8', 'application/json', 'GET', 'POST', 'Bearer ']);
    if (r < 0.9) return this.kebab();
    return this.pick([
      'token_expired',
      'invalid_password',
      'refresh_token',
      'access_token',
      'password',
      'api-key',
    ]);
  }
}

/** JavaScript, readable or minified: functions, objects, string literals, numbers, code that handles tokens, passwords and keys. */
class JsGen {
  private readonly min: boolean;
  private readonly nl: string;
  private readonly sp: string;
  private readonly locals = split('e t n r i o s a u c l f d p h m g v y b w x k');

  constructor(
    private readonly g: Gen,
    minified: boolean,
  ) {
    this.min = minified;
    this.nl = minified ? '' : '\n';
    this.sp = minified ? '' : ' ';
  }

  private v(): string {
    return this.min
      ? this.g.pick(this.locals) + (this.g.chance(0.2) ? this.g.pick(this.locals) : '')
      : this.g.ident();
  }

  private q(s: string): string {
    const quote = this.min ? '"' : this.g.pick(["'", "'", '"']);
    return quote + s.replaceAll(quote, '') + quote;
  }

  expr(depth = 0): string {
    const g = this.g;
    const s = this.sp;
    const r = g.random();
    if (depth > 2 || r < 0.18) return g.num();
    if (r < 0.34) return this.q(g.str());
    if (r < 0.46) return `${this.v()}.${g.ident()}`;
    if (r < 0.56) return `${this.v()}.${g.ident()}(${this.args(depth)})`;
    if (r < 0.64)
      return `${this.v()}${s}${g.pick(['+', '-', '*', '/', '===', '!==', '&&', '||', '??', '<', '>='])}${s}${this.expr(depth + 1)}`;
    if (r < 0.7) return `[${this.args(depth)}]`;
    if (r < 0.8) return this.object(depth + 1);
    if (r < 0.86) return `(${this.v()})${s}=>${s}${this.v()}.${g.ident()}`;
    if (r < 0.9) return `new ${g.cap(g.ident())}(${this.args(depth)})`;
    if (r < 0.95) return `\`${g.kebab()}-\${${this.v()}}/\${${this.v()}.${g.ident()}}\``;
    const then = this.expr(depth + 1);
    return `${this.v()}${s}?${s}${then}${s}:${s}${this.valueFor(then, depth + 1)}`;
  }

  /**
   * A value for a property or variable (or a ternary's else-branch): never a string literal when the name
   * (the then-branch) sounds secret (`token`, `passwordStrength`, `tokenizer`, `x.authKeyboard`), whose
   * literal the scanner judges by its looks: `token: '/api/v1/auth/token'` and
   * `x ? e.authKeyboard : '/api/v2/items/6'` are generic_secret findings to it (reported; not what this
   * bench measures).
   */
  private valueFor(name: string, depth: number): string {
    let value = this.expr(depth);
    while (SECRET_SOUNDING.test(name) && /^["'`]/.test(value)) value = this.expr(depth);
    return value;
  }

  private args(depth: number): string {
    const n = this.g.int(4);
    return Array.from({ length: n }, () => this.expr(depth + 1)).join(`,${this.sp}`);
  }

  private object(depth: number): string {
    const g = this.g;
    const n = 1 + g.int(4);
    const props = Array.from({ length: n }, () => {
      const key = g.chance(0.15) ? this.q(g.kebab()) : g.ident();
      return `${key}:${this.sp}${this.valueFor(key, depth)}`;
    });
    return this.min ? `{${props.join(',')}}` : `{ ${props.join(', ')} }`;
  }

  /** Code that uses tokens, passwords and keys the way applications do: names and messages, never values. */
  private authStatement(ind: string): string {
    const g = this.g;
    const s = this.sp;
    const v = this.v();
    const t = this.min ? this.v() : 'token';
    const lines = [
      `const ${t}${s}=${s}await ${g.pick(VERBS)}Token(${v});`,
      `${v}.headers.Authorization${s}=${s}\`Bearer \${${t}}\`;`,
      `if${s}(!${this.min ? v : 'password'}${s}||${s}${this.min ? v : 'password'}.length${s}<${s}${6 + g.int(10)})${s}return ${this.q('Password must be at least 8 characters')};`,
      `const ${this.min ? v : 'cacheKey'}${s}=${s}\`${g.kebab()}:\${${this.v()}}:\${${this.v()}.${g.ident()}}\`;`,
      `localStorage.setItem(${this.q(g.pick(['auth_token', 'session', 'theme', 'locale', 'refresh_token']))},${s}JSON.stringify(${v}));`,
      `${v}.set(${this.min ? this.v() : 'key'},${s}${this.min ? this.v() : 'value'});`,
      `Object.keys(${v}).forEach((key)${s}=>${s}{${s}${this.v()}[key]${s}=${s}${this.v()}[key];${s}});`,
      `fetch(${this.q(g.url())},${s}{${s}method:${s}${this.q('POST')},${s}credentials:${s}${this.q('include')},${s}headers:${s}{${s}${this.q('Content-Type')}:${s}${this.q('application/json')},${s}${this.q('X-CSRF-Token')}:${s}${this.min ? this.v() : 'csrfToken'}${s}},${s}body:${s}JSON.stringify(${v})${s}});`,
      `${this.min ? v : 'passwordInput'}.setAttribute(${this.q('type')},${s}${this.v()}${s}?${s}${this.q('text')}${s}:${s}${this.q('password')});`,
      `const ${this.min ? v : 'tokenizer'}${s}=${s}new Tokenizer(${this.v()},${s}{${s}keepComments:${s}${this.min ? '!1' : 'false'}${s}});`,
      `if${s}(${v}.status${s}===${s}401)${s}throw new Error(${this.q('Invalid username or password')});`,
      `const ${this.min ? v : 'isTokenExpired'}${s}=${s}${t}.expiresAt${s}<${s}Date.now()${s}-${s}${g.int(60000)};`,
      `${v}.addEventListener(${this.q('keydown')},${s}(e)${s}=>${s}{${s}if${s}(e.key${s}===${s}${this.q(g.pick(['Enter', 'Escape', 'ArrowDown', 'Tab']))})${s}${this.v()}();${s}});`,
      `const ${this.min ? v : 'KEY_CODES'}${s}=${s}{${s}ENTER:${s}13,${s}ESCAPE:${s}27,${s}SPACE:${s}32${s}};`,
    ];
    return ind + g.pick(lines);
  }

  statement(depth: number, ind: string): string {
    const g = this.g;
    const s = this.sp;
    const inner = this.min ? '' : `${ind}  `;
    const r = g.random();
    if (r < 0.15) {
      const name = this.v();
      return `${ind}${this.min ? 'var' : g.pick(['const', 'let'])} ${name}${s}=${s}${this.valueFor(name, 0)};`;
    }
    if (r < 0.27) {
      const name = g.ident();
      return `${ind}${this.v()}.${name}${s}=${s}${this.valueFor(name, 0)};`;
    }
    if (r < 0.39) return `${ind}${this.v()}.${g.ident()}(${this.args(0)});`;
    if (r < 0.5 && depth < 2) {
      return `${ind}if${s}(${this.expr(1)})${s}{${this.nl}${this.block(depth + 1, inner)}${this.nl}${ind}}`;
    }
    if (r < 0.57 && depth < 2) {
      const i = this.min ? this.v() : 'i';
      return `${ind}for${s}(${this.min ? 'var' : 'let'} ${i}${s}=${s}0;${s}${i}${s}<${s}${this.v()}.length;${s}${i}++)${s}{${this.nl}${this.block(depth + 1, inner)}${this.nl}${ind}}`;
    }
    if (r < 0.63)
      return `${ind}throw new ${g.pick(['Error', 'TypeError', 'RangeError'])}(${this.q(g.message(3, 8))});`;
    if (r < 0.7)
      return `${ind}${this.min ? 'var' : 'const'} {${s}${this.v()},${s}${this.v()}${s}}${s}=${s}${this.v()};`;
    if (r < 0.85) return this.authStatement(ind);
    return `${ind}${this.v()}${s}=${s}${this.object(1)};`;
  }

  private block(depth: number, ind: string): string {
    const n = 1 + this.g.int(depth === 0 ? 8 : 4);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.statement(depth, ind));
    return out.join(this.nl);
  }

  /** One top-level unit: a documented function, a class with methods, or an exported table. */
  unit(): string {
    const g = this.g;
    const s = this.sp;
    const name = g.ident();
    const params = Array.from({ length: g.int(4) }, () => this.v()).join(`,${s}`);
    const r = g.random();
    if (this.min) {
      if (r < 0.6) return `function ${this.v()}(${params}){${this.block(0, '')};return ${this.expr()}}`;
      return `${this.v()}.prototype.${name}=function(${params}){${this.block(0, '')}};`;
    }
    const doc = g.chance(0.6)
      ? `/**\n * ${g.sentence()}\n${params
          .split(', ')
          .filter(Boolean)
          .map((p) => ` * @param {${g.pick(['string', 'number', 'Object', 'boolean'])}} ${p} ${g.words(4)}\n`)
          .join('')} */\n`
      : g.chance(0.3)
        ? `// ${g.sentence()}\n`
        : '';
    if (r < 0.65) {
      return `${doc}export ${g.chance(0.3) ? 'async ' : ''}function ${name}(${params}) {\n${this.block(0, '  ')}\n  return ${this.expr()};\n}\n\n`;
    }
    if (r < 0.85) {
      const methods = Array.from(
        { length: 1 + g.int(3) },
        () => `  ${g.ident()}(${this.v()}) {\n${this.block(1, '    ')}\n  }\n`,
      ).join('\n');
      const field = g.ident();
      return `${doc}export class ${g.cap(name)} {\n  constructor(options = {}) {\n    this.options = options;\n    this.${field} = ${this.valueFor(field, 0)};\n  }\n\n${methods}}\n\n`;
    }
    const rows = Array.from({ length: 3 + g.int(12) }, () => {
      const key = g.ident();
      return `  ${key}: ${this.valueFor(key, 0)},`;
    }).join('\n');
    return `${doc}export const ${name.toUpperCase()} = {\n${rows}\n};\n\n`;
  }
}

/** `head`, then `unit()`s while they fit, whitespace padding, then `tail`: exactly `size` bytes. */
function assemble(size: number, head: string, tail: string, unit: () => string): Buffer {
  const parts = [head];
  let bytes = Buffer.byteLength(head) + Buffer.byteLength(tail);
  for (let u = unit(), n = Buffer.byteLength(u); bytes + n <= size; u = unit(), n = Buffer.byteLength(u)) {
    parts.push(u);
    bytes += n;
  }
  if (bytes < size) {
    const gap = size - bytes;
    parts.push(gap > 1 ? `${' '.repeat(gap - 1)}\n` : '\n');
  }
  parts.push(tail);
  const buf = Buffer.from(parts.join(''));
  return buf.length > size ? buf.subarray(0, size) : buf;
}

function vlq(n: number): string {
  let v = n < 0 ? (-n << 1) | 1 : n << 1;
  let s = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v) digit |= 32;
    s += B64[digit];
  } while (v);
  return s;
}

function htmlFile(g: Gen, size: number): Buffer {
  const js = new JsGen(g, g.chance(0.5));
  const title = g.cap(g.words(3));
  const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${g.b64(40)}">
<title>${title}</title>
<link rel="stylesheet" href="/assets/app.${g.hex(8)}.css" integrity="sha384-${g.b64(64)}" crossorigin="anonymous">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebPage","name":"${title}","datePublished":"2024-0${1 + g.int(9)}-1${g.int(10)}"}</script>
</head>
<body class="${g.kebab()}">
<nav class="navbar"><a href="/" class="brand">${g.cap(g.pick(NOUNS))}</a><ul>${Array.from({ length: 5 }, () => `<li><a href="/${g.kebab()}/">${g.cap(g.words(2))}</a></li>`).join('')}</ul></nav>
<main>
`;
  const tail = `</main>
<footer><p>&copy; 2024 ${g.cap(g.pick(NOUNS))} &mdash; ${g.words(6)}</p></footer>
<script src="/assets/app.${g.hex(8)}.js" defer></script>
</body>
</html>
`;
  return assemble(size, head, tail, () => {
    const r = g.random();
    if (r < 0.45) {
      const paras = Array.from(
        { length: 1 + g.int(4) },
        () => `<p>${g.sentence(12, 60)} <a href="${g.url()}">${g.words(3)}</a> ${g.sentence(8, 30)}</p>`,
      );
      return `<section id="${g.kebab()}" class="${g.kebab()}">\n<h2>${g.cap(g.words(4))}</h2>\n${paras.join('\n')}\n</section>\n`;
    }
    if (r < 0.6) {
      const items = Array.from(
        { length: 3 + g.int(8) },
        () =>
          `<li class="${g.kebab()}"><img src="/img/${g.kebab()}.webp" srcset="/img/${g.kebab()}@2x.webp 2x" alt="${g.words(4)}" loading="lazy" width="640" height="480"><span>${g.sentence(3, 10)}</span></li>`,
      );
      return `<ul class="cards" data-${g.kebab()}="${g.int(100)}">\n${items.join('\n')}\n</ul>\n`;
    }
    if (r < 0.72) {
      return `<form action="/login" method="post" class="auth-form">
<input type="hidden" name="csrf_token" value="${g.hex(32)}">
<label for="email">Email</label><input type="email" id="email" name="email" autocomplete="username" required>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" minlength="8" required>
<button type="button" class="toggle-password" aria-label="Show password">Show</button>
<a href="/forgot-password">Forgot your password?</a> <button type="submit">Sign in</button>
</form>
`;
    }
    const units = Array.from({ length: 1 + g.int(3) }, () => js.unit()).join('\n');
    return `<script>\n${units}\n</script>\n`;
  });
}

function jsFile(g: Gen, size: number, minified: boolean): Buffer {
  const js = new JsGen(g, minified);
  const lib = g.kebab();
  if (!minified) {
    return assemble(
      size,
      `// ${lib}.js: ${g.sentence()}\n\n'use strict';\n\n`,
      `export default ${g.ident()};\n`,
      () => js.unit(),
    );
  }
  // A minified bundle: a licence line, then one long line (a line break every few hundred KB at most).
  let sinceBreak = 0;
  let lineBytes = 16 * 1024 + g.int(600 * 1024);
  return assemble(
    size,
    `/*! ${lib} v${1 + g.int(5)}.${g.int(20)}.${g.int(10)} | MIT License | ${g.pick(DOMAINS)} */\n!function(e,t){"use strict";`,
    `}(window,document);\n//# sourceMappingURL=${lib}.min.js.map\n`,
    () => {
      let u = js.unit();
      sinceBreak += u.length;
      if (sinceBreak > lineBytes) {
        u += '\n';
        sinceBreak = 0;
        lineBytes = 16 * 1024 + g.int(600 * 1024);
      }
      return u;
    },
  );
}

function cssFile(g: Gen, size: number): Buffer {
  const minified = g.chance(0.3);
  const nl = minified ? '' : '\n';
  const ind = minified ? '' : '  ';
  const value = (prop: string) => {
    if (prop.includes('color')) return g.chance(0.5) ? `#${g.hex(6)}` : `var(--${g.kebab()}-color)`;
    if (prop === 'transition') return `${g.pick(CSS_PROPS)} .${g.int(9)}s ease-in-out`;
    if (prop === 'box-shadow') return `0 ${g.int(8)}px ${g.int(24)}px rgba(0,0,0,.${g.int(9)})`;
    if (prop === 'display') return g.pick(['flex', 'grid', 'block', 'none', 'inline-flex']);
    return `${g.int(64)}${g.pick(['px', 'rem', 'em', '%', 'vh'])}`;
  };
  const rule = (sel: string) =>
    `${sel}${minified ? '{' : ' {\n'}${Array.from({ length: 2 + g.int(8) }, () => {
      const p = g.pick(CSS_PROPS);
      return `${ind}${p}:${minified ? '' : ' '}${value(p)}`;
    }).join(`;${nl}`)}${minified ? '}' : ';\n}\n'}`;
  return assemble(size, `/* ${g.kebab()}.css: ${g.sentence()} */${nl}`, nl, () => {
    const r = g.random();
    const sel = `.${g.kebab()}${g.pick(['', ':hover', ' > a', '.is-active', '::before', ' .btn-primary'])}`;
    if (r < 0.7) return rule(sel);
    if (r < 0.8) return `@media (min-width: ${g.pick([576, 768, 992, 1200])}px){${nl}${rule(sel)}}${nl}`;
    if (r < 0.9) {
      const vars = Array.from(
        { length: 4 + g.int(12) },
        () => `${ind}--${g.kebab()}-${g.pick(['color', 'bg', 'radius', 'token-gap'])}: #${g.hex(6)}`,
      );
      return `:root{${nl}${vars.join(`;${nl}`)}}${nl}`;
    }
    const svg = `%3csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3e%3cpath fill='none' stroke='%23${g.hex(6)}' d='M${g.int(16)} ${g.int(16)}l${g.int(6)} ${g.int(6)} ${g.int(6)}-${g.int(6)}'/%3e%3c/svg%3e`;
    return `${sel}{background-image:url("data:image/svg+xml,${svg}")}${nl}`;
  });
}

function jsonFile(g: Gen, size: number): Buffer {
  let id = g.int(10000);
  let first = true;
  return assemble(size, `{"generated":"2024-05-0${1 + g.int(9)}T12:00:00Z","items":[`, ']}\n', () => {
    const record = {
      id: id++,
      uuid: `${g.hex(8)}-${g.hex(4)}-4${g.hex(3)}-a${g.hex(3)}-${g.hex(12)}`,
      name: g.cap(g.words(2)),
      email: `${g.kebab()}${g.int(1000)}@example.com`,
      role: g.pick(['viewer', 'editor', 'admin']),
      createdAt: `202${g.int(5)}-0${1 + g.int(9)}-1${g.int(10)}T0${g.int(10)}:${10 + g.int(50)}:00Z`,
      score: Number(g.random().toFixed(4)),
      tags: Array.from({ length: g.int(4) }, () => g.kebab()),
      active: g.chance(0.7),
      settings: { theme: g.pick(['dark', 'light']), locale: g.pick(['en-US', 'de-DE', 'fr-FR']) },
      tokenCount: g.int(4096),
      passwordStrength: g.pick(['weak', 'fair', 'strong']),
      avatar: `https://images.example.com/u/${g.int(100000)}.jpg`,
      etag: `"${g.hex(32)}"`,
      description: g.message(6, 30),
    };
    const text = (first ? '' : ',') + JSON.stringify(record);
    first = false;
    return text;
  });
}

function mapFile(g: Gen, size: number): Buffer {
  // webpack's layout: sources, sourcesContent (JS as escaped JSON strings), names, then the mappings.
  const js = new JsGen(g, false);
  const sources: string[] = [];
  const contents: string[] = [];
  let contentBytes = 0;
  while (contentBytes < size * 0.55) {
    const n = 2 + g.int(12);
    const src = Array.from({ length: n }, () => js.unit()).join('');
    sources.push(`webpack://app/./src/${g.kebab()}/${g.ident()}.js`);
    contents.push(src);
    contentBytes += src.length * 1.1;
  }
  const names = Array.from({ length: 50 + g.int(400) }, () => g.ident());
  const head = `{"version":3,"file":"${g.kebab()}.min.js","sources":${JSON.stringify(sources)},"sourcesContent":${JSON.stringify(contents)},"names":${JSON.stringify(names)},"mappings":"`;
  let mappings = '';
  const parts: string[] = [];
  let bytes = Buffer.byteLength(head) + 3;
  while (bytes < size) {
    const fields = [g.int(80), g.int(3) - 1, g.int(20) - 8, g.int(30) - 10];
    if (g.chance(0.6)) fields.push(g.int(40) - 20);
    const seg = fields.map(vlq).join('') + (g.chance(0.1) ? ';' : ',');
    parts.push(seg);
    bytes += seg.length;
  }
  mappings = parts.join('');
  const buf = Buffer.from(`${head}${mappings}"}\n`);
  if (buf.length <= size) return buf;
  // Over by one segment: trim the mappings (or, for a tiny file, everything) to fit exactly.
  return Buffer.concat([buf.subarray(0, Math.max(0, size - 3)), Buffer.from('"}\n')]).subarray(0, size);
}

function svgFile(g: Gen, size: number): Buffer {
  const coord = () => `${g.int(24)}${g.chance(0.5) ? `.${g.int(100)}` : ''}`;
  return assemble(
    size,
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" style="display:none">\n`,
    '</svg>\n',
    () => {
      const cmds = Array.from(
        { length: 6 + g.int(60) },
        () =>
          `${g.pick(['M', 'L', 'C', 'c', 'l', 'h', 'v', 'a', 's'])}${coord()} ${coord()}${g.chance(0.4) ? ` ${coord()} ${coord()}` : ''}`,
      );
      return `<symbol id="icon-${g.kebab()}" viewBox="0 0 24 24"><title>${g.words(2)}</title><path d="${cmds.join('')}Z" fill="currentColor" fill-rule="evenodd"/></symbol>\n`;
    },
  );
}

function mdFile(g: Gen, size: number): Buffer {
  const js = new JsGen(g, false);
  return assemble(size, `# ${g.cap(g.words(4))}\n\n${g.sentence(10, 40)}\n\n`, '\n', () => {
    const r = g.random();
    if (r < 0.45) return `${g.sentence(15, 80)} ${g.sentence(10, 40)}\n\n`;
    if (r < 0.55) return `## ${g.cap(g.words(3))}\n\n`;
    if (r < 0.65)
      return `${Array.from({ length: 2 + g.int(6) }, () => `- ${g.sentence(3, 14)} See [${g.words(2)}](${g.url()}).`).join('\n')}\n\n`;
    if (r < 0.75) return `\`\`\`js\n${js.unit()}\`\`\`\n\n`;
    if (r < 0.85) {
      const name = g.ident().toUpperCase();
      return `\`\`\`sh\nnpm install --save ${g.kebab()}\nexport ${name}_API_KEY=your-api-key\ncurl -H "Authorization: Bearer $${name}_TOKEN" https://api.example.com/v1/${g.kebab()}\n\`\`\`\n\n`;
    }
    const rows = Array.from(
      { length: 2 + g.int(6) },
      () => `| \`${g.ident()}\` | ${g.pick(['string', 'number', 'boolean'])} | ${g.sentence(3, 10)} |`,
    );
    return `| Option | Type | Description |\n|---|---|---|\n${rows.join('\n')}\n\n`;
  });
}

/** One generated text file of `kind`, exactly `size` bytes, the same for the same seed. */
export function textFile(kind: TextKind, size: number, seed: number): Buffer {
  const g = new Gen(seeded(seed));
  switch (kind) {
    case 'html':
      return htmlFile(g, size);
    case 'js':
      return jsFile(g, size, false);
    case 'min.js':
      return jsFile(g, size, true);
    case 'css':
      return cssFile(g, size);
    case 'json':
      return jsonFile(g, size);
    case 'map':
      return mapFile(g, size);
    case 'svg':
      return svgFile(g, size);
    case 'md':
      return mdFile(g, size);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The bench

interface SiteFile {
  path: string;
  kind: TextKind;
  bytes: Buffer;
}

/** ~1000 files adding up to 50 MB: sizes spread log-normally (a few KB to a few MB), bundles and maps larger. */
function textSite(): SiteFile[] {
  const random = seeded(SITE_SEED);
  const g = new Gen(random);
  const kinds = Array.from({ length: SITE_FILES }, (_, i) => (i === 0 ? 'html' : pickTextKind(random)));
  const weights = kinds.map((kind) => {
    // Box-Muller: a normal deviate for a log-normal size.
    const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return Math.exp(1.1 * z) * (kind === 'map' || kind === 'min.js' ? 3 : 1);
  });
  const sum = weights.reduce((a, b) => a + b, 0);
  return kinds.map((kind, i) => {
    const size = Math.max(512, Math.floor((weights[i]! / sum) * SITE_BYTES));
    const dir = kind === 'html' || kind === 'md' ? g.kebab() : `assets/${kind.replace('min.', '')}`;
    return {
      path: i === 0 ? 'index.html' : `${dir}/${g.kebab()}-${i}.${kind}`,
      kind,
      bytes: textFile(kind, size, SITE_SEED + 1 + i),
    };
  });
}

/** The pool the 200 MB file is streamed from: generated files of every kind, end to end. */
function bigPool(): Buffer {
  const random = seeded(BIG_SEED);
  const parts: Buffer[] = [];
  let bytes = 0;
  for (let i = 0; bytes < BIG_POOL_BYTES; i++) {
    const size = Math.min(BIG_POOL_BYTES - bytes, 64 * 1024 + Math.floor(random() * 2 * MB));
    const part = textFile(pickTextKind(random), size, BIG_SEED + 1 + i);
    parts.push(part);
    bytes += part.length;
  }
  return Buffer.concat(parts);
}

async function* chunks(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, at + CHUNK_BYTES);
}

/** `global.gc`, exposed at run time (the npm script starts plain tsx). */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Seconds of CPU this process used (user + system) since `from`. On a shared machine wall time also
 * counts the waits for a core, so MB per CPU-second is printed next to MB/s: the scanner's own speed.
 */
function cpuSeconds(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
}

interface BigResult {
  bytes: number;
  seconds: number;
  mbps: number;
  /** MB per CPU-second of the child over the streaming loop. */
  cpuMbps: number;
  baselineRssMB: number;
  peakRssMB: number;
  rssGrowthMB: number;
  peakHeapGrowthMB: number;
  findings: number;
}

/** Child process: stream BIG_BYTES through one ScanSession; RSS sampled after every chunk. */
async function bigChild(): Promise<void> {
  const { ScanSession } = await import('../src/core/scan/scanner.js');
  const pool = bigPool();
  const gc = exposeGc();
  // Warm the scanner's code paths on a little text so the baseline includes its compiled regexes.
  const warm = new ScanSession();
  await warm.push(pool.subarray(0, 256 * 1024));
  await warm.finish();
  gc();
  gc();
  const rss0: number[] = [];
  for (let i = 0; i < 9; i++) rss0.push(process.memoryUsage.rss());
  const baseline = stats(rss0).median;
  const heap0 = process.memoryUsage().heapUsed;
  let peak = baseline;
  let peakHeap = heap0;
  let scanMs = 0;
  const session = new ScanSession();
  const cpu0 = process.cpuUsage();
  let at = 0;
  for (let sent = 0; sent < BIG_BYTES; sent += CHUNK_BYTES) {
    if (at + CHUNK_BYTES > pool.length) at = 0;
    const chunk = pool.subarray(at, at + Math.min(CHUNK_BYTES, BIG_BYTES - sent));
    at += CHUNK_BYTES;
    const t0 = performance.now();
    await session.push(chunk);
    scanMs += performance.now() - t0;
    const mem = process.memoryUsage();
    if (mem.rss > peak) peak = mem.rss;
    if (mem.heapUsed > peakHeap) peakHeap = mem.heapUsed;
  }
  const t0 = performance.now();
  const findings = await session.finish();
  scanMs += performance.now() - t0;
  const cpu = cpuSeconds(cpu0);
  peak = Math.max(peak, process.memoryUsage.rss());
  const result: BigResult = {
    bytes: BIG_BYTES,
    seconds: scanMs / 1000,
    mbps: BIG_BYTES / MB / (scanMs / 1000),
    cpuMbps: BIG_BYTES / MB / cpu,
    baselineRssMB: baseline / MB,
    peakRssMB: peak / MB,
    rssGrowthMB: (peak - baseline) / MB,
    peakHeapGrowthMB: (peakHeap - heap0) / MB,
    findings: findings.length,
  };
  process.send!(result);
}

function runBigChild(): Promise<BigResult> {
  return new Promise((resolvePromise, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--big-child'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: BigResult | undefined;
    child.on('message', (m) => {
      result = m as BigResult;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (result) resolvePromise(result);
      else reject(new Error(`200 MB scan child exited with ${code} and no result`));
    });
  });
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

function parseArgs(argv: string[]): { rounds: number } {
  let rounds = ROUNDS;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--rounds' && /^[1-9]\d*$/.test(argv[i + 1] ?? '')) {
      rounds = Number(argv[++i]);
    } else {
      throw new Error(`unknown argument ${arg}; use --rounds N`);
    }
  }
  return { rounds };
}

interface Library {
  name: string;
  files: Array<{ path: string; bytes: Buffer }>;
  bytes: number;
  /** Each round scans the library this many times over (LIBRARY_MIN_BYTES at least). */
  reps: number;
  mbps: number[];
  findings: Array<Finding & { file: string }>;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const { isScannable, scanStream, SCANNER_VERSION } = await import('../src/core/scan/scanner.js');
  const scanBytes = (bytes: Uint8Array) => scanStream(chunks(bytes));

  const tGen = performance.now();
  const site = textSite();
  const siteBytes = site.reduce((a, f) => a + f.bytes.length, 0);
  const kinds = [...new Set(site.map((f) => f.kind))];
  process.stderr.write(
    `text site: ${site.length} files, ${fmt(siteBytes / MB)} MB (${kinds.map((k) => `${site.filter((f) => f.kind === k).length} ${k}`).join(', ')}), generated in ${fmt((performance.now() - tGen) / 1000, 2)} s\n`,
  );
  const unscannable = site.filter((f) => !isScannable(f.path, TEXT_CONTENT_TYPES[f.kind]));
  if (unscannable.length)
    process.stderr.write(`warning: isScannable() says no to ${unscannable.length} site files\n`);

  const libraries: Library[] = [];
  const missing: string[] = [];
  for (const bundle of resolveRealBundles()) {
    missing.push(...bundle.missing);
    const files: Library['files'] = bundle.files.map((path) => ({
      path,
      bytes: readFileSync(join(REPO_ROOT, 'node_modules', path)),
    }));
    if (files.length === 0) continue;
    const bytes = files.reduce((a, f) => a + f.bytes.length, 0);
    libraries.push({
      name: bundle.name,
      files,
      bytes,
      reps: Math.ceil(LIBRARY_MIN_BYTES / bytes),
      mbps: [],
      findings: [],
    });
  }
  for (const path of missing) process.stderr.write(`note: node_modules/${path}: no such file, skipped\n`);

  const loadBefore = loadavg()[0]!;
  if (loadBefore > cpus().length / 2) {
    process.stderr.write(`warning: load ${fmt(loadBefore, 2)}; the figures will be noisy\n`);
  }

  // Warm-up: JIT and the regexes' first compilation stay out of the figures.
  for (const f of site.slice(0, 60)) await scanBytes(f.bytes);
  for (const lib of libraries) for (const f of lib.files) await scanBytes(f.bytes);

  const siteRounds: Array<{ mbps: number; cpuMbps: number; seconds: number; findings: number }> = [];
  const kindMbps = new Map<TextKind, number[]>(kinds.map((k) => [k, []]));
  const siteFindings = new Map<string, number>();
  const libRounds: number[] = [];
  const libCpuRounds: number[] = [];
  const bigRounds: BigResult[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    // (1) the text site, file after file.
    const kindTime = new Map<TextKind, number>();
    let findings = 0;
    const t0 = performance.now();
    const siteCpu0 = process.cpuUsage();
    for (const f of site) {
      const t = performance.now();
      const found = await scanBytes(f.bytes);
      kindTime.set(f.kind, (kindTime.get(f.kind) ?? 0) + performance.now() - t);
      findings += found.length;
      if (r === 0)
        for (const x of found)
          siteFindings.set(`${f.kind}: ${x.type}`, (siteFindings.get(`${f.kind}: ${x.type}`) ?? 0) + 1);
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpuMbps = siteBytes / MB / cpuSeconds(siteCpu0);
    siteRounds.push({ mbps: siteBytes / MB / seconds, cpuMbps, seconds, findings });
    for (const k of kinds) {
      const bytes = site.filter((f) => f.kind === k).reduce((a, f) => a + f.bytes.length, 0);
      kindMbps.get(k)!.push(bytes / MB / (kindTime.get(k)! / 1000));
    }

    // (2) the libraries.
    let libBytes = 0;
    let libMs = 0;
    const libCpu0 = process.cpuUsage();
    for (const lib of libraries) {
      const t = performance.now();
      for (let rep = 0; rep < lib.reps; rep++) {
        for (const f of lib.files) {
          const found = await scanBytes(f.bytes);
          if (r === 0 && rep === 0) for (const x of found) lib.findings.push({ ...x, file: f.path });
        }
      }
      const ms = performance.now() - t;
      lib.mbps.push((lib.bytes * lib.reps) / MB / (ms / 1000));
      libBytes += lib.bytes * lib.reps;
      libMs += ms;
    }
    libRounds.push(libBytes / MB / (libMs / 1000));
    libCpuRounds.push(libBytes / MB / cpuSeconds(libCpu0));

    // (3) 200 MB through one session, in a fresh process.
    const big = await runBigChild();
    bigRounds.push(big);
    process.stderr.write(
      `round ${r + 1}: text site ${fmt(siteRounds[r]!.mbps)} MB/s (${fmt(siteRounds[r]!.cpuMbps)} per CPU-s), libraries ${fmt(libRounds[r]!)} MB/s (${fmt(libCpuRounds[r]!)}), 200 MB ${fmt(big.mbps)} MB/s (${fmt(big.cpuMbps)}; RSS +${fmt(big.rssGrowthMB)} MB)\n`,
    );
  }

  type Row = string[];
  const rows: Row[] = [['what', 'median (min-max)', 'target', 'ok']];
  const range = (st: Stats, d = 1) => `${fmt(st.median, d)} (${fmt(st.min, d)}-${fmt(st.max, d)})`;
  const verdict = (ok: boolean) => (ok ? 'yes' : 'NO');
  const mbpsRow = (label: string, xs: number[], target = true): Row => {
    const st = stats(xs);
    return [
      label,
      range(st),
      target ? `>= ${TARGETS.scanMBps}` : '',
      target ? verdict(st.median >= TARGETS.scanMBps) : '',
    ];
  };
  rows.push(
    mbpsRow(
      `text site, ${site.length} files / ${fmt(siteBytes / MB, 0)} MB (MB/s)`,
      siteRounds.map((x) => x.mbps),
    ),
  );
  rows.push(
    mbpsRow(
      '  MB per CPU-second',
      siteRounds.map((x) => x.cpuMbps),
      false,
    ),
  );
  for (const k of kinds) {
    const n = site.filter((f) => f.kind === k);
    const mb = n.reduce((a, f) => a + f.bytes.length, 0) / MB;
    rows.push(mbpsRow(`  .${k}: ${n.length} files, ${fmt(mb)} MB (MB/s)`, kindMbps.get(k)!, false));
  }
  const totalLibMB = libraries.reduce((a, l) => a + l.bytes, 0) / MB;
  rows.push(mbpsRow(`libraries, ${libraries.length} / ${fmt(totalLibMB)} MB (MB/s)`, libRounds));
  rows.push(mbpsRow('  MB per CPU-second', libCpuRounds, false));
  for (const lib of libraries) {
    const row = mbpsRow(`  ${lib.name} (${fmt(lib.bytes / MB, 2)} MB)`, lib.mbps, false);
    row[3] = stats(lib.mbps).median >= TARGETS.scanMBps ? '' : 'below';
    rows.push(row);
  }
  const libFindings = libraries.flatMap((l) => l.findings);
  rows.push([
    'libraries: findings (false positives)',
    String(libFindings.length),
    '0',
    verdict(libFindings.length === 0),
  ]);
  const siteFindingCount = siteRounds[0]?.findings ?? 0;
  rows.push([
    'text site: findings (false positives)',
    String(siteFindingCount),
    '0',
    verdict(siteFindingCount === 0),
  ]);
  rows.push(
    mbpsRow(
      '200 MB file, one ScanSession (MB/s)',
      bigRounds.map((b) => b.mbps),
    ),
  );
  rows.push(
    mbpsRow(
      '  MB per CPU-second',
      bigRounds.map((b) => b.cpuMbps),
      false,
    ),
  );
  const growth = stats(bigRounds.map((b) => b.rssGrowthMB));
  rows.push([
    '  RSS growth (MB)',
    range(growth),
    `< ${TARGETS.rssGrowthMB}`,
    verdict(growth.max < TARGETS.rssGrowthMB),
  ]);
  rows.push(['  heap growth, peak (MB)', range(stats(bigRounds.map((b) => b.peakHeapGrowthMB))), '', '']);
  const bigFindings = bigRounds[0]?.findings ?? 0;
  rows.push(['  findings', String(bigFindings), '0', verdict(bigFindings === 0)]);

  console.log(
    `(scanner ${SCANNER_VERSION}; ${opts.rounds} rounds; load average ${fmt(loadBefore, 2)} -> ${fmt(loadavg()[0]!, 2)} on ${cpus().length} cores; MB = 2^20 bytes)`,
  );
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  for (const r of rows) {
    console.log(
      r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : (cell ?? '').padStart(widths[c]!))).join('  '),
    );
  }
  console.log(
    `\nlibrary bundles: ${libFindings.length} finding(s) (expected 0; each one is a false positive)` +
      (libFindings.length > 0 ? ' <-- FALSE POSITIVES' : ''),
  );
  if (libFindings.length > 0) {
    for (const f of libFindings) console.log(`  node_modules/${f.file}:${f.line}  ${f.type}`);
  }
  if (siteFindings.size > 0) {
    console.log(`\nFindings in the generated text site (no secrets in it; all false positives):`);
    for (const [k, n] of siteFindings) console.log(`  ${k} x ${n}`);
  }
  for (const path of missing) console.log(`(skipped: node_modules/${path}: no such file)`);

  const out = {
    date: new Date().toISOString(),
    node: process.version,
    scannerVersion: SCANNER_VERSION,
    cpus: cpus().length,
    loadAverage1m: { before: loadBefore, after: loadavg()[0]! },
    rounds: opts.rounds,
    chunkBytes: CHUNK_BYTES,
    targets: TARGETS,
    textSite: {
      files: site.length,
      bytes: siteBytes,
      seed: SITE_SEED,
      mbps: stats(siteRounds.map((x) => x.mbps)),
      cpuMbps: stats(siteRounds.map((x) => x.cpuMbps)),
      rounds: siteRounds,
      byKind: Object.fromEntries(
        kinds.map((k) => {
          const n = site.filter((f) => f.kind === k);
          return [
            k,
            {
              files: n.length,
              bytes: n.reduce((a, f) => a + f.bytes.length, 0),
              mbps: stats(kindMbps.get(k)!),
              rounds: kindMbps.get(k)!,
            },
          ];
        }),
      ),
      findings: Object.fromEntries(siteFindings),
    },
    libraries: {
      bytes: libraries.reduce((a, l) => a + l.bytes, 0),
      mbps: stats(libRounds),
      cpuMbps: stats(libCpuRounds),
      rounds: libRounds,
      findings: libFindings,
      skipped: missing,
      byLibrary: libraries.map((l) => ({
        name: l.name,
        files: l.files.map((f) => ({ path: f.path, bytes: f.bytes.length })),
        bytes: l.bytes,
        repsPerRound: l.reps,
        mbps: stats(l.mbps),
        rounds: l.mbps,
        findings: l.findings.length,
      })),
    },
    bigFile: {
      bytes: BIG_BYTES,
      poolBytes: BIG_POOL_BYTES,
      mbps: stats(bigRounds.map((b) => b.mbps)),
      cpuMbps: stats(bigRounds.map((b) => b.cpuMbps)),
      rssGrowthMB: growth,
      rounds: bigRounds,
    },
  };
  await mkdir(join(REPO_ROOT, 'bench', 'out'), { recursive: true });
  await writeFile(join(REPO_ROOT, 'bench', 'out', 'scan.json'), `${JSON.stringify(out, null, 2)}\n`);
}

// Only when run as a script: bench/publish.ts imports the generator above.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  (process.argv.includes('--big-child') ? bigChild() : main()).catch((err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  });
}
