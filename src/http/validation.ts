// How a request that does not fit its route's schema (src/api/) is refused: one sentence naming the field
// as the API spells it (`files[0].path`, `hosts[1]`, a variable's name) and what is wrong with it, in the
// words of the field's own `description` where the rule is a pattern. Ajv stops at the first fault
// (allErrors is off), so that fault is the one told.
// Values are never quoted back, only described (a string of 65 characters): a body may hold secrets
// (variables, a password, a proxy call's headers) and refusals are logged. Names (object keys) are shown.

import type { FastifyError, FastifyRequest } from 'fastify';

/** The fields of an Ajv error this reads. */
interface SchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  /** Set by Ajv when a `propertyNames` rule refused an object's key. */
  propertyName?: string;
}

type Node = Record<string, unknown>;
type Part = 'body' | 'querystring' | 'params' | 'headers';

/** What the sentence calls the whole of a request part, and where the request keeps it. */
const PARTS: Record<Part, { name: string; field: 'body' | 'query' | 'params' | 'headers' }> = {
  body: { name: 'the body', field: 'body' },
  querystring: { name: 'the query string', field: 'query' },
  params: { name: 'the path', field: 'params' },
  headers: { name: 'the headers', field: 'headers' },
};

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_WORDS: Record<string, string> = { 'date-time': 'an RFC 3339 date-time', uri: 'an absolute URI' };

/** What the sentence needs: whom it is about, the schema node that refused, the value it refused. */
interface Fault {
  subject: string;
  node: Node;
  params: Record<string, unknown>;
  value: unknown;
  /** The label of a field of the value (for `required`). */
  field: (name: string) => string;
}

const MAX_NAME_SHOWN = 64;
const shownName = (name: string) =>
  JSON.stringify(name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name);

/** A value described, never quoted (it may be a secret). */
function described(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') {
    const length = [...value].length;
    return length === 0 ? 'an empty string' : `a string of ${length} character${length === 1 ? '' : 's'}`;
  }
  if (Array.isArray(value)) return 'an array';
  if (value !== null && typeof value === 'object') return 'an object';
  return String(value);
}

const limit = (f: Fault) => Number(f.params.limit);
/** "3 to 30", "at least 3", "at most 30" from a node's bounds. */
function range(node: Node, min: string, max: string): string {
  const lo = node[min] as number | undefined;
  const hi = node[max] as number | undefined;
  if (lo !== undefined && hi !== undefined) return `${lo} to ${hi}`;
  return lo !== undefined ? `at least ${lo}` : `at most ${hi}`;
}
const lengthOf = (value: unknown) => (typeof value === 'string' ? [...value].length : 0);
const sizeOf = (value: unknown) =>
  Array.isArray(value)
    ? value.length
    : value !== null && typeof value === 'object'
      ? Object.keys(value).length
      : 0;

/** A length or a count outside its bounds; `units` is plural (`characters`, `entries`). */
function bounded(f: Fault, min: string, max: string, units: string, size: number): string {
  if (f.node[min] === 1 && f.node[max] === undefined && size === 0) return `${f.subject} must not be empty`;
  return `${f.subject} must have ${range(f.node, min, max)} ${units}; it has ${size}`;
}

function typeWords(type: unknown): string {
  return String(type)
    .split(',')
    .map((t) => TYPE_WORDS[t] ?? t)
    .join(' or ');
}

/** The branches of a union, told as the values they take (types or constants), or null if neither. */
function unionWords(node: Node): string | null {
  const branches = (node.anyOf ?? []) as Node[];
  if (branches.every((b) => 'const' in b))
    return `one of ${branches.map((b) => JSON.stringify(b.const)).join(', ')}`;
  if (branches.every((b) => typeof b.type === 'string'))
    return branches.map((b) => typeWords(b.type)).join(' or ');
  return null;
}

