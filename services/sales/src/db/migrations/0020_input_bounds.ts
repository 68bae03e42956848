import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * The bounds of contract §19 for users, contact types, contacts, locations and opportunities,
 * enforced by the database too, so that a bug in the code cannot store what an API answer could
 * not carry back. Rows that break a bound today are repaired first (see the service README):
 * an optional value out of bounds becomes null, an over-long text is cut to its limit, a
 * required value falls back to its default, and a row no value can repair is deleted.
 * Lengths are `char_length` (code points), never stricter than the API's (UTF-16 units).
 */
export const m0020InputBounds: Migration = {
  name: '0020_input_bounds',
  async up(db) {
    // users: written by the admin API (e-mail and name ≤ 255). An e-mail beyond it names no one a
    // client can send (cutting it would make another address), so such a user is deleted.
    await sql`delete from users where char_length(email) not between 1 and 255`.execute(db);
    await sql`update users set name = email where char_length(name) = 0`.execute(db);
    await sql`update users set name = left(name, 255) where char_length(name) > 255`.execute(db);
    await sql`alter table users
      add constraint users_email_length check (char_length(email) between 1 and 255),
      add constraint users_name_length check (char_length(name) between 1 and 255)`.execute(db);

    // contact_types: a reference a client cannot send can be dropped (contacts keep their text).
    await sql`delete from contact_types where char_length(reference) not between 1 and 255`.execute(db);
    await sql`update contact_types set name = left(coalesce(nullif(name, ''), reference), 255)
      where char_length(name) not between 1 and 255`.execute(db);
    await sql`alter table contact_types
      add constraint contact_types_reference_length check (char_length(reference) between 1 and 255),
      add constraint contact_types_name_length check (char_length(name) between 1 and 255)`.execute(db);

    // A repaired contact or opportunity gets a new updated_at, so clients syncing with updated_since see it.
    await sql`update contacts set name = 'Contact ' || id, updated_at = now() where char_length(name) = 0`.execute(db);
    await sql`update contacts set type = 'client', updated_at = now() where char_length(type) = 0`.execute(db);
    await sql`update contacts set
      updated_at = now(),
      name = left(name, 255), type = left(type, 255),
      email = case when char_length(email) > 255 then null else email end,
      cif = left(cif, 255), phone = left(phone, 255), web = left(web, 255), iban = left(iban, 255),
      comments = left(comments, 65535),
      extra_fields = case when jsonb_typeof(extra_fields) = 'object' and octet_length(extra_fields::text) <= 1048576
        then extra_fields end
      where char_length(name) > 255 or char_length(type) > 255 or char_length(email) > 255 or char_length(cif) > 255
        or char_length(phone) > 255 or char_length(web) > 255 or char_length(iban) > 255 or char_length(comments) > 65535
        or jsonb_typeof(extra_fields) <> 'object' or octet_length(extra_fields::text) > 1048576`.execute(db);
    // extra_fields: an object (contract §17). The API's 16 KB is measured on compact JSON, which
    // jsonb's text form can exceed many times (numbers are printed in full: 1e300 → 301 digits);
    // 1 MB, the body limit, is an outer bound that never refuses what the API accepts.
    await sql`alter table contacts
      add constraint contacts_name_length check (char_length(name) between 1 and 255),
      add constraint contacts_type_length check (char_length(type) between 1 and 255),
      add constraint contacts_email_length check (char_length(email) <= 255),
      add constraint contacts_cif_length check (char_length(cif) <= 255),
      add constraint contacts_phone_length check (char_length(phone) <= 255),
      add constraint contacts_web_length check (char_length(web) <= 255),
      add constraint contacts_iban_length check (char_length(iban) <= 255),
      add constraint contacts_comments_length check (char_length(comments) <= 65535),
      add constraint contacts_extra_fields_object check (
        jsonb_typeof(extra_fields) = 'object' and octet_length(extra_fields::text) <= 1048576)`.execute(db);

    // contact_locations: `primary` took any integer before; a negative one has no meaning → null.
    const badLocation = sql`"primary" < 0 or char_length(direction) > 255 or char_length(city) > 255 or char_length(postal) > 255
      or char_length(country) > 255 or char_length(latitude) > 255 or char_length(longitude) > 255
      or char_length(extra_info) > 65535`;
    await sql`update contacts set updated_at = now()
      where id in (select contact_id from contact_locations where ${badLocation})`.execute(db);
    await sql`update contact_locations set
      "primary" = case when "primary" < 0 then null else "primary" end,
      direction = left(direction, 255), city = left(city, 255), postal = left(postal, 255),
      country = left(country, 255), latitude = left(latitude, 255), longitude = left(longitude, 255),
      extra_info = left(extra_info, 65535)
      where ${badLocation}`.execute(db);
    await sql`alter table contact_locations
      add constraint contact_locations_primary_range check ("primary" >= 0),
      add constraint contact_locations_direction_length check (char_length(direction) <= 255),
      add constraint contact_locations_city_length check (char_length(city) <= 255),
      add constraint contact_locations_postal_length check (char_length(postal) <= 255),
      add constraint contact_locations_country_length check (char_length(country) <= 255),
      add constraint contact_locations_latitude_length check (char_length(latitude) <= 255),
      add constraint contact_locations_longitude_length check (char_length(longitude) <= 255),
      add constraint contact_locations_extra_info_length check (char_length(extra_info) <= 65535)`.execute(db);

    await sql`update contact_users set position = 0 where position < 0`.execute(db);
    await sql`alter table contact_users add constraint contact_users_position_range check (position >= 0)`.execute(db);

    // opportunities: an enterprise_id outside 1..2147483647 names no contact and has no default → the row goes.
    await sql`delete from opportunities where enterprise_id < 1`.execute(db);
    await sql`update opportunities set name = 'Opportunity ' || id, updated_at = now() where char_length(name) = 0`.execute(db);
    await sql`update opportunities set
      updated_at = now(),
      name = left(name, 255),
      user_id = case when user_id < 1 then null else user_id end,
      amount = greatest(amount, 0),
      currency = case when currency ~ '^[A-Z]{3}$' then currency else 'EUR' end,
      status = case when status in ('open', 'won', 'lost') then status else 'open' end,
      probability = least(greatest(probability, 0), 100),
      close_date = case when close_date between date '0001-01-01' and date '9999-12-31' then close_date end,
      comments = left(comments, 65535),
      extra_fields = case when jsonb_typeof(extra_fields) = 'object' and octet_length(extra_fields::text) <= 1048576
        then extra_fields end
      where char_length(name) > 255 or user_id < 1 or amount < 0 or currency !~ '^[A-Z]{3}$'
        or status not in ('open', 'won', 'lost') or probability not between 0 and 100
        or close_date not between date '0001-01-01' and date '9999-12-31' or char_length(comments) > 65535
        or jsonb_typeof(extra_fields) <> 'object' or octet_length(extra_fields::text) > 1048576`.execute(db);
    await sql`alter table opportunities
      add constraint opportunities_name_length check (char_length(name) between 1 and 255),
      add constraint opportunities_enterprise_id_range check (enterprise_id >= 1),
      add constraint opportunities_user_id_range check (user_id >= 1),
      add constraint opportunities_amount_range check (amount between 0 and 999999999999.99),
      add constraint opportunities_currency_format check (currency ~ '^[A-Z]{3}$'),
      add constraint opportunities_status_known check (status in ('open', 'won', 'lost')),
      add constraint opportunities_probability_range check (probability between 0 and 100),
      add constraint opportunities_close_date_range check (close_date between date '0001-01-01' and date '9999-12-31'),
      add constraint opportunities_comments_length check (char_length(comments) <= 65535),
      add constraint opportunities_extra_fields_object check (
        jsonb_typeof(extra_fields) = 'object' and octet_length(extra_fields::text) <= 1048576)`.execute(db);
  },
};
