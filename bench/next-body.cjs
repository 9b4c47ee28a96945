// autocannon setupRequest, loaded by its worker (workers mode takes a module path, not a function).
// Hands out `bodies` (carried on the request object) once each, shared by all connections of the worker, so
// e.g. every transfer pays a different invoice. Past the end it sends "{}", which the service rejects (a
// visible failure rather than a silent repeat).
let next = 0;
module.exports = (req) => ({ ...req, body: req.bodies[next++] ?? '{}' });
