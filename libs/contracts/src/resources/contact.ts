import { type Static, Type } from '@sinclair/typebox';
import { AccountUser } from '../internal.ts';
import { Instant, Nullable, StoredExtraFields } from './common.ts';

/** A contact's location as the API returns it. */
export const Location = Type.Object({
  id: Type.Integer(),
  primary: Nullable(Type.Integer()),
  direction: Nullable(Type.String()),
  city: Nullable(Type.String()),
  postal: Nullable(Type.String()),
  country: Nullable(Type.String()),
  latitude: Nullable(Type.String()),
  longitude: Nullable(Type.String()),
  extra_info: Nullable(Type.String()),
});
export type Location = Static<typeof Location>;

/** A contact as the API returns it (contract §11). */
export const Contact = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  type: Type.String({ description: 'Contact type reference' }),
  email: Nullable(Type.String()),
  is_person: Nullable(Type.Boolean()),
  cif: Nullable(Type.String({ description: 'Tax identifier' })),
  phone: Nullable(Type.String()),
  web: Nullable(Type.String()),
  iban: Nullable(Type.String()),
  comments: Nullable(Type.String()),
  users: Type.Array(AccountUser),
  location: Nullable(Location),
  extra_fields: Nullable(StoredExtraFields()),
  created_at: Instant(),
  updated_at: Instant(),
});
export type Contact = Static<typeof Contact>;
