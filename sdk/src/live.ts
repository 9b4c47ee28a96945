// Live invoice status over graphql-ws, resuming from the last cursor after a reconnect; ends after a final status.
import { createClient, type Client } from 'graphql-ws';

export interface LiveInvoice {
  id: string;
  status: 'CREATED' | 'PENDING' | 'PROCESSING' | 'DONE' | 'WRONG' | 'REFUNDED' | 'CLOSED';
  orderId: string | null;
  paymentDetails: { amount: string; paidAmount: string } | null;
  transactions: { txHash: string; confirmations: number; status: string }[];
}

const QUERY = `subscription($id: ID!, $after: String) { invoiceStatusChanged(id: $id, after: $after) {
  id status orderId paymentDetails { amount paidAmount } transactions { txHash confirmations status } } }`;

/**
 * Follows one invoice: `onInvoice` gets it as it stands, then after every change (status, confirmations); the
 * subscription completes after a final status (`done` resolves). A dropped connection is retried and resumes
 * from the last cursor, so no change is missed or repeated.
 */
export function followInvoice(options: {
  url: string;
  invoiceId: string;
  onInvoice: (invoice: LiveInvoice) => void;
  webSocketImpl?: unknown;
}): { done: Promise<void>; stop: () => void; client: Client } {
  const variables: { id: string; after?: string } = { id: options.invoiceId };
  const client = createClient({ url: options.url, webSocketImpl: options.webSocketImpl, retryAttempts: Infinity, shouldRetry: () => true, lazy: true });
  let stop = () => {};
  const done = new Promise<void>((resolve, reject) => {
    stop = client.subscribe<{ invoiceStatusChanged: LiveInvoice }, { cursor: string }>(
      { query: QUERY, variables },
      {
        next: ({ data, extensions }) => {
          if (extensions?.cursor) variables.after = extensions.cursor;
          if (data) options.onInvoice(data.invoiceStatusChanged);
        },
        error: reject,
        complete: resolve,
      },
    );
  });
  return { done: done.finally(() => void client.dispose()), stop: () => (stop(), void client.dispose()), client };
}
