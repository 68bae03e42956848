import { ExistingOpportunity } from '@crm/contracts';
import { pageRequest } from '@crm/db';
import { Deleted, IdParams, isPlainObject, jsonBody, listQuery, notFound, type RuleCheck, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import {
  OpportunityBatch,
  OpportunityBatchResponse,
  OpportunityCreate,
  OpportunityListQuery,
  OpportunityListResponse,
  OpportunityResponse,
  OpportunityUpdate,
} from './model.ts';
import { opportunityExists } from './repo.ts';
import { opportunityRuleErrors } from './rules.ts';
import { createOpportunities, deleteOpportunity, getOpportunity, listOpportunities, updateOpportunity } from './service.ts';

const SORTABLE = ['id', 'name', 'created_at', 'updated_at'] as const;
const TAGS = ['Opportunities'];

/** Opportunities (contract §12): public CRUD, list and batch, and the internal existence check. */
export function opportunitiesRoutes(db: Kysely<SalesDatabase>) {
  const singleRules: RuleCheck = async (body, { tenantId }) => (await opportunityRuleErrors(db, tenantId, [{ body, prefix: '' }])).details;
  const batchRules: RuleCheck = async (body, { tenantId }) => {
    const items = isPlainObject(body) && Array.isArray(body.data) ? body.data : [];
    return (
      await opportunityRuleErrors(
        db,
        tenantId,
        items.map((item, i) => ({ body: item, prefix: `data[${i}].` })),
      )
    ).details;
  };
  const update = {
    params: IdParams,
    ...jsonBody(OpportunityUpdate, singleRules),
    response: { 200: OpportunityResponse },
    detail: {
      summary: 'Update an opportunity',
      tags: TAGS,
      description: 'Partial update: omitted fields are kept, `null` clears a nullable field. PUT and PATCH behave the same.',
    },
  };

  return new Elysia({ name: 'sales-opportunities' })
    .use(requestContext)
    .post(
      '/v1/opportunities',
      async ({ body, tenantId, set }) => {
        const [opportunity] = await createOpportunities(db, tenantId, [body], () => '');
        set.status = 201;
        return { data: opportunity as NonNullable<typeof opportunity> };
      },
      {
        ...jsonBody(OpportunityCreate, singleRules),
        response: { 201: OpportunityResponse },
        detail: {
          summary: 'Create an opportunity',
          tags: TAGS,
          description: '`enterprise_identifier` designates a contact by id, name, e-mail or CIF; `user_email` an account user.',
        },
      },
    )
    .get(
      '/v1/opportunities',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors);
        const { enterprise_id, status, q } = query;
        return listOpportunities(db, tenantId, { enterprise_id, status, q }, request);
      },
      {
        ...listQuery(OpportunityListQuery, SORTABLE),
        response: { 200: OpportunityListResponse },
        detail: {
          summary: 'List opportunities',
          tags: TAGS,
          description:
            'Filters: `enterprise_id`, `status`, `q` (substring of the name), `updated_since`; `sort` on id, name, created_at, updated_at.',
        },
      },
    )
    .post(
      '/v1/opportunities/batch',
      async ({ body, tenantId, set }) => {
        const data = await createOpportunities(db, tenantId, body.data, (i) => `data[${i}].`);
        set.status = 201;
        return { data };
      },
      {
        ...jsonBody(OpportunityBatch, batchRules),
        response: { 201: OpportunityBatchResponse },
        detail: { summary: 'Create up to 100 opportunities', tags: TAGS, description: 'All or nothing, errors as `data[i].field`.' },
      },
    )
    .get('/v1/opportunities/:id', async ({ params, tenantId }) => ({ data: await getOpportunity(db, tenantId, params.id) }), {
      params: IdParams,
      response: { 200: OpportunityResponse },
      detail: { summary: 'Get an opportunity', tags: TAGS },
    })
    .put(
      '/v1/opportunities/:id',
      async ({ params, body, tenantId }) => ({ data: await updateOpportunity(db, tenantId, params.id, body) }),
      update,
    )
    .patch(
      '/v1/opportunities/:id',
      async ({ params, body, tenantId }) => ({ data: await updateOpportunity(db, tenantId, params.id, body) }),
      update,
    )
    .delete(
      '/v1/opportunities/:id',
      async ({ params, tenantId }) => {
        await deleteOpportunity(db, tenantId, params.id);
        return { deleted: true };
      },
      {
        params: IdParams,
        response: { 200: Deleted },
        detail: { summary: 'Delete an opportunity', tags: TAGS, description: 'Its documents stay; they are detached.' },
      },
    )
    .get(
      '/internal/opportunities/:id',
      async ({ params: { id }, tenantId }) => {
        if (!(await opportunityExists(db, tenantId, id))) throw notFound('Opportunity');
        return { data: { id } };
      },
      { params: IdParams, response: { 200: ExistingOpportunity } },
    );
}
