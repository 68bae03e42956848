import { describe, expect, test } from 'bun:test';
import { attachExamples, exampleOf } from './examples.ts';
import { hoistNamedSchemas } from './named-schemas.ts';
import { hoistSharedParameters } from './shared-parameters.ts';

const contact = { title: 'Contact', type: 'object', required: ['id'], properties: { id: { type: 'integer' } }, examples: [{ id: 7 }] };

describe('hoistNamedSchemas', () => {
  test('moves every titled schema to components once and refers to it; reports a name described twice differently', () => {
    const root: Record<string, any> = {
      paths: {
        a: { schema: { type: 'object', title: 'ContactResponse', properties: { data: contact } } },
        b: { schema: { type: 'array', items: contact, examples: [{ title: 'data, not a schema' }] } },
        c: { schema: { title: 'Contact', type: 'string' } },
      },
    };
    const schemas: Record<string, any> = {};
    expect(hoistNamedSchemas(root, schemas)).toEqual(['Contact']);
    expect(root.paths.a.schema).toEqual({ $ref: '#/components/schemas/ContactResponse' });
    expect(root.paths.b.schema.items).toEqual({ $ref: '#/components/schemas/Contact' });
    expect(root.paths.b.schema.examples).toEqual([{ title: 'data, not a schema' }]);
    expect(schemas.ContactResponse.properties.data).toEqual({ $ref: '#/components/schemas/Contact' });
    expect(schemas.Contact.type).toBe('object');
  });
});

describe('examples', () => {
  const schemas = {
    Contact: contact,
    Page: {
      type: 'object',
      required: ['data', 'total'],
      properties: {
        data: { type: 'array', items: { $ref: '#/components/schemas/Contact' } },
        total: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] },
      },
    },
  };

  test('a schema without an example gets one composed from its parts', () => {
    expect(exampleOf({ $ref: '#/components/schemas/Page' }, schemas)).toEqual({ data: [{ id: 7 }], total: 0 });
    expect(exampleOf({ type: 'string', format: 'date' }, schemas)).toBe('2026-12-31');
  });

  test('named media types share one components.examples entry; the schemas keep no second copy', () => {
    const components: Record<string, any> = { schemas: structuredClone(schemas) };
    const media = () => ({ schema: { $ref: '#/components/schemas/Page' } });
    const item = {
      get: { responses: { 200: { content: { 'application/json': media() } } } },
      post: { requestBody: { content: { 'application/json': media() } }, responses: { 400: { content: { 'application/json': media() } } } },
    };
    attachExamples([item], components);
    expect(item.get.responses[200].content['application/json']).toMatchObject({
      examples: { Page: { $ref: '#/components/examples/Page' } },
    });
    expect(item.post.requestBody.content['application/json']).toMatchObject({ examples: { Page: { $ref: '#/components/examples/Page' } } });
    expect(item.post.responses[400].content['application/json']).toEqual(media());
    expect(components.examples).toEqual({ Page: { value: { data: [{ id: 7 }], total: 0 } } });
    expect(components.schemas.Contact.examples).toBeUndefined();
  });
});

describe('hoistSharedParameters', () => {
  test('a query parameter declared identically twice becomes a component; other variants and path parameters stay inline', () => {
    const perPage = { name: 'per_page', in: 'query', required: false, schema: { type: 'integer' } };
    const id = { name: 'id', in: 'path', required: true, schema: { type: 'integer' } };
    const item: Record<string, any> = {
      get: { parameters: [perPage, id] },
      put: { parameters: [{ ...perPage }, { ...id }] },
      post: { parameters: [{ ...perPage, description: 'another' }] },
    };
    const parameters: Record<string, any> = {};
    hoistSharedParameters([item], parameters);
    expect(Object.keys(parameters)).toEqual(['PerPage']);
    expect(item.get.parameters).toEqual([{ $ref: '#/components/parameters/PerPage' }, id]);
    expect(item.post.parameters[0]).toMatchObject({ description: 'another' });
  });
});