/** One sentence per kind of fault (the schema keyword that refused). */
const SENTENCES: Record<string, (f: Fault) => string> = {
  required: (f) => {
    const name = String(f.params.missingProperty);
    const description = ((f.node.properties as Record<string, Node> | undefined)?.[name]?.description ??
      '') as string;
    return `${f.field(name)} is required${description ? `: ${description}` : ''}`;
  },
  type: (f) => `${f.subject}: ${typeWords(f.params.type)} is required; got ${described(f.value)}`,
  anyOf: (f) =>
    `${f.subject}: ${unionWords(f.node) ?? 'another shape'} is required; got ${described(f.value)}`,
  const: (f) => `${f.subject} must be ${JSON.stringify(f.params.allowedValue)}; got ${described(f.value)}`,
  enum: (f) =>
    `${f.subject} must be one of ${(f.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
  minLength: (f) => bounded(f, 'minLength', 'maxLength', 'characters', lengthOf(f.value)),
  maxLength: (f) => bounded(f, 'minLength', 'maxLength', 'characters', lengthOf(f.value)),
  minItems: (f) => bounded(f, 'minItems', 'maxItems', 'entries', sizeOf(f.value)),
  maxItems: (f) => bounded(f, 'minItems', 'maxItems', 'entries', sizeOf(f.value)),
  minProperties: (f) => bounded(f, 'minProperties', 'maxProperties', 'entries', sizeOf(f.value)),
  maxProperties: (f) => bounded(f, 'minProperties', 'maxProperties', 'entries', sizeOf(f.value)),
  pattern: (f) =>
    `${f.subject} is not valid${f.node.description ? `: ${f.node.description}` : ` (it must match ${f.params.pattern})`}`,
  format: (f) =>
    `${f.subject} must be ${FORMAT_WORDS[String(f.params.format)] ?? `in the ${f.params.format} format`}`,
  minimum: (f) => `${f.subject} must be at least ${limit(f)}; got ${described(f.value)}`,
  maximum: (f) => `${f.subject} must be at most ${limit(f)}; got ${described(f.value)}`,
  exclusiveMinimum: (f) => `${f.subject} must be more than ${limit(f)}; got ${described(f.value)}`,
  exclusiveMaximum: (f) => `${f.subject} must be less than ${limit(f)}; got ${described(f.value)}`,
  additionalProperties: (f) =>
    `${f.subject} has a field it does not take: ${shownName(String(f.params.additionalProperty))}`,
};

/** A JSON pointer's segments (Ajv percent-encodes schema paths and escapes `~` and `/` in both). */
const segments = (pointer: string) =>
  pointer
    .replace(/^#/, '')
    .split('/')
    .slice(1)
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));

function walk(root: unknown, path: string[]): unknown {
  let at = root;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** `files[0].path`, `headers["x-a"]`, `NUMBER_VALUE`: a field as the API's messages spell it. */
function label(path: string[]): string {
  return path
    .map((key, i) => {
      if (/^\d+$/.test(key)) return `[${key}]`;
      if (/^[A-Za-z_$][\w$]*$/.test(key)) return i === 0 ? key : `.${key}`;
      return i === 0 ? shownName(key) : `[${shownName(key)}]`;
    })
    .join('');
}

/** The JSON type of a value, as a schema's `type` names it. */
const jsonType = (value: unknown) =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'number'
        ? 'number'
        : typeof value;

/**
 * The error to tell. Ajv lists a union's branch errors before the union's own: when the value has the
 * type of one branch, that branch's fault is the one (a string too long); otherwise the union's (none of
 * its types).
 */
function chosen(
  errors: SchemaError[],
  union: (e: SchemaError) => Node,
  valueAt: (e: SchemaError) => unknown,
) {
  const first = errors[0]!;
  const anyOf = errors.find((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath);
  if (!anyOf) return first;
  const branches = (union(anyOf).anyOf ?? []) as Node[];
  const type = jsonType(valueAt(anyOf));
  const branch = branches.findIndex((b) => b.type === type || (b.type === 'integer' && type === 'number'));
  const inBranch = errors.find((e) => e.schemaPath.startsWith(`${anyOf.schemaPath}/${branch}/`));
  return branch >= 0 && inBranch ? inBranch : anyOf;
}

/** The sentence for a failed validation of `req` (without the "Invalid request:" in front). */
export function validationMessage(err: FastifyError, req: FastifyRequest): string {
  const errors = (err.validation ?? []) as unknown as SchemaError[];
  const part = PARTS[(err.validationContext ?? 'body') as Part] ?? PARTS.body;
  if (errors.length === 0) return err.message;
  const routeSchema = req.routeOptions.schema as Record<string, unknown> | undefined;
  const rootSchema = routeSchema?.[(err.validationContext ?? 'body') as string];
  const nodeOf = (e: SchemaError) => (walk(rootSchema, segments(e.schemaPath).slice(0, -1)) ?? {}) as Node;
  const data = req[part.field];
  const e = chosen(errors, nodeOf, (x) => walk(data, segments(x.instancePath)));
  const node = nodeOf(e);
  const path = segments(e.instancePath);
  const named = e.propertyName !== undefined;
  const fault: Fault = {
    subject: named
      ? `${(node.title as string | undefined) ?? 'the name'} ${shownName(e.propertyName!)}`
      : path.length === 0
        ? part.name
        : label(path),
    node,
    params: e.params,
    value: named ? e.propertyName : walk(data, path),
    field: (name) => label([...path, name]),
  };
  const sentence = SENTENCES[e.keyword];
  return sentence ? sentence(fault) : `${fault.subject} ${e.message ?? 'is not valid'}`;
}
