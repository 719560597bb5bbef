// The secret scanner's detection rules as data (DESIGN 17): one table of our own patterns, the mapping of
// @secretlint/secretlint-rule-preset-recommend's findings onto the same types, and the filters that keep
// public identifiers, placeholders and truncated examples from blocking a publish. Compiled once at import.
//
// Each rule names a `type` (snake_case, reported as `detectedSecrets[].type`), the site variable the
// secret should move to and the API hosts the proxy would need. Fixtures: test/core/scan-rules.test.ts.

export interface SecretKind {
  /** snake_case, e.g. `stripe_secret_key`. */
  type: string;
  /** Suggested site variable name (spec "Site variable": a letter, then letters, digits, underscores). */
  variableName: string;
  /** Hosts the proxy needs to reach for this secret's API (empty when it is not an HTTPS API key). */
  proxyHosts: readonly string[];
}

export interface MatchContext {
  /** The whole window being scanned (the match sits at `start`..`end`). */
  text: string;
  start: number;
  end: number;
  /** Named groups of the match. */
  groups: Record<string, string | undefined>;
}

export interface DetectionRule extends SecretKind {
  /**
   * Global regex. Group `secret` (else the whole match) is the secret part, which the placeholder filter
   * sees; group `name` (generic rules) is the name it is assigned to.
   */
  pattern: RegExp;
  /**
   * Literals (case-sensitive) one of which every match of `pattern` starts with. The scanner finds them with
   * `indexOf` and runs the pattern only where one occurs: one pass of the pattern over a 1 MiB window costs
   * more than finding a literal that is usually absent (test/core/scan-prefixes.test.ts holds the two
   * ways to the same matches).
   */
  prefixes?: readonly string[];
  /**
   * Must match somewhere in the text before the pattern runs: for patterns too generic to tell a secret
   * apart without context.
   */
  trigger?: RegExp;
  /** Further checks; false drops the match, an object refines the reported kind. */
  check?: (secret: string, ctx: MatchContext) => boolean | Partial<SecretKind>;
}

// ---------------------------------------------------------------------------------------------------------
// Shared predicates

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * Documentation placeholders and truncated examples (`sk_live_xxxx`, `YOUR_API_KEY`, `<token>`, `MIIE...`,
 * `xoxb-your-bot-token`, `${API_KEY}`, `********`). Applied to the secret part only, so a real prefix such
 * as `sk_test_` never makes a key look like a placeholder.
 */
