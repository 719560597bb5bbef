// Schemas shared by several resources.

import { Type } from 'typebox';

/** The spec's error body; extra fields (e.g. detectedSecrets) are allowed. */
export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    status: Type.Number(),
    hint: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableString = Type.Union([Type.String(), Type.Null()]);
export const SECURITY = [{ bearerAuth: [] }];
