// Loaded by autocannon's worker (workers mode takes a module path, not a function).
// A 2xx counts only if the body carries an invoice id and no GraphQL error: GraphQL answers 200 even when
// the operation failed, and createInvoice reports failures as non-success union members.
module.exports = (body) =>
  body.includes('"id":"') && !body.includes('"errors":') && !/"__typename":"(?!\w*Success")/.test(body);
