// The handle (spec "Handle"; Hobby only): GET/PUT/DELETE /api/v1/handle.

import { type Static, Type } from 'typebox';
import { HANDLE_MAX_CHARS, HANDLE_MIN_CHARS, HANDLE_PATTERN } from '../core/handle.js';
import { ERRORS, errorExample, NullableString, operation, SECURITY } from './common.js';
import { unauthorized } from './examples.js';

export const HandleBody = Type.Object({
  handle: Type.String({
    minLength: HANDLE_MIN_CHARS,
    maxLength: HANDLE_MAX_CHARS,
    pattern: HANDLE_PATTERN.source,
    description: `${HANDLE_MIN_CHARS} to ${HANDLE_MAX_CHARS} lowercase letters, digits and hyphens, not starting or ending with a hyphen; no "--"; not a reserved name`,
  }),
});
export type HandleBody = Static<typeof HandleBody>;

export const HandleInfo = Type.Object({ handle: NullableString, url: NullableString });
export type HandleInfo = Static<typeof HandleInfo>;
export const HandleSet = Type.Object({ handle: Type.String(), url: Type.String(), message: Type.String() });
export type HandleSet = Static<typeof HandleSet>;
export const HandleReleased = Type.Object({ deleted: Type.Literal(true), message: Type.String() });
export type HandleReleased = Static<typeof HandleReleased>;

export const getHandle = operation({
  method: 'GET',
  url: '/api/v1/handle',
  schema: {
    tags: ['handle'],
    summary: 'Your handle and its URL (both null if none)',
    security: SECURITY,
    response: { 200: HandleInfo, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: { 200: { handle: 'ada', url: `${c.scheme}://ada.${c.siteDomain}/` } },
        error: unauthorized,
      }),
    },
  },
});

export const putHandle = operation({
  method: 'PUT',
  url: '/api/v1/handle',
  schema: {
    tags: ['handle'],
    summary: `Claim a handle (Hobby): ${HANDLE_MIN_CHARS}-${HANDLE_MAX_CHARS} of a-z 0-9 -, not reserved or taken; the old one is released`,
    security: SECURITY,
    body: HandleBody,
    response: { 200: HandleSet, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        request: { handle: 'ada' },
        responses: {
          200: {
            handle: 'ada',
            url: `${c.scheme}://ada.${c.siteDomain}/`,
            message: 'Your handle is ada: link sites to it with POST /api/v1/links.',
          },
        },
        error: errorExample(
          'PLAN_LIMIT',
          403,
          'Handles are part of the Hobby plan.',
          'Upgrade with POST /api/billing/checkout.',
        ),
      }),
    },
  },
});

export const deleteHandle = operation({
  method: 'DELETE',
  url: '/api/v1/handle',
  schema: {
    tags: ['handle'],
    summary: 'Release your handle and remove its links',
    security: SECURITY,
    response: { 200: HandleReleased, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { deleted: true, message: 'The handle ada was released and its links removed.' } },
        error: errorExample('NOT_FOUND', 404, 'This account has no handle.'),
      }),
    },
  },
});
