import { type TSchema, Type } from '@sinclair/typebox';

/** A value or null (an empty optional field is `null`, never omitted: contract §4). */
export const Nullable = <S extends TSchema>(schema: S, options: { description?: string } = {}) =>
  Type.Union([schema, Type.Null()], options);

/** An ISO 8601 UTC timestamp with milliseconds, as every resource prints it. */
export const Instant = () => Type.String({ format: 'date-time' });

/** Stored `extra_fields`: a free-form object. */
export const StoredExtraFields = () => Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form key/value object' });

/** What a `*.deleted` event carries: the id, and the reference where the resource has one. */
export const DeletedRef = Type.Object(
  { id: Type.Integer(), reference: Type.Optional(Type.String()) },
  { additionalProperties: false, title: 'DeletedRef', examples: [{ id: 1, reference: 'ORD-2027-0001' }] },
);

// Examples (`examples[0]` of a titled schema) tell one story: the contact Acme Ltd, its renewal
// opportunity, the product WIDGET-1 of the category hardware, the order ORD-2027-0001 and a signed
// contract, owned by the demo account's user demo@example.com (what `npm start` creates).

/** The instant every example resource was created and updated at. */
export const EXAMPLE_INSTANT = '2026-11-20T09:30:00.000Z';
/** The demo account's user (`npm start`), which examples name in `users` and `user_email`. */
export const EXAMPLE_USER = { id: 1, name: 'Demo User', email: 'demo@example.com' };
