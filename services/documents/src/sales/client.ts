import type { ExistingOpportunity, ResolvedContact } from '@crm/contracts';
import { type ErrorDetail, type InternalClient, notFound, validationError } from '@crm/http';

export interface CallContext {
  tenantId: string;
  requestId: string;
}

/** The lookups documents needs from sales: contact identifiers and opportunity ids (404 when unknown, 503 when sales is down). */
export function createSalesDirectory(callSales: InternalClient) {
  return {
    /**
     * The id of the contact an `{identifier}` designates (contract §11 rule, applied by sales).
     * An identifier sales refuses as malformed (422 on `identifier`) is refused the same way here.
     */
    async resolveContact(ctx: CallContext, identifier: string): Promise<number> {
      const response = await callSales<ResolvedContact>('GET', '/internal/contacts/resolve', { ...ctx, query: { identifier } });
      if (response.status === 404) throw notFound('Contact');
      if (response.status === 422) {
        const details = (response.body as unknown as { error?: { details?: ErrorDetail[] } })?.error?.details;
        throw validationError(details?.length ? details : [{ field: 'identifier', message: 'is not a valid contact identifier' }]);
      }
      if (response.status !== 200) throw new Error(`sales answered ${response.status} to a contact lookup`);
      return response.body.data.id;
    },

    /** The opportunity's id if it exists in the tenant (the route's schema has already bounded it to 1..2147483647). */
    async requireOpportunity(ctx: CallContext, id: number): Promise<number> {
      const response = await callSales<typeof ExistingOpportunity.static>('GET', `/internal/opportunities/${id}`, ctx);
      if (response.status === 404) throw notFound('Opportunity');
      if (response.status !== 200) throw new Error(`sales answered ${response.status} to an opportunity lookup`);
      return response.body.data.id;
    },
  };
}

export type SalesDirectory = ReturnType<typeof createSalesDirectory>;
