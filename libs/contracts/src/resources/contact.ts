import { type Static, Type } from '@sinclair/typebox';
import { AccountUser } from '../internal.ts';
import { EXAMPLE_INSTANT, EXAMPLE_USER, Instant, Nullable, StoredExtraFields } from './common.ts';

const locationExample = {
  id: 1,
  primary: 1,
  direction: 'Calle Mayor 1',
  city: 'Madrid',
  postal: '28013',
  country: 'ES',
  latitude: '40.4168',
  longitude: '-3.7038',
  extra_info: null,
};

/** A contact's location as the API returns it. */
export const Location = Type.Object(
  {
    id: Type.Integer(),
    primary: Nullable(Type.Integer()),
    direction: Nullable(Type.String()),
    city: Nullable(Type.String()),
    postal: Nullable(Type.String()),
    country: Nullable(Type.String()),
    latitude: Nullable(Type.String()),
    longitude: Nullable(Type.String()),
    extra_info: Nullable(Type.String()),
  },
  { title: 'Location', examples: [locationExample] },
);
export type Location = Static<typeof Location>;

/** A contact as the API returns it (contract §11). */
export const Contact = Type.Object(
  {
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
  },
  {
    title: 'Contact',
    examples: [
      {
        id: 1,
        name: 'Acme Ltd',
        type: 'client',
        email: 'hello@acme.test',
        is_person: false,
        cif: 'B12345678',
        phone: '+34 910 000 000',
        web: 'https://acme.test',
        iban: null,
        comments: 'Key account since 2024',
        users: [EXAMPLE_USER],
        location: locationExample,
        extra_fields: { segment: 'enterprise' },
        created_at: EXAMPLE_INSTANT,
        updated_at: EXAMPLE_INSTANT,
      },
    ],
  },
);
export type Contact = Static<typeof Contact>;
