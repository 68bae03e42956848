import { ExistingOpportunity } from '@crm/contracts';
import { listRequest } from '@crm/db';
import { Deleted, isPlainObject, jsonBody, listQuery, notFound, type RuleCheck, requestContext, throwIfInvalid } from '@crm/http';
import { exactlyOnce, type RequestWrite } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import {
  OpportunityBatch,
  OpportunityBatchResponse,
  OpportunityCreate,
  OpportunityListQuery,
  OpportunityListResponse,
  OpportunityParams,
  OpportunityResponse,
  OpportunityUpdate,
} from './model.ts';
import { OPPORTUNITY_SORTS, opportunityExists } from './repo.ts';
import { opportunityRuleErrors } from './rules.ts';
import { createOpportunities, deleteOpportunity, getOpportunity, listOpportunities, updateOpportunity } from './service.ts';

const SORT_NAMES = Object.keys(OPPORTUNITY_SORTS);
const TAGS = ['Opportunities'];

/** What the OpenAPI document says of lists (contract §22) and conditional requests (§24) on opportunities. */
const LIST_MODES = [
  'Page mode (`page`, counted: `total`, `current_page`, `last_page`) or cursor mode: send `pagination.next_cursor` as `cursor` to continue after the last item with the same sort and filters, without counting (those three are null). A cursor walk by id, name or created_at returns every opportunity that existed for the whole walk exactly once; by updated_at, one updated during the walk may come again. A cursor with another sort or filters, a malformed one, or `cursor` with `page` → 422 on `cursor`.',
  "The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode and the next cursor URL in cursor mode, with the request's `per_page`, `sort` and filters.",
].join('\n\n');
const ETAG_READ = 'The answer carries a strong `ETag`; `If-None-Match` with the current one → 304 without a body.';
const IF_MATCH =
  '`If-Match` (optional): the write happens only when it equals the current `ETag` (or is `*`), else 412 `precondition_failed` and nothing changes (no event); a 412 is not stored under an `Idempotency-Key`, so the same key may be retried with a fresh ETag.';

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
    params: OpportunityParams,
    ...jsonBody(OpportunityUpdate, singleRules),
    response: { 200: OpportunityResponse },
    detail: {
      summary: 'Update an opportunity',
      tags: TAGS,
      description: `Partial update: omitted fields are kept, \`null\` clears a nullable field. PUT and PATCH behave the same. ${IF_MATCH} The answer carries the new \`ETag\`.`,
    },
  };
  const updateHandler = ({
    params,
    body,
    tenantId,
    ifMatch,
    write,
  }: {
    params: { id: number };
    body: OpportunityUpdate;
    tenantId: string;
    ifMatch?: string;
    write: RequestWrite;
  }) => updateOpportunity(write.db, tenantId, params.id, body, ifMatch).then((data) => ({ data }));

  return new Elysia({ name: 'sales-opportunities' })
    .use(requestContext)
    .use(exactlyOnce(db))
    .post(
      '/v1/opportunities',
      async ({ body, tenantId, set, write }) => {
        const [opportunity] = await createOpportunities(write.db, tenantId, [body], () => '');
        set.status = 201;
        return { data: opportunity as NonNullable<typeof opportunity> };
      },
      {
        ...jsonBody(OpportunityCreate, singleRules),
        response: { 201: OpportunityResponse },
        detail: {
          summary: 'Create an opportunity',
          tags: TAGS,
          description:
            "`enterprise_identifier` designates a contact by id, name, e-mail or CIF; `user_email` an account user. The answer carries the opportunity's `ETag`.",
        },
      },
    )
    .get(
      '/v1/opportunities',
      async ({ query, tenantId }) => {
        const filters = { enterprise_id: query.enterprise_id, status: query.status, q: query.q };
        // A cursor is bound to the sort, these filters and updated_since: replayed with others → 422 on `cursor`.
        const { request, errors } = listRequest(query, OPPORTUNITY_SORTS, filters);
        throwIfInvalid(errors);
        return listOpportunities(db, tenantId, filters, request);
      },
      {
        ...listQuery(OpportunityListQuery, SORT_NAMES),
        response: { 200: OpportunityListResponse },
        detail: {
          summary: 'List opportunities',
          tags: TAGS,
          description: `Filters: \`enterprise_id\`, \`status\`, \`q\` (substring of the name), \`updated_since\`; \`sort\` on id, name, created_at, updated_at (\`-field\` descending, ties by id).\n\n${LIST_MODES}`,
        },
      },
    )
    .post(
      '/v1/opportunities/batch',
      async ({ body, tenantId, set, write }) => {
        const data = await createOpportunities(write.db, tenantId, body.data, (i) => `data[${i}].`);
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
      params: OpportunityParams,
      response: { 200: OpportunityResponse },
      detail: { summary: 'Get an opportunity', tags: TAGS, description: ETAG_READ },
    })
    .put('/v1/opportunities/:id', updateHandler, update)
    .patch('/v1/opportunities/:id', updateHandler, update)
    .delete(
      '/v1/opportunities/:id',
      async ({ params, tenantId, ifMatch, write }) => {
        await deleteOpportunity(write.db, tenantId, params.id, ifMatch);
        return { deleted: true };
      },
      {
        params: OpportunityParams,
        response: { 200: Deleted },
        detail: { summary: 'Delete an opportunity', tags: TAGS, description: `Its documents stay; they are detached. ${IF_MATCH}` },
      },
    )
    .get(
      '/internal/opportunities/:id',
      async ({ params: { id }, tenantId }) => {
        if (!(await opportunityExists(db, tenantId, id))) throw notFound('Opportunity');
        return { data: { id } };
      },
      { params: OpportunityParams, response: { 200: ExistingOpportunity } },
    );
}
