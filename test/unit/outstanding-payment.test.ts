// What a wallet is asked to pay (payment URI, QR code): only while the invoice waits for a payment, and only the rest.
import { Prisma } from '../../generated/prisma/client.ts';
import { describe, expect, it } from 'vitest';
import { outstandingPayment } from '../../src/invoices/presenter.ts';

const invoice = (status: string, paid = '0') => ({
  status: status as never,
  paymentCurrency: 'btc',
  paymentAmount: new Prisma.Decimal('0.001'),
  paidAmount: new Prisma.Decimal(paid),
  address: { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', tag: null },
});

describe('outstandingPayment', () => {
  it('asks for the whole amount while pending, for the rest after a short payment', () => {
    expect(outstandingPayment(invoice('pending'))).toMatchObject({ currency: 'btc', amount: '0.001' });
    expect(outstandingPayment(invoice('wrong', '0.0004'))).toMatchObject({ amount: '0.0006' });
  });

  it('asks for nothing before the fill, while a payment is confirmed, once final, or when nothing is left', () => {
    for (const status of ['created', 'processing', 'done', 'closed', 'refunded']) expect(outstandingPayment(invoice(status)), status).toBeNull();
    expect(outstandingPayment(invoice('wrong', '0.001'))).toBeNull();
    expect(outstandingPayment({ ...invoice('pending'), address: null })).toBeNull();
  });
});
