import type { ExistingOpportunity, ResolvedContact } from '@crm/contracts';
import { type InternalClient, notFound } from '@crm/http';

export interface CallContext {
  tenantId: string;
  requestId: string;
}

/** The sales lookups documents needs: contact identifiers and opportunity ids (404 when unknown, 503 when sales is down). */
export function createSalesDirectory(callSales: InternalClient) {
  return {
    /** The id of the contact an `{identifier}` designates (contract §11 rule, applied by sales). */
    async resolveContact(ctx: CallContext, identifier: string): Promise<number> {
      const response = await callSales<ResolvedContact>('GET', '/internal/contacts/resolve', { ...ctx, query: { identifier } });
      if (response.status === 404) throw notFound('Contact');
      if (response.status !== 200) throw new Error(`sales answered ${response.status} to a contact lookup`);
      return response.body.data.id;
    },

    /** The opportunity's id if it exists in the tenant. */
    async requireOpportunity(ctx: CallContext, id: string): Promise<number> {
      if (!/^\d{1,15}$/.test(id)) throw notFound('Opportunity');
      const response = await callSales<typeof ExistingOpportunity.static>('GET', `/internal/opportunities/${id}`, ctx);
      if (response.status === 404) throw notFound('Opportunity');
      if (response.status !== 200) throw new Error(`sales answered ${response.status} to an opportunity lookup`);
      return response.body.data.id;
    },
  };
}

export type SalesDirectory = ReturnType<typeof createSalesDirectory>;
