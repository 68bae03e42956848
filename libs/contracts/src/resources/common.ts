import { type TSchema, Type } from '@sinclair/typebox';

/** A value or null (an empty optional field is `null`, never omitted: contract §4). */
export const Nullable = <S extends TSchema>(schema: S, options: { description?: string } = {}) =>
  Type.Union([schema, Type.Null()], options);

/** An ISO 8601 UTC timestamp with milliseconds, as every resource prints it. */
export const Instant = () => Type.String({ format: 'date-time' });

/** Stored `extra_fields`: a free-form object. */
export const StoredExtraFields = () => Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form key/value object' });

/** What a `*.deleted` event carries: the id, and the reference where the resource has one. */
export const DeletedRef = Type.Object({ id: Type.Integer(), reference: Type.Optional(Type.String()) }, { additionalProperties: false });
