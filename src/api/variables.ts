// Site variables (spec "Site variables"): GET/PUT /api/v1/publish/:slug/variables, DELETE
// .../variables/:name. Values go in, never out.

import { type Static, Type } from 'typebox';
import {
  MAX_VARIABLE_NAME_CHARS,
  MAX_VARIABLE_VALUE_BYTES,
  MAX_VARIABLES_PER_SITE,
  VARIABLE_NAME_PATTERN,
} from '../core/variables.js';
import { ERRORS, errorExample, operation, SECURITY, Slug, SlugParams, Timestamp } from './common.js';
import { at, siteMissing, slug } from './examples.js';

export const VariableName = Type.String({
  title: 'variable name',
  pattern: VARIABLE_NAME_PATTERN.source,
  maxLength: MAX_VARIABLE_NAME_CHARS,
  description: `a letter, then letters, digits and underscores; at most ${MAX_VARIABLE_NAME_CHARS} characters`,
});

/** PUT's body: name -> secret value; the names not given are kept. */
export const VariablesBody = Type.Record(
  Type.String(),
  Type.String({
    minLength: 1,
    // A bound on characters that the byte bound implies; core counts the UTF-8 bytes.
    maxLength: MAX_VARIABLE_VALUE_BYTES,
    description: `the secret: 1 to ${MAX_VARIABLE_VALUE_BYTES} bytes of UTF-8`,
  }),
  {
    propertyNames: VariableName,
    minProperties: 1,
    maxProperties: MAX_VARIABLES_PER_SITE,
    description: `Variable name -> secret value. At most ${MAX_VARIABLES_PER_SITE} per site; values are never returned.`,
  },
);
export type VariablesBody = Static<typeof VariablesBody>;

export const VariableInfo = Type.Object({ name: Type.String(), createdAt: Timestamp, updatedAt: Timestamp });
export type VariableInfo = Static<typeof VariableInfo>;
export const VariableList = Type.Object({ variables: Type.Array(VariableInfo) });
export type VariableList = Static<typeof VariableList>;

/** PUT's answer for variables and proxy hosts alike: what was stored. */
export const Stored = Type.Object({ ok: Type.Literal(true), stored: Type.Array(Type.String()) });
export type Stored = Static<typeof Stored>;
export const Removed = Type.Object({ ok: Type.Literal(true), deleted: Type.String() });
export type Removed = Static<typeof Removed>;

export const listVariables = operation({
  method: 'GET',
  url: '/api/v1/publish/:slug/variables',
  schema: {
    tags: ['variables'],
    summary: "The site's variable names (values are never returned)",
    security: SECURITY,
    params: SlugParams,
    response: { 200: VariableList, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { variables: [{ name: 'OPENAI_API_KEY', createdAt: at, updatedAt: at }] } },
        error: siteMissing,
      }),
    },
  },
});

export const putVariables = operation({
  method: 'PUT',
  url: '/api/v1/publish/:slug/variables',
  schema: {
    tags: ['variables'],
    summary: 'Store secrets as encrypted variables: {"NAME": "value", ...}; other names are kept',
    security: SECURITY,
    params: SlugParams,
    body: VariablesBody,
    response: { 200: Stored, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        request: { OPENAI_API_KEY: 'sk-proj-…' },
        responses: { 200: { ok: true, stored: ['OPENAI_API_KEY'] } },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'Invalid request: variable name "1KEY" is not valid: a letter, then letters, digits and underscores; at most 64 characters.',
          'See /api/openapi.json for the expected shape.',
        ),
      }),
    },
  },
});

export const deleteVariable = operation({
  method: 'DELETE',
  url: '/api/v1/publish/:slug/variables/:name',
  schema: {
    tags: ['variables'],
    summary: 'Delete one variable',
    security: SECURITY,
    params: Type.Object({ slug: Slug, name: Type.String({ maxLength: 200 }) }),
    response: { 200: Removed, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { ok: true, deleted: 'OPENAI_API_KEY' } },
        error: errorExample('NOT_FOUND', 404, `Site "${slug}" has no variable "OPENAI_API_KEY".`),
      }),
    },
  },
});
