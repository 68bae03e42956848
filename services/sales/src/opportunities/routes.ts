import { ExistingOpportunity } from '@crm/contracts';
import { pageRequest } from '@crm/db';
import { notFound, requestContext, validationError } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import { DeletedResponse } from '../contacts/model.ts';
import { checkListQuery, isPlainObject, validateBodyWithRules } from '../contacts/validation.ts';
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
import {
  createOpportunities,
  deleteOpportunity,
  getOpportunity,
  listOpportunities,
  opportunityIdOf,
  updateOpportunity,
} from './service.ts';

const SORTABLE = ['id', 'name', 'created_at', 'updated_at'] as const;
const TAGS = ['Opportunities'];
const IdParams = t.Object({ id: t.String({ description: 'Opportunity id' }) });

/** Opportunities (contract §12): public CRUD, list and batch, and the internal existence check. */
export function opportunitiesRoutes(db: Kysely<SalesDatabase>) {
  const singleRules = async (body: unknown, tenantId: string) =>
    (await opportunityRuleErrors(db, tenantId, [{ body, prefix: '' }])).details;
  const batchRules = async (body: unknown, tenantId: string) => {
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
    body: OpportunityUpdate,
    transform: validateBodyWithRules(OpportunityUpdate, singleRules),
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
        body: OpportunityCreate,
        transform: validateBodyWithRules(OpportunityCreate, singleRules),
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
        if (errors.length > 0) throw validationError(errors);
        const { enterprise_id, status, q } = query;
        return listOpportunities(db, tenantId, { enterprise_id, status, q }, request);
      },
      {
        query: OpportunityListQuery,
        transform: checkListQuery(SORTABLE, [{ name: 'enterprise_id', min: 1 }]),
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
        body: OpportunityBatch,
        transform: validateBodyWithRules(OpportunityBatch, batchRules),
        response: { 201: OpportunityBatchResponse },
        detail: { summary: 'Create up to 100 opportunities', tags: TAGS, description: 'All or nothing, errors as `data[i].field`.' },
      },
    )
    .get(
      '/v1/opportunities/:id',
      async ({ params, tenantId }) => ({ data: await getOpportunity(db, tenantId, opportunityIdOf(params.id)) }),
      {
        params: IdParams,
        response: { 200: OpportunityResponse },
        detail: { summary: 'Get an opportunity', tags: TAGS },
      },
    )
    .put(
      '/v1/opportunities/:id',
      async ({ params, body, tenantId }) => ({ data: await updateOpportunity(db, tenantId, opportunityIdOf(params.id), body) }),
      update,
    )
    .patch(
      '/v1/opportunities/:id',
      async ({ params, body, tenantId }) => ({ data: await updateOpportunity(db, tenantId, opportunityIdOf(params.id), body) }),
      update,
    )
    .delete(
      '/v1/opportunities/:id',
      async ({ params, tenantId }) => {
        await deleteOpportunity(db, tenantId, opportunityIdOf(params.id));
        return { deleted: true };
      },
      {
        params: IdParams,
        response: { 200: DeletedResponse },
        detail: { summary: 'Delete an opportunity', tags: TAGS, description: 'Its documents stay; they are detached.' },
      },
    )
    .get(
      '/internal/opportunities/:id',
      async ({ params, tenantId }) => {
        const id = opportunityIdOf(params.id);
        if (!(await opportunityExists(db, tenantId, id))) throw notFound('Opportunity');
        return { data: { id } };
      },
      { params: IdParams, response: { 200: ExistingOpportunity } },
    );
}