const PLACEHOLDER_RE =
  /\*{3,}|\.\.\.|\u2026|your[_-]|<[^>]*>|\$\{|\{\{|^\{[^{}]*\}$|^\[[^[\]]*\]$|%[sd]\b|placeholder|example|sample|dummy|change[_-]?me|replace[_-]?me|redacted|insert[_-]|(.)\1{7,}/i;

/**
 * `<` and `>` as pages and URLs escape them: HTML entities (`&lt;password&gt;`, `&#60;`, `&amp;lt;` escaped
 * twice), percent-encoding (`%3Cpassword%3E`) and JS string escapes (`\u003c`, `\x3c`). A documentation
 * page shows `mongodb+srv://<username>:<password>@...` in any of these forms.
 */
const ESCAPED_ANGLE_RES: ReadonlyArray<readonly [RegExp, string]> = [
  [/&(?:amp;)*(?:lt|#0*60|#x0*3c);|%3c|\\u003c|\\x3c/gi, '<'],
  [/&(?:amp;)*(?:gt|#0*62|#x0*3e);|%3e|\\u003e|\\x3e/gi, '>'],
];
const ESCAPE_START_RE = /[&%\\]/;

/**
 * Short markers that a long random value holds by chance (`xxxx` or `your` in about one 100-character key
 * in 5,000), so they mark a placeholder only in values shorter than SHORT_PLACEHOLDER_MAX_CHARS.
 */
const SHORT_PLACEHOLDER_RE = /x{4,}|your/i;
const SHORT_PLACEHOLDER_MAX_CHARS = 64;

export function isPlaceholder(secret: string): boolean {
  // A PEM block is judged by its body (pemBodyIsKey): DER and OpenSSH bodies hold runs of `A` (zero bytes)
  // and, by chance, any short word.
  if (secret.startsWith('-----BEGIN ')) return false;
  let text = secret;
  if (ESCAPE_START_RE.test(text)) for (const [re, angle] of ESCAPED_ANGLE_RES) text = text.replace(re, angle);
  if (PLACEHOLDER_RE.test(text)) return true;
  return text.length < SHORT_PLACEHOLDER_MAX_CHARS && SHORT_PLACEHOLDER_RE.test(text);
}

/**
 * A connection string's password that fills a documented shape rather than holds a secret: a word in
 * capitals (`USER:PASSWORD`, `DB_PASS`: the convention for "put yours here"), the word itself in any case
 * (`user:password`, `:pwd`), a shell or Windows variable, or the user name repeated (the default accounts
 * of local set-ups: `postgres:postgres`, `guest:guest`, `root:root`). Bracketed and escaped placeholders
 * (`<password>`, `&lt;password&gt;`, `{password}`) are isPlaceholder's.
 */
function connectionPasswordIsPlaceholder(user: string, password: string): boolean {
  return (
    /^[A-Z]+(?:_[A-Z]+)*$/.test(password) ||
    /^(?:pass(?:word)?|passwd|pwd|secret|\*+|:?[a-z_]*pass[a-z_]*|\$\w+|%\w+%)$/i.test(password) ||
    password === user
  );
}

/** Base64url JSON payload of a JWT, or undefined. */
export function jwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const json: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Values that are public by design and must never block a publish: Stripe publishable keys, Google browser
 * keys (Firebase web config, Maps), Mapbox public tokens, reCAPTCHA site keys, Supabase anon JWTs, the
 * client tokens of browser SDKs whose vendor marks them by a prefix, UUIDs, SRI `integrity` values and
 * data: URIs.
 */
const PUBLIC_VALUE_RES: readonly RegExp[] = [
  /^pk_(?:live|test)_/, // Stripe (and Clerk) publishable key
  /^AIza[0-9A-Za-z_-]{35}$/, // Google API key for browsers (Firebase web config, Maps JavaScript API)
  /^pk\.eyJ/, // Mapbox public token
  /^6L[0-9A-Za-z_-]{38}$/, // reCAPTCHA site key
  // Datadog client token (RUM, browser logs): "API keys cannot be used to send data from a browser [...]
  // a client token must be used" (docs.datadoghq.com/account_management/api-app-keys/#client-tokens).
  /^pub[0-9a-f]{32}$/,
  // PostHog project API key, write-only and meant for the browser; personal keys (`phx_`) stay secret
  // (posthog.com/docs/api, "project API key" vs "personal API keys").
  /^phc_[A-Za-z0-9]{32,}$/,
  // LaunchDarkly mobile key: "Mobile keys do not need to be kept secret"; SDK keys (`sdk-`) do
  // (launchdarkly.com/docs/home/account/environment/keys).
  /^mob-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  // Client-side keys of Statsig and Amplitude Experiment (`client-`; their server keys are `secret-` and
  // `server-`): docs.statsig.com/sdk-keys/api-keys, amplitude.com/docs/apis/keys-and-tokens.
  /^client-[A-Za-z0-9]{20,}$/,
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, // UUID
  /^sha(?:256|384|512)-[A-Za-z0-9+/=]+$/, // Subresource Integrity
  /^data:/i,
];

export function isPublicValue(value: string): boolean {
  if (PUBLIC_VALUE_RES.some((re) => re.test(value))) return true;
  if (value.startsWith('eyJ')) {
    const role = jwtPayload(value)?.role;
    if (role === 'anon' || role === 'authenticated') return true; // Supabase anon key
  }
  return false;
}

/**
 * Browser keys that carry no vendor prefix, each documented as public by its vendor: told apart by their
 * shape and the vendor's SDK or config within PUBLIC_KEY_CONTEXT_CHARS of them (the name they are assigned
 * to counts: `MIXPANEL_TOKEN`). A name that says the key is a server's (SERVER_KEY_NAME_RE) is never one.
 */
const PUBLIC_CLIENT_KEYS: ReadonlyArray<{ vendor: string; value: RegExp; context: RegExp }> = [
  // "Search-only API key [...] safe to use in your front-end code" (algolia.com/doc/guides/security/api-keys).
  {
    vendor: 'Algolia search-only API key',
    value: /^[0-9a-f]{32}$/,
    context: /algolia|docsearch|\bappId\b|applicationId|indexName/i,
  },
  // "A project's token is not a secret value" (docs.mixpanel.com/reference/project-token).
  { vendor: 'Mixpanel project token', value: /^[0-9a-f]{32}$/, context: /mixpanel/i },
  // "API Keys are public" (amplitude.com/docs/apis/keys-and-tokens); the Secret Key is not.
  { vendor: 'Amplitude API key', value: /^[0-9a-f]{32}$/, context: /amplitude/i },
  // The notifier API key goes into Bugsnag.start() in the page (docs.bugsnag.com/platforms/javascript).
  { vendor: 'Bugsnag notifier API key', value: /^[0-9a-f]{32}$/, context: /bugsnag/i },
  // A `post_client_item` token "can perform POST requests to /item/ [...] only if the item has a client-side
  // platform": the one the browser snippet takes (docs.rollbar.com/docs/access-tokens).
  { vendor: 'Rollbar post_client_item token', value: /^[0-9a-f]{32}$/, context: /rollbar/i },
  // analytics.js loads from cdn.segment.com/analytics.js/v1/<write key>/ (segment.com/docs/connections/find-writekey).
  { vendor: 'Segment write key', value: /^[A-Za-z0-9]{32}$/, context: /segment|analytics\.load|writeKey/i },
  // "Client-side IDs do not need to be kept secret" (launchdarkly.com/docs/home/account/environment/keys).
  {
    vendor: 'LaunchDarkly client-side ID',
    value: /^[0-9a-f]{24}$/,
    context: /launchdarkly|LDClient|clientSideI[dD]/,
  },
];
const PUBLIC_KEY_CONTEXT_CHARS = 400;

/** Names of keys that only a server may hold, whatever vendor's SDK is next to them. */
const SERVER_KEY_NAME_RE = /secret|private|admin|server|personal|management|master|write/i;

function isPublicClientKey(value: string, name: string, ctx: MatchContext): boolean {
  if (SERVER_KEY_NAME_RE.test(name)) return false;
  const kinds = PUBLIC_CLIENT_KEYS.filter((k) => k.value.test(value));
  if (kinds.length === 0) return false;
  const around = ctx.text.slice(
    Math.max(0, ctx.start - PUBLIC_KEY_CONTEXT_CHARS),
    ctx.end + PUBLIC_KEY_CONTEXT_CHARS,
  );
  return kinds.some((k) => k.context.test(around));
}

/**
 * A dotted name made of words: a language grammar's token class (`keyword.$0`, `string.$S2.delim`,
 * `support.class.actionscript.2`, `keyword.tag-$1` in Monarch, Ace and TextMate grammars, whose rules all
 * name a `token`), a property path or a message key. Its digits are back-references (`$0`, `$S2`) or short
 * numbers, which made it pass for letters and digits mixed; a key's random run never splits into lowercase
 * words. The dot is required: a passphrase of words and digits (`correct-horse-battery-42`) stays a secret.
 */
function isWordPath(value: string): boolean {
  if (!value.includes('.')) return false;
  const segments = value.split(/[.$:@#/_-]+/).filter((segment) => segment !== '');
  return (
    segments.length >= 2 &&
    segments.every((segment) => segment.length <= 2 || /^[A-Za-z]?[a-z]+$/.test(segment))
  );
}

/**
 * Whether a PEM body (line breaks real or escaped as `\n` in JSON/JS strings) is key material: base64 of at
 * least 40 characters, as varied as encoded key bytes. A placeholder either breaks the alphabet (`MIIE...`,
 * `<your key>`) or repeats itself (`XXXX`, `YourPrivateKeyHere`, about 4.3 bits a character); the shortest
 * real body, a 64-character PKCS#8 Ed25519 key, carries about 5.
 */
function pemBodyIsKey(body: string): boolean {
  const lines = body
    .split(/(?:\\+[nr]|[\r\n])+/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.includes(':')); // `Proc-Type: 4,ENCRYPTED`, `DEK-Info: ...` headers
  const b64 = lines.join('').replace(/\s+/g, '');
  return b64.length >= 40 && /^[A-Za-z0-9+/=]+$/.test(b64) && entropy(b64) >= PEM_BODY_MIN_ENTROPY;
}
const PEM_BODY_MIN_ENTROPY = 4.5; // bits per character

/** `stripeSecretKey`, `e.api_key`, `data-api-key` -> `STRIPE_SECRET_KEY`, `API_KEY`, `API_KEY`. */
export function variableNameFor(name: string): string {
  const last = name.split('.').pop() ?? name;
  const snake = last
    .replace(/^data-/i, '') // an HTML data attribute
    .replace(/^[^A-Za-z]+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toUpperCase()
    .slice(0, 64);
  return snake === '' ? 'SECRET' : snake;
}

const GENERIC_NAME_WORDS =
  'secret|passw(?:or)?d|pwd|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|bearer[_-]?token|token|credential|private[_-]?key|client[_-]?secret|signing[_-]?key|encryption[_-]?key';

/** Names that carry a public or non-secret value although they contain a secret-sounding word. */
const PUBLIC_NAME_RE =
  /public|publishable|site[_-]?key|search|anon|csrf|xsrf|(?:name|label|placeholder|field|input|type|kind|url|uri|endpoint|path|header|param|prefix|suffix|length|len|min|max|regex|pattern|hint|message|msg|text|title|error|class|selector|attr|mode|policy|storage|store|cookie|expires?|ttl|format|id|count|size|index|event|action|status|list|map|cache)s?$/i;

/** Identifier characters a generic rule walks back over to recover the whole assigned name. */
const NAME_CHAR_RE = /[A-Za-z0-9_$.-]/;
/** The rest of a `\uXXXX`, `\xXX`, `\n`, `\r` or `\t` escape, at `lastIndex`. */
const ESCAPE_AT_RE = /u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[nrt]/y;

const AWS_SECRET_NAME_RE = /secret_?access_?key/i;
const TWILIO_CONTEXT_RE = /twilio|\bAC[0-9a-f]{32}\b/i;
const GITLAB_PREFIX_RE = /^gl(?:pat|ptt|dt|rt|cbt|oas|ft|soat|imt)-/;
const DB_SCHEME_RE =
  /(?:^|[^A-Za-z0-9+.-]|\\u00[0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2})(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|cockroachdb|clickhouse)(?:\+[a-z0-9]+)?$/i;

const GENERIC_KEYWORD_RE = new RegExp(`^(?:${GENERIC_NAME_WORDS})`, 'i');

/**
 * The secret word ends a word of the name: `secretKey`, `api_key`, `passwords`, not `secretary`,
 * `tokenizer` or `authKeyboard` (a lowercase letter continuing it, other than a plural s).
 */
function keywordEndsWord(name: string): boolean {
  const word = GENERIC_KEYWORD_RE.exec(name)?.[0] ?? '';
  const next = name.slice(word.length, word.length + 2);
  return !/^[a-z]/.test(next) || /^s(?![a-z])/.test(next);
}

/**
 * A quoted name is an object or JSON key only when it opens an entry (after `{`, `,` or at a line start):
 * `x ? 'password' : 'field-2'` is a ternary of two strings.
 */
function quotedNameIsKey(ctx: MatchContext, nameStart: number): boolean {
  const after = ctx.text.slice(
    ctx.start + (ctx.groups.name ?? '').length,
    ctx.start + (ctx.groups.name ?? '').length + 6,
  );
  if (!/^(?:\\?["']|\\u00(?:22|27))/.test(after)) return true;
  const before = ctx.text
    .slice(Math.max(0, nameStart - 12), nameStart)
    .replace(/(?:\\?["']|\\u00(?:22|27))$/, '');
  // `\\n` is a line break escaped in a source map's sourcesContent.
  return /(?:^|[{,\n]|\\n)[ \t]*$/.test(before);
}

/**
 * Whether only indentation (and `export ` or a YAML `- `) stands between `at` and the start of its line: a
 * real line break, or one escaped in a JSON or JS string (`\n`, `\\n`), as a .env or YAML file's lines
 * sit in a source map's sourcesContent.
 */
function opensLine(text: string, at: number): boolean {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const head = text.slice(Math.max(lineStart, at - LINE_HEAD_MAX_CHARS), at);
  const re = lineStart >= at - LINE_HEAD_MAX_CHARS ? LINE_HEAD_RE : ESCAPED_LINE_HEAD_RE;
  return re.test(head);
}
const LINE_HEAD_MAX_CHARS = 64;
const LINE_HEAD_RE = /(?:^|\\+[nr])[ \t]*(?:export[ \t]+|- )?$/;
const ESCAPED_LINE_HEAD_RE = /\\+[nr][ \t]*(?:export[ \t]+|- )?$/;

/**
 * A value assigned to a secret-sounding name. Quoted values anywhere; unquoted ones only on `NAME=value`
 * or `name: value` lines (.env, YAML), never in code where `token = makeToken2()` is not a literal.
 */
function genericCheck(_s: string, ctx: MatchContext): boolean | Partial<SecretKind> {
  const secret = ctx.groups.quoted ?? ctx.groups.bare ?? '';
  let from = ctx.start;
  while (from > 0 && from > ctx.start - 60 && NAME_CHAR_RE.test(ctx.text[from - 1] ?? '')) from--;
  // The walk crosses the letters and digits of an escape before the name: a quote (`\u0022clientSecret`),
  // a line break (`\nAPI_KEY=`: a .env file in a source map's sourcesContent).
  ESCAPE_AT_RE.lastIndex = from;
  if (ctx.text[from - 1] === '\\' && ESCAPE_AT_RE.test(ctx.text)) from = ESCAPE_AT_RE.lastIndex;
  const name = ctx.text.slice(from, ctx.start) + (ctx.groups.name ?? '');
  if (ctx.groups.bare !== undefined && !opensLine(ctx.text, from)) return false;
  if (PUBLIC_NAME_RE.test(name.replace(/[^A-Za-z0-9]+$/, ''))) return false;
  if (!keywordEndsWord(ctx.groups.name ?? '')) return false;
  if (ctx.groups.quoted !== undefined && !quotedNameIsKey(ctx, from)) return false;
  if (isPlaceholder(secret) || isPublicValue(secret)) return false;
  if (AWS_SECRET_NAME_RE.test(name) && /^[A-Za-z0-9/+]{40}$/.test(secret) && entropy(secret) >= 3.5) {
    return { type: 'aws_secret_access_key', variableName: 'AWS_SECRET_ACCESS_KEY', proxyHosts: [] };
  }
  // A URL or path is an address, not a credential (URLs with credentials have their own rules); a value
  // opening with an operator or punctuation is code read across a string's end (`"Invalid token:",e)`).
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(secret) || /^(?:\.{0,2}\/|[#,+.()[\];:])/.test(secret)) return false;
  // High entropy: letters and digits mixed, or long and varied (a camelCase word or CSS class is neither).
  const mixed = /[0-9]/.test(secret) && /[A-Za-z]/.test(secret);
  if (!(mixed && entropy(secret) >= 3.0) && !(secret.length >= 32 && entropy(secret) >= 4.2)) return false;
  if (isWordPath(secret) || isPublicClientKey(secret, name, ctx)) return false;
  const around = () => ctx.text.slice(Math.max(0, ctx.start - 600), ctx.end + 600);
  if (/^[0-9a-f]{32}$/i.test(secret)) {
    if (/auth_?token/i.test(name) && TWILIO_CONTEXT_RE.test(around())) {
      return { type: 'twilio_auth_token', variableName: 'TWILIO_AUTH_TOKEN', proxyHosts: ['api.twilio.com'] };
    }
  }
  return { variableName: variableNameFor(name) };
}

function randomLooking(secret: string, min = 3.0): boolean {
  return !isPlaceholder(secret) && entropy(secret) >= min;
}

// ---------------------------------------------------------------------------------------------------------
// The table. Order is priority: where two findings overlap, the earlier rule's is kept.

/**
 * A quote, with an optional backslash (source maps carry sources as JSON strings: `\"`) or escaped as
 * HTML-safe serializers write it (`\u0022`, `\u0027`).
 */
const Q = String.raw`(?:\\?["'\x60]|\\u00(?:22|27))`;

/**
 * What may come before a token: a non-word character (what `\b` says), or a character escaped for JSON, JS
 * or a URL (`\u0022`, `\x22`, `%22`: a quote as HTML-safe serializers and URL encoding write it), whose
 * last digit `\b` takes for part of the token.
 */
const TOKEN_BOUNDARY = String.raw`(?:^|[^A-Za-z0-9_]|\\u00[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2})`;

/**
 * A token that opens with `prefix` (literals, or a short alternation of them) at a TOKEN_BOUNDARY. The
 * lookbehind follows the prefix: a pattern that opens with a lookbehind is tried at every position of the
 * text, about 20 times slower than one the engine can find by its literal.
 */
function tokenPattern(prefix: string, rest: string): RegExp {
  return new RegExp(`(?:${prefix})(?<=${TOKEN_BOUNDARY}(?:${prefix}))${rest}`, 'g');
}

/** The secret parts of the deploy token and API key the OpenAPI examples show (src/api/tokens.ts, examples.ts). */
const SLIPWAY_DOC_EXAMPLES = new Set([
  '0123456789abcdef0123456789abcdef',
  '995ae26666e8074a088f08d2a5f7cf56',
]);

export const DETECTION_RULES: readonly DetectionRule[] = [
  {
    type: 'google_service_account_key',
    variableName: 'GOOGLE_SERVICE_ACCOUNT_KEY',
    proxyHosts: ['oauth2.googleapis.com'],
    prefixes: ['private_key'],
    pattern:
      /private_key\\?"\s*:\s*\\?"(?<secret>-----BEGIN PRIVATE KEY-----(?<body>[A-Za-z0-9+/=\s\\]{40,12000}?)-----END PRIVATE KEY-----)/g,
    check: (_s, ctx) =>
      pemBodyIsKey(ctx.groups.body ?? '') &&
      /service_account/.test(ctx.text.slice(Math.max(0, ctx.start - 4000), ctx.end + 4000)),
  },
  {
    type: 'private_key',
    variableName: 'PRIVATE_KEY',
    proxyHosts: [],
    // RSA, EC, DSA, OpenSSH, PKCS#8 (any algorithm, incl. Ed25519 and P-256), encrypted PKCS#8, PGP; line
    // breaks real or escaped (`\n`, `\\n` in source maps).
    prefixes: ['-----BEGIN '],
    pattern:
      /-----BEGIN (?<label>(?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----(?<body>(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\+[nr]){40,20000}?)-----END \k<label>-----/g,
    check: (_s, ctx) => pemBodyIsKey(ctx.groups.body ?? ''),
  },
  {
    type: 'aws_access_key_id',
    variableName: 'AWS_ACCESS_KEY_ID',
    proxyHosts: [],
    // Access key ids are base32 (A-Z, 2-7); AWS's documentation examples end in EXAMPLE (a placeholder).
    prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
    pattern: tokenPattern('AKIA|ASIA|ABIA|ACCA', String.raw`[A-Z2-7]{16}\b`),
    check: (s) => randomLooking(s.slice(4), 2.5),
  },
  {
    type: 'stripe_secret_key',
    variableName: 'STRIPE_SECRET_KEY',
    proxyHosts: ['api.stripe.com'],
    prefixes: ['sk_'],
    pattern: tokenPattern('sk_', String.raw`(?:live|test)_(?<secret>[0-9A-Za-z]{20,247})\b`),
    check: (s) => randomLooking(s),
  },
  {
    type: 'stripe_restricted_key',
    variableName: 'STRIPE_RESTRICTED_KEY',
    proxyHosts: ['api.stripe.com'],
    prefixes: ['rk_'],
    pattern: tokenPattern('rk_', String.raw`(?:live|test)_(?<secret>[0-9A-Za-z]{20,247})\b`),
    check: (s) => randomLooking(s),
  },
  // Slipway's own credentials: a deploy token baked into a CI build (an inlined env var, a config file in
  // the output folder) would let every visitor publish the site; an API key, act as its account. The
  // shapes of src/core/tokens.ts and signin.ts; the two examples of the API's own documentation are public.
  {
    type: 'slipway_deploy_token',
    variableName: 'SLIPWAY_TOKEN',
    proxyHosts: [],
    prefixes: ['svc_site_'],
    pattern: tokenPattern('svc_site_', '(?<secret>[0-9a-f]{32})(?![0-9A-Za-z_])'),
    check: (s) => randomLooking(s) && !SLIPWAY_DOC_EXAMPLES.has(s),
  },
  {
    type: 'slipway_api_key',
    variableName: 'SLIPWAY_API_KEY',
    proxyHosts: [],
    prefixes: ['svc_live_'],
    pattern: tokenPattern('svc_live_', '(?<secret>[0-9a-f]{32})(?![0-9A-Za-z_])'),
    check: (s) => randomLooking(s) && !SLIPWAY_DOC_EXAMPLES.has(s),
  },
  {
    type: 'stripe_webhook_secret',
    variableName: 'STRIPE_WEBHOOK_SECRET',
    proxyHosts: [],
    prefixes: ['whsec_'],
    pattern: tokenPattern('whsec_', '(?<secret>[0-9A-Za-z+/]{32,})'),
    check: (s) => randomLooking(s),
  },
  {
    type: 'anthropic_api_key',
    variableName: 'ANTHROPIC_API_KEY',
    proxyHosts: ['api.anthropic.com'],
    prefixes: ['sk-ant-'],
    pattern: tokenPattern(
      'sk-ant-',
      String.raw`(?:api|admin|sid)\d{2}-(?<secret>[A-Za-z0-9_-]{80,120})(?![A-Za-z0-9_-])`,
    ),
    check: (s) => randomLooking(s),
  },
  {
    type: 'openai_api_key',
    variableName: 'OPENAI_API_KEY',
    proxyHosts: ['api.openai.com'],
    prefixes: ['sk-'],
    pattern: tokenPattern(
      'sk-',
      '(?:(?:proj|svcacct|admin)-(?<secret>[A-Za-z0-9_-]{40,200})|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})(?![A-Za-z0-9_-])',
    ),
    check: (s, ctx) => randomLooking(ctx.groups.secret ?? s),
  },
  {
    type: 'github_token',
    variableName: 'GITHUB_TOKEN',
    proxyHosts: ['api.github.com'],
    prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    pattern: tokenPattern(
      'gh[pousr]_|github_pat_',
      String.raw`(?:[A-Za-z0-9]{36}|[A-Za-z0-9]{22}_[A-Za-z0-9]{59})\b`,
    ),
    check: (s) => randomLooking(s),
  },
  {
    type: 'gitlab_token',
    variableName: 'GITLAB_TOKEN',
    proxyHosts: ['gitlab.com'],
    prefixes: ['gl'],
    pattern: tokenPattern('gl[a-z]{2,5}-', '(?<secret>[A-Za-z0-9_-]{20,})(?![A-Za-z0-9_-])'),
    check: (s, ctx) => GITLAB_PREFIX_RE.test(ctx.text.slice(ctx.start, ctx.start + 8)) && randomLooking(s),
  },
  {
    type: 'slack_webhook_url',
    variableName: 'SLACK_WEBHOOK_URL',
    proxyHosts: ['hooks.slack.com'],
    prefixes: ['https://hooks.slack.com/'],
    pattern:
      /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_]+\/[A-Za-z0-9_]+\/(?<secret>[A-Za-z0-9_]{16,})/g,
    check: (s) => randomLooking(s, 2.5),
  },
  {
    type: 'slack_token',
    variableName: 'SLACK_TOKEN',
    proxyHosts: ['slack.com'],
    // Bot, user and legacy tokens (`xoxb-<digits>-<digits>-<secret>`) and app-level tokens
    // (`xapp-1-A0…-<digits>-<secret>`).
    prefixes: ['xox', 'xapp-'],
    pattern: tokenPattern(
      'xox[abeoprs]-|xapp-',
      String.raw`(?:[0-9A-Z]+-){1,3}(?<secret>[0-9A-Za-z]{16,})\b`,
    ),
    check: (s) => randomLooking(s),
  },
  {
    type: 'sendgrid_api_key',
    variableName: 'SENDGRID_API_KEY',
    proxyHosts: ['api.sendgrid.com'],
    prefixes: ['SG.'],
    pattern: tokenPattern(
      String.raw`SG\.`,
      String.raw`[A-Za-z0-9_-]{22}\.(?<secret>[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])`,
    ),
    check: (s) => randomLooking(s),
  },
  {
    type: 'twilio_api_key',
    variableName: 'TWILIO_API_KEY',
    proxyHosts: ['api.twilio.com'],
    prefixes: ['SK'],
    pattern: tokenPattern('SK', String.raw`(?<secret>[0-9a-f]{32})\b`),
    check: (s) => /[0-9]/.test(s) && /[a-f]/.test(s) && randomLooking(s),
  },
  {
    type: 'mailgun_api_key',
    variableName: 'MAILGUN_API_KEY',
    proxyHosts: ['api.mailgun.net'],
    prefixes: ['key-'],
    pattern: tokenPattern('key-', String.raw`(?<secret>[0-9a-f]{32})\b`),
    check: (s) => randomLooking(s),
  },
  {
    type: 'mailgun_api_key',
    variableName: 'MAILGUN_API_KEY',
    proxyHosts: ['api.mailgun.net'],
    // The current key format is only told apart from other hex by the Mailgun code around it.
    trigger: /mailgun/i,
    pattern: /\b[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}\b/g,
    check: (s) => randomLooking(s),
  },
  {
    type: 'npm_token',
    variableName: 'NPM_TOKEN',
    proxyHosts: ['registry.npmjs.org'],
    prefixes: ['npm_'],
    pattern: tokenPattern('npm_', String.raw`(?<secret>[A-Za-z0-9]{36})\b`),
    check: (s) => randomLooking(s),
  },
  {
    type: 'huggingface_token',
    variableName: 'HUGGINGFACE_TOKEN',
    proxyHosts: ['huggingface.co'],
    prefixes: ['hf_'],
    pattern: tokenPattern('hf_', String.raw`(?<secret>[A-Za-z]{34})\b`),
    check: (s) => randomLooking(s) && /[a-z]/.test(s) && /[A-Z]/.test(s),
  },
  {
    type: 'groq_api_key',
    variableName: 'GROQ_API_KEY',
    proxyHosts: ['api.groq.com'],
    prefixes: ['gsk_'],
    pattern: tokenPattern('gsk_', String.raw`(?<secret>[A-Za-z0-9]{52})\b`),
    check: (s) => randomLooking(s),
  },
  {
    type: 'shopify_access_token',
    variableName: 'SHOPIFY_ACCESS_TOKEN',
    proxyHosts: [],
    prefixes: ['shp'],
    pattern: tokenPattern('shp(?:at|ca|pa|ss)_', String.raw`(?<secret>[a-fA-F0-9]{32})\b`),
    check: (s) => randomLooking(s),
  },
  {
    type: 'discord_webhook_url',
    variableName: 'DISCORD_WEBHOOK_URL',
    proxyHosts: ['discord.com'],
    prefixes: ['https://discord', 'https://ptb.discord', 'https://canary.discord'],
    pattern:
      /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d{17,20}\/(?<secret>[A-Za-z0-9_-]{60,68})/g,
    check: (s) => randomLooking(s),
  },
  {
    type: 'discord_bot_token',
    variableName: 'DISCORD_BOT_TOKEN',
    proxyHosts: ['discord.com'],
    pattern: new RegExp(
      String.raw`(?<id>[MNO](?<=${TOKEN_BOUNDARY}[MNO])[A-Za-z0-9_-]{23,27})\.[A-Za-z0-9_-]{6}\.(?<secret>[A-Za-z0-9_-]{27,40})\b`,
      'g',
    ),
    // The first part is the bot's user id (a snowflake) in base64: that is what tells a token apart.
    check: (s, ctx) =>
      /^\d{17,20}$/.test(Buffer.from(ctx.groups.id ?? '', 'base64').toString('latin1')) && randomLooking(s),
  },
  {
    type: 'telegram_bot_token',
    variableName: 'TELEGRAM_BOT_TOKEN',
    proxyHosts: ['api.telegram.org'],
    // `<bot id>:AA<secret>`, also after `bot` in API URLs (`api.telegram.org/bot<token>/sendMessage`);
    // found by its `:AA`, the id checked by looking back.
    prefixes: [':AA'],
    pattern: new RegExp(
      String.raw`:(?<secret>AA(?<=(?:${TOKEN_BOUNDARY}|bot)\d{8,10}:AA)[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])`,
      'g',
    ),
    check: (s) => randomLooking(s),
  },
  {
    type: 'database_connection_string',
    variableName: 'DATABASE_URL',
    proxyHosts: [],
    // Anchored at `://` (fast); the scheme before it is checked by looking back.
    prefixes: ['://'],
    pattern: /:\/\/(?<user>[^:@\s/"'`\\]{1,100}):(?<secret>[^@\s"'`\\/]{1,200})@[^\s"'`\\]+/g,
    check: (s, ctx) =>
      DB_SCHEME_RE.test(ctx.text.slice(Math.max(0, ctx.start - 24), ctx.start)) &&
      !connectionPasswordIsPlaceholder(ctx.groups.user ?? '', s),
  },
  {
    type: 'supabase_service_role_key',
    variableName: 'SUPABASE_SERVICE_ROLE_KEY',
    proxyHosts: [],
    prefixes: ['eyJ'],
    pattern: tokenPattern('eyJ', String.raw`[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}`),
    check: (s) => {
      const payload = jwtPayload(s);
      if (payload?.role !== 'service_role') return false;
      const ref =
        typeof payload.ref === 'string' && /^[a-z0-9]{1,40}$/.test(payload.ref) ? payload.ref : null;
      return { proxyHosts: ref ? [`${ref}.supabase.co`] : [] };
    },
  },
  {
    type: 'mapbox_secret_token',
    variableName: 'MAPBOX_SECRET_TOKEN',
    proxyHosts: ['api.mapbox.com'],
    prefixes: ['sk.eyJ'],
    pattern: tokenPattern(String.raw`sk\.eyJ`, String.raw`[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`),
    check: (s) => randomLooking(s),
  },
  {
    type: 'generic_secret',
    variableName: 'API_TOKEN',
    proxyHosts: [],
    // `Authorization: "Bearer <token>"` in a fetch call.
    prefixes: ['Bearer', 'bearer'],
    pattern: /[Bb]earer\s+(?<secret>[A-Za-z0-9._~+/-]{16,400})=*\\?["'\x60]/g,
    check: (s, ctx) =>
      /["'\x60]$/.test(ctx.text.slice(Math.max(0, ctx.start - 2), ctx.start)) &&
      !isPublicValue(s) &&
      /[0-9]/.test(s) &&
      entropy(s) >= 3.5,
  },
  {
    type: 'generic_secret',
    variableName: 'SECRET',
    proxyHosts: [],
    // `apiKey: "..."`, `"client_secret": "..."`, `password = '...'`, `data-api-key="..."`, template literals,
    // escaped quotes of source maps, and unquoted `API_KEY=...` lines (.env-style text, YAML; also inside a
    // string, up to an escaped line break: such a file in a source map's sourcesContent). The full name is
    // recovered by walking back from the match (genericCheck).
    pattern: new RegExp(
      String.raw`(?<name>(?:${GENERIC_NAME_WORDS})[A-Za-z0-9_$-]{0,30})(?:\\?["']|\\u00(?:22|27))?[ \t]*(?:[:=]|=>)[ \t]*(?:${Q}(?<quoted>[^"'\x60\s\\<>{}]{12,300})${Q}|(?<bare>(?:[^\s"'\x60#,;(){}\\]|\\(?![\\nr])){12,300})(?:[ \t]*$|(?=\\+[nr])))`,
      'gim',
    ),
    check: genericCheck,
  },
];

// ---------------------------------------------------------------------------------------------------------
// @secretlint/secretlint-rule-preset-recommend findings, mapped onto the same types. `null` drops a
// message: an AWS account id is an identifier, not a secret.

const SECRETLINT_KINDS: Record<string, SecretKind | null> = {
  'aws:AWSAccountID': null,
  'aws:AWSAccessKeyID': { type: 'aws_access_key_id', variableName: 'AWS_ACCESS_KEY_ID', proxyHosts: [] },
  'aws:AWSSecretAccessKey': {
    type: 'aws_secret_access_key',
    variableName: 'AWS_SECRET_ACCESS_KEY',
    proxyHosts: [],
  },
  privatekey: { type: 'private_key', variableName: 'PRIVATE_KEY', proxyHosts: [] },
  npm: { type: 'npm_token', variableName: 'NPM_TOKEN', proxyHosts: ['registry.npmjs.org'] },
  basicauth: { type: 'url_credentials', variableName: 'URL_CREDENTIALS', proxyHosts: [] },
  'slack:IncomingWebhook': {
    type: 'slack_webhook_url',
    variableName: 'SLACK_WEBHOOK_URL',
    proxyHosts: ['hooks.slack.com'],
  },
  slack: { type: 'slack_token', variableName: 'SLACK_TOKEN', proxyHosts: ['slack.com'] },
  sendgrid: { type: 'sendgrid_api_key', variableName: 'SENDGRID_API_KEY', proxyHosts: ['api.sendgrid.com'] },
  shopify: { type: 'shopify_access_token', variableName: 'SHOPIFY_ACCESS_TOKEN', proxyHosts: [] },
  github: { type: 'github_token', variableName: 'GITHUB_TOKEN', proxyHosts: ['api.github.com'] },
  gitlab: { type: 'gitlab_token', variableName: 'GITLAB_TOKEN', proxyHosts: ['gitlab.com'] },
  grafana: { type: 'grafana_token', variableName: 'GRAFANA_TOKEN', proxyHosts: [] },
  openai: { type: 'openai_api_key', variableName: 'OPENAI_API_KEY', proxyHosts: ['api.openai.com'] },
  anthropic: {
    type: 'anthropic_api_key',
    variableName: 'ANTHROPIC_API_KEY',
    proxyHosts: ['api.anthropic.com'],
  },
  groq: { type: 'groq_api_key', variableName: 'GROQ_API_KEY', proxyHosts: ['api.groq.com'] },
  huggingface: {
    type: 'huggingface_token',
    variableName: 'HUGGINGFACE_TOKEN',
    proxyHosts: ['huggingface.co'],
  },
  linear: { type: 'linear_api_key', variableName: 'LINEAR_API_KEY', proxyHosts: ['api.linear.app'] },
  notion: { type: 'notion_token', variableName: 'NOTION_TOKEN', proxyHosts: ['api.notion.com'] },
  '1password': {
    type: 'onepassword_service_account_token',
    variableName: 'OP_SERVICE_ACCOUNT_TOKEN',
    proxyHosts: [],
  },
  'database-connection-string': {
    type: 'database_connection_string',
    variableName: 'DATABASE_URL',
    proxyHosts: [],
  },
  'hashicorp-vault': { type: 'vault_token', variableName: 'VAULT_TOKEN', proxyHosts: [] },
  vercel: { type: 'vercel_token', variableName: 'VERCEL_TOKEN', proxyHosts: ['api.vercel.com'] },
  databricks: { type: 'databricks_token', variableName: 'DATABRICKS_TOKEN', proxyHosts: [] },
  docker: { type: 'docker_token', variableName: 'DOCKER_TOKEN', proxyHosts: [] },
  figma: { type: 'figma_token', variableName: 'FIGMA_TOKEN', proxyHosts: ['api.figma.com'] },
};

const SECRETLINT_PREFIX = '@secretlint/secretlint-rule-';

/** The kind of a secretlint message, null to drop it (unknown rules get a type named after the rule). */
export function secretlintKind(ruleId: string, messageId: string | undefined): SecretKind | null {
  const rule = secretlintRuleName(ruleId);
  const byMessage = SECRETLINT_KINDS[`${rule}:${messageId}`];
  if (byMessage !== undefined) return byMessage;
  const byRule = SECRETLINT_KINDS[rule];
  if (byRule !== undefined) return byRule;
  const type = `${rule.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_secret`;
  return { type, variableName: type.toUpperCase(), proxyHosts: [] };
}

/**
 * The preset rules we run, each with what must occur in a text before it can match (literals from the
 * rule's own patterns): a rule whose trigger is absent is left out of that window's run. The preset's
 * other rules detect types the table above already covers, with its placeholder and public-value filters
 * and without the traps the issue lists; running them too doubled the scan time and found nothing more
 * (test/core/scan-rules.test.ts runs the whole preset over our fixtures to keep that true).
 * `filter-comments` is never run: a `secretlint-disable` comment in a site file must not hide a key.
 */
export const SECRETLINT_TRIGGERS: Record<string, RegExp | readonly string[]> = {
  basicauth: /:\/\/[-\w]{1,256}:[-\w]{1,256}@/,
  grafana: ['glc_', 'glsa_'],
  linear: ['lin_api_'],
  notion: ['ntn_'],
  '1password': ['ops_'],
  'hashicorp-vault': ['hvs.', 'hvb.', 'hvr.'],
  vercel: ['vcp_', 'vci_', 'vca_', 'vcr_', 'vck_'],
  databricks: ['dapi'],
  docker: ['dckr_pat_'],
  figma: ['figd_'],
};

const escapeRegExp = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const LITERAL_TRIGGERS = Object.values(SECRETLINT_TRIGGERS).flatMap((t) => (t instanceof RegExp ? [] : t));
/**
 * The literal triggers that end in `_` (most of them) as one regex that stops only at a `_` and looks back
 * for them. Looked up one by one, each literal was a pass over the window, about a fifth of the scan's time
 * in all; one alternation of them all was still a tenth (its branches start at common letters).
 */
const UNDERSCORE_TRIGGER_RE = new RegExp(
  `_(?<=(?:${LITERAL_TRIGGERS.filter((l) => l.endsWith('_'))
    .map((l) => escapeRegExp(l.slice(0, -1)))
    .join('|')})_)`,
);
const OTHER_LITERAL_TRIGGERS = LITERAL_TRIGGERS.filter((l) => !l.endsWith('_'));
const REGEX_TRIGGERS = Object.values(SECRETLINT_TRIGGERS).filter((t) => t instanceof RegExp);

/** Whether some preset rule's trigger occurs in `text` (nearly every window has none). */
export const anySecretlintTriggered = (text: string) =>
  UNDERSCORE_TRIGGER_RE.test(text) ||
  OTHER_LITERAL_TRIGGERS.some((literal) => text.includes(literal)) ||
  REGEX_TRIGGERS.some((trigger) => trigger.test(text));

/** Whether a preset rule's trigger occurs in `text`. */
export function secretlintTriggered(rule: string, text: string): boolean {
  const trigger = SECRETLINT_TRIGGERS[rule];
  if (trigger === undefined) return false;
  return trigger instanceof RegExp ? trigger.test(text) : trigger.some((literal) => text.includes(literal));
}

/** The preset rule's short name (`aws` for `@secretlint/secretlint-rule-aws`). */
export const secretlintRuleName = (ruleId: string) =>
  ruleId.startsWith(SECRETLINT_PREFIX) ? ruleId.slice(SECRETLINT_PREFIX.length) : ruleId;
